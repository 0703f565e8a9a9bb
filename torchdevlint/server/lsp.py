"""The Language Server Protocol side of ``torchdevlint server`` (pygls).

This process only keeps the open documents and speaks LSP; the analysis runs in worker
processes (``pool``, ``worker``). Per document at most one lint runs at a time: an edit of
an idle document starts one at once, the next edits (after a short debounce) mark the
document dirty while it runs, so that it is linted again as soon as that run ends; a lint
that has run for a while when it is superseded is cancelled. A result is published only if
the document (and the settings) are still those it was computed for: stale results are
dropped, never shown.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import re
import sys
import traceback
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument, Workspace

from torchdevlint import __version__
from torchdevlint.docs import rule_url
from torchdevlint.findings import PARSER_ERROR
from torchdevlint.server.pool import Cancelled, JobFailed, Pool, WorkerDied
from torchdevlint.server.worker import NOTEBOOK_SUFFIX, ClientSettings, Document, split_lines

NAME = "torchdevlint"
# Quiet time after an edit of a document that is being linted (or was edited a moment ago)
# before it counts: an editor's burst of notifications makes one more lint, not one each.
# An edit of an idle document is linted at once: waiting added 25 ms to every keystroke's
# diagnostics (a sixth of a 500-line file's), and a burst's first lint costs nothing extra
# when the machine is otherwise idle.
DEBOUNCE_S = 0.025
# A superseded lint that has run this long is cancelled (its worker killed and replaced);
# a shorter one is left to finish, which costs less than starting a worker.
CANCEL_AFTER_S = 0.5
# How soon a document linted before its project's index was ready is linted again.
INDEX_POLL_S = 0.5
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.{NAME}"
NOTEBOOK_FIX_ALL = f"notebook.{FIX_ALL}"
RUN_ON_TYPE, RUN_ON_SAVE = "onType", "onSave"
_CODES = re.compile(r"^[A-Za-z]+[0-9]*$")

logger = logging.getLogger(__name__)


# -- documents -------------------------------------------------------------------------------


class LspTextDocument(TextDocument):
    """pygls's document with LSP's line breaks (\\n, \\r\\n, \\r): ``str.splitlines`` also
    breaks at form feeds and U+2028, which would misplace every edit after one."""

    @property
    def lines(self) -> Sequence[str]:
        return tuple(split_lines(self.source))


class LspWorkspace(Workspace):
    def _create_text_document(self, doc_uri, source=None, version=None, language_id=None):
        return LspTextDocument(doc_uri, source=source, version=version, language_id=language_id,
                               sync_kind=self._sync_kind, position_codec=self._position_codec)


@dataclass
class Snapshot:
    """A document as a job sees it, and what identifies that state."""

    key: str  # the text document's or the notebook's URI
    document: Document
    signature: tuple  # versions (and the settings generation): equal means "still current"
    cell_uris: List[str] = field(default_factory=list)  # notebooks: the job's cells, in order
    versions: List[Optional[int]] = field(default_factory=list)  # of the cells, or the document


@dataclass
class _State:
    timer: Optional[asyncio.TimerHandle] = None
    task: Optional[asyncio.Task] = None
    dirty: bool = False
    linted: Optional[tuple] = None  # the signature last linted (or being linted)
    cells: List[str] = field(default_factory=list)  # notebooks: cells last published to
    actions: Optional[Tuple[tuple, asyncio.Future]] = None  # (signature, per-finding actions)


# -- settings --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    """The editor's settings: ``initializationOptions`` and ``workspace/didChangeConfiguration``
    (``{"select": [...], "ignore": [...], "unsafeFixes": bool, "lint": {"run": ...}}``, also
    accepted under a ``torchdevlint`` or ``settings`` key)."""

    client: ClientSettings = ClientSettings()
    run: str = RUN_ON_TYPE

    @classmethod
    def parse(cls, raw: Any, problems: List[str]) -> "Options":
        settings = _unwrap(raw)
        if not isinstance(settings, dict):
            if settings is not None:
                problems.append(f"settings must be an object, not {type(settings).__name__}")
            return cls()
        lint = settings.get("lint") if isinstance(settings.get("lint"), dict) else {}
        select = _codes(settings.get("select", lint.get("select")), "select", problems)
        ignore = _codes(settings.get("ignore", lint.get("ignore")), "ignore", problems)
        unsafe = settings.get("unsafeFixes")
        if unsafe is not None and not isinstance(unsafe, bool):
            problems.append(f"`unsafeFixes` must be true or false, not {unsafe!r}")
            unsafe = None
        run = lint.get("run", settings.get("lint.run", RUN_ON_TYPE))
        if run not in (RUN_ON_TYPE, RUN_ON_SAVE):
            problems.append(f"`lint.run` must be {RUN_ON_TYPE!r} or {RUN_ON_SAVE!r}, not {run!r}")
            run = RUN_ON_TYPE
        return cls(ClientSettings(select, tuple(ignore or ()), unsafe), run)


def _unwrap(raw: Any) -> Any:
    for key in (NAME, "settings"):
        if isinstance(raw, dict) and isinstance(raw.get(key), dict):
            raw = raw[key]
    return raw


def _codes(value: Any, key: str, problems: List[str]) -> Optional[Tuple[str, ...]]:
    if value is None:
        return None
    if isinstance(value, str):
        value = [part for part in value.split(",")]
    if not isinstance(value, list) or not all(isinstance(code, str) for code in value):
        problems.append(f"`{key}` must be a list of rule codes, not {value!r}")
        return None
    codes = tuple(code.strip() for code in value if code.strip())
    bad = [code for code in codes if not _CODES.match(code)]
    if bad:
        problems.append(f"`{key}`: not rule codes: {', '.join(map(repr, bad))}")
        return None
    return codes


# -- the server ------------------------------------------------------------------------------


class TorchdevlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            NAME, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[types.NotebookDocumentFilterWithCells(
                    cells=[types.NotebookCellLanguage(language="python")],
                    notebook="jupyter-notebook")],
                save=True))
        self.options = Options()
        self.generation = 0  # bumped when settings or configuration files change
        self.project_files = 0  # Python files seen saved or changed (``project_changed``)
        self.pool = Pool()
        self.states: Dict[str, _State] = {}
        self._reported: set = set()  # configuration problems already shown
        self.shut_down = False

    # -- messages ------------------------------------------------------------------------

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_log_message(types.LogMessageParams(kind, f"{NAME}: {message}"))

    def problem(self, message: str) -> None:
        """A configuration problem, shown once (and logged)."""
        if message in self._reported:
            return
        self._reported.add(message)
        self.log(message, types.MessageType.Error)
        self.window_show_message(types.ShowMessageParams(types.MessageType.Error,
                                                         f"{NAME}: {message}"))

    def apply_options(self, raw: Any) -> None:
        problems: List[str] = []
        options = Options.parse(raw, problems)
        for problem in problems:
            self.problem(f"ignoring a setting: {problem}")
        if options != self.options:
            self.options = options
            self.configuration_changed()

    def client_settings(self):
        """The editor's settings as a job carries them, with the count of project files seen
        changing (so that a worker refreshes its project index)."""
        return dataclasses.replace(self.options.client, project_files=self.project_files)

    def project_changed(self) -> None:
        """A Python file was saved or changed on disk: what other files say of it may have
        changed, so every open document is linted again with the refreshed index."""
        self.project_files += 1
        self.generation += 1
        for key in list(self.states):
            self.schedule(key, 0)

    def configuration_changed(self) -> None:
        self.generation += 1
        self._reported.clear()
        for key in list(self.states):
            self.schedule(key, 0)

    # -- documents -----------------------------------------------------------------------

    def encoding(self) -> str:
        encoding = self.workspace.position_encoding
        return str(getattr(encoding, "value", encoding) or "utf-16")

    def snapshot(self, key: str) -> Optional[Snapshot]:
        """The document's current state, or None when it is closed or not Python."""
        workspace = self.workspace
        notebook = workspace.get_notebook_document(notebook_uri=key)
        if notebook is not None:
            cells, uris, versions = [], [], []
            for cell in notebook.cells:
                document = workspace.text_documents.get(unquote(cell.document))
                if cell.kind != types.NotebookCellKind.Code or document is None:
                    continue  # markdown, or a cell in another language (not synced)
                cells.append(("code", document.source))
                uris.append(cell.document)
                versions.append(document.version)
            path = _path(key)
            shown = path or key
            if not shown.endswith(NOTEBOOK_SUFFIX):
                shown += NOTEBOOK_SUFFIX  # the linter knows notebooks by their name
            job = Document(path, shown, cells=cells, encoding=self.encoding())
            return Snapshot(key, job, (notebook.version, tuple(zip(uris, versions)),
                                       self.generation), uris, versions)
        document = workspace.text_documents.get(unquote(key))
        if document is None or not _is_python(document):
            return None
        path = _path(key)
        job = Document(path, path or key, text=document.source, encoding=self.encoding())
        return Snapshot(key, job, (document.version, self.generation), [key], [document.version])

    def current(self, snapshot: Snapshot) -> bool:
        now = self.snapshot(snapshot.key)
        return now is not None and now.signature == snapshot.signature

    def key_of(self, uri: str) -> Tuple[str, Optional[int]]:
        """The document a URI belongs to (a cell: its notebook), and the cell's index."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        if notebook is None:
            return uri, None
        snapshot = self.snapshot(notebook.uri)
        cells = snapshot.cell_uris if snapshot is not None else []
        return notebook.uri, next((i for i, cell in enumerate(cells)
                                   if unquote(cell) == unquote(uri)), None)

    # -- linting -------------------------------------------------------------------------

    def schedule(self, key: str, delay: float = DEBOUNCE_S) -> None:
        state = self.states.setdefault(key, _State())
        if state.timer is not None:
            state.timer.cancel()
        state.timer = asyncio.get_running_loop().call_later(delay, self._kick, key)

    def idle(self, key: str) -> bool:
        """Whether no lint of the document runs or waits."""
        state = self.states.get(key)
        return state is None or (state.timer is None and (state.task is None or state.task.done()))

    def edited(self, key: str) -> None:
        """An edit: linted at once if the document is idle, else after the debounce."""
        self.schedule(key, 0 if self.idle(key) else DEBOUNCE_S)

    def _kick(self, key: str) -> None:
        state = self.states.get(key)
        if state is None:
            return
        state.timer = None
        snapshot = self.snapshot(key)
        if snapshot is None or snapshot.signature == state.linted:
            return
        if state.task is not None and not state.task.done():
            state.dirty = True  # linted again when the current run ends ...
            self.pool.cancel(key, CANCEL_AFTER_S)  # ... which ends now if it is a long one
            return
        state.task = asyncio.ensure_future(self._lint_loop(key))

    async def _lint_loop(self, key: str) -> None:
        try:
            await self._lint_runs(key)
        except Exception as exc:  # a bug in the server: logged, the server goes on
            self.log(f"{key}: {_describe(exc)}", types.MessageType.Error)

    async def _lint_runs(self, key: str) -> None:
        while True:
            state = self.states.get(key)
            snapshot = self.snapshot(key)
            if state is None or snapshot is None:
                return
            state.dirty, state.linted = False, snapshot.signature
            try:
                reply = await self.pool.run(key, ("lint", snapshot.document,
                                                  self.client_settings()))
            except Cancelled:
                state.linted = None
                continue
            except WorkerDied as exc:
                reason = f"the process analysing this file died ({exc}); please report it"
                self.log(f"{key}: {reason}", types.MessageType.Error)
                reply = {"excluded": False, "config_error": None, "diagnostics": [{
                    "cell": 0 if snapshot.document.is_notebook else None,
                    "range": (0, 0, 0, 0), "code": PARSER_ERROR, "error": True,
                    "message": f"internal error: {reason}"}]}
            except JobFailed as exc:  # a bug in the analysis: logged, the server goes on
                self.log(f"{key}: {exc}", types.MessageType.Error)
                return
            if self.current(snapshot):
                self.publish(snapshot, reply)
                if reply.get("index_pending"):
                    # linted without the project's index, which a worker is building: again
                    # once it may be ready, with the facts of the project's other files
                    state.linted = None
                    self.schedule(key, INDEX_POLL_S)
            if not state.dirty and self.current(snapshot):
                return

    def publish(self, snapshot: Snapshot, reply: Dict[str, Any]) -> None:
        if reply.get("config_error"):
            self.problem(f"{reply['config_error']} (the defaults apply)")
        if reply.get("internal_error"):
            self.log(f"{snapshot.key}: {reply['internal_error']}", types.MessageType.Error)
        by_cell: Dict[Optional[int], List[types.Diagnostic]] = {}
        if not reply.get("excluded"):
            for item in reply.get("diagnostics", ()):
                by_cell.setdefault(item["cell"], []).append(_diagnostic(item))
        if not snapshot.document.is_notebook:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                snapshot.key, by_cell.get(None, []), snapshot.versions[0]))
            return
        state = self.states.get(snapshot.key)
        gone = [uri for uri in (state.cells if state else ()) if uri not in snapshot.cell_uris]
        for uri in gone:  # cells deleted, or no longer Python: their diagnostics go too
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))
        for index, uri in enumerate(snapshot.cell_uris):
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri, by_cell.get(index, []), snapshot.versions[index]))
        if state is not None:
            state.cells = list(snapshot.cell_uris)

    def close(self, key: str, uris: Iterable[str]) -> None:
        state = self.states.pop(key, None)
        if state is not None:
            if state.timer is not None:
                state.timer.cancel()
            self.pool.cancel(key, CANCEL_AFTER_S)  # a shorter run ends unpublished
        for uri in {*uris, *(state.cells if state else ())}:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    # -- code actions --------------------------------------------------------------------

    async def finding_actions(self, snapshot: Snapshot) -> List[Dict[str, Any]]:
        """Each finding's fix and noqa edits, computed once per version of the document."""
        state = self.states.setdefault(snapshot.key, _State())
        stale = state.actions is None or state.actions[0] != snapshot.signature
        if not stale and state.actions[1].done() and state.actions[1].exception() is not None:
            stale = True  # a job that failed (a worker that died) is tried again
        if stale:
            job = ("actions", snapshot.document, self.client_settings())
            state.actions = (snapshot.signature,
                             asyncio.ensure_future(self.pool.run(f"{snapshot.key}#actions", job)))
        reply = await asyncio.shield(state.actions[1])
        return reply.get("actions", []) if not reply.get("excluded") else []

    async def fix_all(self, snapshot: Snapshot) -> Dict[Optional[int], list]:
        reply = await self.pool.run(f"{snapshot.key}#fix", ("fix_all", snapshot.document,
                                                           self.client_settings()))
        return {} if reply.get("excluded") else reply.get("changes", {})

    def workspace_edit(self, snapshot: Snapshot, changes: Dict[Optional[int], list],
                       only_cell: Optional[int] = None) -> Optional[types.WorkspaceEdit]:
        edits = []
        for cell, items in sorted(changes.items(), key=lambda item: item[0] or 0):
            if only_cell is not None and cell != only_cell:
                continue
            index = cell or 0
            edits.append(types.TextDocumentEdit(
                types.OptionalVersionedTextDocumentIdentifier(snapshot.cell_uris[index],
                                                              snapshot.versions[index]),
                [types.TextEdit(_range(item[:4]), item[4]) for item in items]))
        return types.WorkspaceEdit(document_changes=edits) if edits else None


# -- conversions -----------------------------------------------------------------------------


def _path(uri: str) -> Optional[str]:
    return to_fs_path(uri) if uri.startswith("file:") else None


def _is_python(document: TextDocument) -> bool:
    if document.language_id:
        return document.language_id == "python"
    return document.uri.endswith((".py", ".pyi"))


def _range(values: Sequence[int]) -> types.Range:
    line, character, end_line, end_character = values
    return types.Range(types.Position(line, character), types.Position(end_line, end_character))


def _diagnostic(item: Dict[str, Any]) -> types.Diagnostic:
    code = item["code"]
    has_page = code.startswith("TDL") and code != PARSER_ERROR
    return types.Diagnostic(
        range=_range(item["range"]), message=item["message"], code=code, source=NAME,
        severity=types.DiagnosticSeverity.Error if item["error"] else types.DiagnosticSeverity.Warning,
        code_description=types.CodeDescription(href=rule_url(code)) if has_page else None)


def _describe(exc: BaseException) -> str:
    return f"internal error ({type(exc).__name__}: {exc}); please report it\n" + \
        "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def _wanted(only: Optional[Sequence[str]], kind: str) -> bool:
    """Does a request for the kinds ``only`` (None: every kind) ask for actions of ``kind``?
    Kinds are hierarchical: ``source`` asks for ``source.fixAll.torchdevlint``."""
    if not only:
        return True
    return any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


def _starts_at(diagnostic: types.Diagnostic, action: Dict[str, Any]) -> bool:
    start = diagnostic.range.start
    return (start.line, start.character) == tuple(action["range"][:2])


def _overlaps(request: types.Range, action: Dict[str, Any]) -> bool:
    line, _, end_line, _ = action["range"]
    return request.start.line <= end_line and line <= request.end.line


# -- handlers --------------------------------------------------------------------------------


def create_server() -> TorchdevlintServer:
    server = TorchdevlintServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: TorchdevlintServer, params: types.InitializeParams) -> None:
        # Documents with LSP's line breaks (see LspTextDocument); pygls made the workspace
        # just before this handler, with no document in it yet.
        plain = ls.workspace
        ls.protocol._workspace = LspWorkspace(plain.root_uri, types.TextDocumentSyncKind.Incremental,
                                              list(plain.folders.values()),
                                              plain.position_encoding)
        ls.apply_options(params.initialization_options)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: TorchdevlintServer, params: types.InitializedParams) -> None:
        ls.pool.warm()
        capabilities = ls.client_capabilities.workspace
        watch = capabilities and capabilities.did_change_watched_files
        if watch and watch.dynamic_registration:
            try:
                await ls.client_register_capability_async(types.RegistrationParams([
                    types.Registration(f"{NAME}-pyproject", types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                       types.DidChangeWatchedFilesRegistrationOptions([
                                           types.FileSystemWatcher("**/pyproject.toml"),
                                           types.FileSystemWatcher("**/*.py")]))]))
            except Exception as exc:  # then an edited pyproject.toml applies from the next edit
                ls.log(f"could not watch pyproject.toml files: {exc}", types.MessageType.Warning)
        if capabilities and capabilities.configuration:
            await _pull_configuration(ls)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: TorchdevlintServer, params: None) -> None:
        ls.shut_down = True
        for key in list(ls.states):
            state = ls.states.pop(key)
            if state.timer is not None:
                state.timer.cancel()
        await ls.pool.close()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TorchdevlintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TorchdevlintServer, params: types.DidChangeTextDocumentParams) -> None:
        if ls.options.run == RUN_ON_TYPE:
            ls.edited(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: TorchdevlintServer, params: types.DidSaveTextDocumentParams) -> None:
        if params.text_document.uri.endswith("pyproject.toml"):
            ls.configuration_changed()
        elif params.text_document.uri.endswith((".py", ".ipynb")):
            ls.project_changed()
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TorchdevlintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri, [params.text_document.uri])

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: TorchdevlintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: TorchdevlintServer, params: types.DidChangeNotebookDocumentParams) -> None:
        structure = params.change.cells.structure if params.change.cells else None
        if ls.options.run == RUN_ON_TYPE or structure is not None:
            ls.edited(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(ls: TorchdevlintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: TorchdevlintServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.close(params.notebook_document.uri, [cell.uri for cell in params.cell_text_documents])

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: TorchdevlintServer,
                                       params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if settings in (None, {}) or (isinstance(settings, dict) and not _unwrap(settings)):
            capabilities = ls.client_capabilities.workspace
            if capabilities and capabilities.configuration:
                await _pull_configuration(ls)  # the pull model: the change says only "ask"
            return
        ls.apply_options(settings)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: TorchdevlintServer,
                                 params: types.DidChangeWatchedFilesParams) -> None:
        if any(change.uri.endswith("pyproject.toml") for change in params.changes):
            ls.configuration_changed()
        elif any(change.uri.endswith((".py", ".ipynb")) for change in params.changes):
            ls.project_changed()

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL, NOTEBOOK_FIX_ALL]))
    async def code_action(ls: TorchdevlintServer, params: types.CodeActionParams
                          ) -> Optional[List[types.CodeAction]]:
        try:
            return await _code_actions(ls, params)
        except (Cancelled, WorkerDied):
            return None
        except JobFailed as exc:
            ls.log(f"{params.text_document.uri}: code actions: {exc}", types.MessageType.Error)
            return None
        except Exception as exc:  # a bug in the server: logged, the request gets nothing
            ls.log(f"{params.text_document.uri}: code actions: {_describe(exc)}",
                   types.MessageType.Error)
            return None

    return server


async def _pull_configuration(ls: TorchdevlintServer) -> None:
    try:
        values = await ls.workspace_configuration_async(types.ConfigurationParams(
            [types.ConfigurationItem(section=NAME)]))
    except Exception as exc:  # a client that answers with an error keeps the settings
        ls.log(f"could not read the settings: {exc}", types.MessageType.Warning)
        return
    if values and isinstance(values[0], dict) and values[0]:  # (no settings: keep ours)
        ls.apply_options(values[0])


async def _code_actions(ls: TorchdevlintServer, params: types.CodeActionParams
                        ) -> Optional[List[types.CodeAction]]:
    key, cell = ls.key_of(params.text_document.uri)
    snapshot = ls.snapshot(key)
    if snapshot is None:
        return None
    only = params.context.only
    actions: List[types.CodeAction] = []
    if _wanted(only, types.CodeActionKind.QuickFix):
        actions.extend(await _quick_fixes(ls, snapshot, cell, params))
    notebook_kind = snapshot.document.is_notebook and only and _wanted(only, NOTEBOOK_FIX_ALL)
    if _wanted(only, FIX_ALL) or notebook_kind:
        changes = await ls.fix_all(snapshot)
        kind = NOTEBOOK_FIX_ALL if notebook_kind and not _wanted(only, FIX_ALL) else FIX_ALL
        # (a notebook's per-cell request fixes that cell; the notebook-wide one every cell)
        edit = ls.workspace_edit(snapshot, changes,
                                 only_cell=cell if kind == FIX_ALL and cell is not None else None)
        if edit is not None and ls.current(snapshot):
            actions.append(types.CodeAction(f"{NAME}: Fix all auto-fixable problems", kind=kind,
                                            edit=edit))
    return actions


async def _quick_fixes(ls: TorchdevlintServer, snapshot: Snapshot, cell: Optional[int],
                       params: types.CodeActionParams) -> List[types.CodeAction]:
    ours = [d for d in params.context.diagnostics if d.source == NAME and d.code]
    if not ours and not params.context.diagnostics:
        pass  # a client that sends no diagnostics: the findings in the range are used
    elif not ours:
        return []
    actions = [a for a in await ls.finding_actions(snapshot) if a["cell"] == cell]
    if not ls.current(snapshot):
        return []
    pairs: List[Tuple[Dict[str, Any], types.Diagnostic]] = []
    if ours:
        for diagnostic in ours:
            pairs.extend((action, diagnostic) for action in actions
                         if action["code"] == diagnostic.code and _starts_at(diagnostic, action))
    else:
        for action in actions:
            if _overlaps(params.range, action):
                pairs.append((action, _diagnostic({**action, "message": action["code"],
                                                   "error": False})))
    fixes, silencers = [], []
    seen = set()
    for action, diagnostic in pairs:
        code = action["code"]
        fix = action["fix"]
        if fix is not None:
            unsafe = "" if fix["safe"] else " (unsafe)"
            edit = ls.workspace_edit(snapshot, fix["changes"])
            if edit is not None:
                fixes.append(types.CodeAction(
                    f"Fix {code}{unsafe}: {fix['description']}", kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic], edit=edit, is_preferred=fix["safe"]))
        noqa = action["noqa"]
        line_key = (code, action["range"][0])
        if noqa and line_key not in seen:
            seen.add(line_key)
            edit = ls.workspace_edit(snapshot, noqa)
            if edit is not None:
                silencers.append(types.CodeAction(
                    f"Disable {code} for this line", kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic], edit=edit))
    return fixes + silencers


def serve() -> int:
    """Serve on standard input and output until ``exit``; the exit status is LSP's: 0 after a
    ``shutdown`` request, else 1 (the client went away, or exited without one)."""
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    server = create_server()
    server.start_io()
    if sys.stdout.closed:  # pygls closes it on exit: nothing is left to flush
        sys.stdout = open(os.devnull, "w")
    return 0 if server.shut_down else 1
