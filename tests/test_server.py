"""`torchdevlint server` end to end, as an editor drives it: the server runs as a subprocess and
a real LSP client (pytest-lsp, on pygls's client) speaks JSON-RPC to it over stdio. Every
expectation is checked against what the CLI reports or writes for the same file."""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

pytest.importorskip("pytest_lsp")  # (pytest-lsp needs Python 3.10+)

import pytest_lsp  # noqa: E402
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features  # noqa: E402
from pygls.protocol import default_converter  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

from conftest import ROOT, run_cli  # noqa: E402



def generate(lines: int) -> str:
    """benchmarks/generate_large.py's training script of about ``lines`` lines."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("generate_large",
                                                  ROOT / "benchmarks" / "generate_large.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate(lines)


TIMEOUT = 60  # generous: the machine running the suite may be busy


def make_client() -> LanguageClient:
    """pytest-lsp's client, keeping every publishDiagnostics (with its version) in order."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = []

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)

    def register(client: LanguageClient, params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)

    client.registrations = []
    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES,
                                   types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish,
                                   types.CLIENT_REGISTER_CAPABILITY: register})
    return client


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=[sys.executable, "-m", "torchdevlint", "server"], client_factory=make_client))
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


CAPABILITIES = types.ClientCapabilities(
    general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
    workspace=types.WorkspaceClientCapabilities(
        configuration=True,
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=True),
        workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)),
    text_document=types.TextDocumentClientCapabilities(
        synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
            version_support=True, code_description_support=True),
        code_action=types.CodeActionClientCapabilities(
            code_action_literal_support=types.ClientCodeActionLiteralOptions(
                types.ClientCodeActionKindOptions(value_set=["quickfix", "source.fixAll"])),
            is_preferred_support=True)),
    notebook_document=types.NotebookDocumentClientCapabilities(
        types.NotebookDocumentSyncClientCapabilities()),
    window=types.WindowClientCapabilities(work_done_progress=False))


async def start(client: LanguageClient, root: Path, options=None) -> types.InitializeResult:
    return await client.initialize_session(types.InitializeParams(
        capabilities=CAPABILITIES, root_uri=from_fs_path(str(root)),
        initialization_options=options,
        workspace_folders=[types.WorkspaceFolder(from_fs_path(str(root)), "root")]))


def open_file(client: LanguageClient, path: Path, text: Optional[str] = None) -> str:
    if text is None:
        text = path.read_text(encoding="utf-8")
    uri = from_fs_path(str(path))
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri, "python", 1, text)))
    return uri


def change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=version, uri=uri),
        [types.TextDocumentContentChangeWholeDocument(text)]))


async def published(client: LanguageClient, uri: str, version: Optional[int] = None,
                    after: int = 0) -> types.PublishDiagnosticsParams:
    """The first publishDiagnostics for ``uri`` (of ``version``), among those from index
    ``after`` on."""
    for _ in range(TIMEOUT * 100):
        for params in client.published[after:]:
            if params.uri == uri and (version is None or params.version == version):
                return params
        await asyncio.sleep(0.01)
    raise AssertionError(f"no diagnostics for {uri} version {version}: {client.published}")


def cli_findings(path: Path, *args: str) -> List[dict]:
    result = run_cli("--output-format", "json", "--no-cache", *args, path, cwd=path.parent)
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


def utf16(line: str, column: int) -> int:
    """A 1-based character column of ``line`` as LSP's 0-based UTF-16 position."""
    return len(line[:column - 1].encode("utf-16-le")) // 2


def expected_ranges(text: str, findings: List[dict]) -> List[tuple]:
    lines = text.splitlines()
    return sorted((f["code"], f["message"], (f["line"] - 1, utf16(lines[f["line"] - 1], f["column"])),
                   (f["end_line"] - 1, utf16(lines[f["end_line"] - 1], f["end_column"])))
                  for f in findings)


def actual_ranges(diagnostics) -> List[tuple]:
    return sorted((d.code, d.message, (d.range.start.line, d.range.start.character),
                   (d.range.end.line, d.range.end.character)) for d in diagnostics)


def offset(text: str, position: types.Position) -> int:
    lines = text.splitlines(keepends=True)
    before = "".join(lines[:position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    units, index = 0, 0
    while units < position.character:
        units += len(line[index].encode("utf-16-le")) // 2
        index += 1
    return len(before) + index


def apply(text: str, edits: List[types.TextEdit]) -> str:
    """What an editor does with a TextDocumentEdit's edits (all relative to ``text``)."""
    spans = sorted(((offset(text, e.range.start), offset(text, e.range.end), e.new_text)
                    for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def edits_for(action: types.CodeAction) -> Dict[str, types.TextDocumentEdit]:
    assert action.edit is not None and action.edit.document_changes
    return {change.text_document.uri: change for change in action.edit.document_changes}


async def code_actions(client: LanguageClient, uri: str, diagnostics, only=None):
    start = diagnostics[0].range.start if diagnostics else types.Position(0, 0)
    end = diagnostics[-1].range.end if diagnostics else types.Position(0, 0)
    return await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), types.Range(start, end),
        types.CodeActionContext(list(diagnostics), only=only))) or []


TRAINING = '''import torch
state = torch.load("weights.pt")
s = "naïve 😀"; x = torch.ones(2); x.to("cuda")
model = torch.nn.Linear(2, 2)
'''


# -- initialize, open, change -------------------------------------------------------------


@pytest.mark.asyncio
async def test_initialize_reports_its_capabilities(client: LanguageClient, tmp_path):
    result = await start(client, tmp_path)
    capabilities = result.capabilities
    assert result.server_info.name == "torchdevlint"
    sync = capabilities.text_document_sync
    assert sync.open_close and sync.change == types.TextDocumentSyncKind.Incremental and sync.save
    kinds = capabilities.code_action_provider.code_action_kinds
    assert {"quickfix", "source.fixAll.torchdevlint"} <= set(kinds)
    selector = capabilities.notebook_document_sync.notebook_selector[0]
    assert selector.notebook == "jupyter-notebook"
    assert [cell.language for cell in selector.cells] == ["python"]
    assert capabilities.position_encoding == types.PositionEncodingKind.Utf16


@pytest.mark.asyncio
async def test_open_publishes_the_cli_findings_in_utf16_ranges(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    path = tmp_path / "train.py"
    path.write_text(TRAINING, encoding="utf-8")
    uri = open_file(client, path)
    params = await published(client, uri, 1)
    findings = cli_findings(path)
    assert {f["code"] for f in findings} >= {"TDL001", "TDL002", "TDL003"}
    assert actual_ranges(params.diagnostics) == expected_ranges(TRAINING, findings)
    discarded = next(d for d in params.diagnostics if d.code == "TDL001")
    # "naïve 😀": the emoji is two UTF-16 units, one character: the column moves by one
    assert discarded.range.start.character == TRAINING.splitlines()[2].index("x.to") + 1
    assert discarded.source == "torchdevlint"
    assert discarded.severity == types.DiagnosticSeverity.Warning
    assert discarded.code_description.href.endswith("docs/rules/TDL001.md")


@pytest.mark.asyncio
async def test_a_ruff_file_exemption_silences_what_the_cli_silences(client: LanguageClient,
                                                                   tmp_path):
    """``# ruff: noqa: TDL001`` (issue 30, point 13): the server reads it as the CLI does."""
    await start(client, tmp_path)
    path = tmp_path / "exempt.py"
    text = "# ruff: noqa: TDL001\nimport torch\nx = torch.ones(1)\nx.cuda()\n"
    path.write_text(text, encoding="utf-8")
    params = await published(client, open_file(client, path), 1)
    findings = cli_findings(path)
    assert {f["code"] for f in findings} == {"TDL002"}
    assert actual_ranges(params.diagnostics) == expected_ranges(text, findings)


@pytest.mark.asyncio
async def test_an_edit_that_fixes_a_finding_removes_it(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    path = tmp_path / "train.py"
    uri = open_file(client, path, TRAINING)
    first = await published(client, uri, 1)
    assert "TDL001" in {d.code for d in first.diagnostics}
    # an incremental edit, as editors send them: `x.to(` -> `x = x.to(` on line 3
    column = utf16(TRAINING.splitlines()[2], TRAINING.splitlines()[2].index("x.to") + 2)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=2, uri=uri),
        [types.TextDocumentContentChangePartial(
            types.Range(types.Position(2, column), types.Position(2, column)), " = x")]))
    second = await published(client, uri, 2)
    assert "TDL001" not in {d.code for d in second.diagnostics}
    assert {"TDL002", "TDL003"} <= {d.code for d in second.diagnostics}


# -- code actions ---------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_quick_fix_gives_what_fix_gives(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    source = ROOT / "fixtures" / "TDL001" / "positive" / "eval_loop.py"
    path = tmp_path / "eval_loop.py"
    shutil.copy(source, path)
    text = path.read_text(encoding="utf-8")
    uri = open_file(client, path)
    diagnostics = [d for d in (await published(client, uri, 1)).diagnostics if d.code == "TDL001"]
    assert len(diagnostics) == 1
    actions = await code_actions(client, uri, diagnostics, only=["quickfix"])
    fix = next(a for a in actions if a.title.startswith("Fix TDL001"))
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    assert "unsafe" not in fix.title
    edit = edits_for(fix)[uri]
    assert edit.text_document.version == 1
    assert run_cli("--fix", "--no-cache", "--select", "TDL001", path, cwd=tmp_path).returncode == 0
    assert apply(text, edit.edits) == path.read_text(encoding="utf-8") != text


@pytest.mark.asyncio
async def test_unsafe_quick_fix_says_so(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    path = tmp_path / "appended_list.py"
    shutil.copy(ROOT / "fixtures" / "TDL006" / "positive" / "appended_list.py", path)
    text = path.read_text(encoding="utf-8")
    uri = open_file(client, path)
    diagnostics = [d for d in (await published(client, uri, 1)).diagnostics if d.code == "TDL006"]
    actions = await code_actions(client, uri, diagnostics)
    fix = next(a for a in actions if a.title.startswith("Fix TDL006"))
    assert "(unsafe)" in fix.title and not fix.is_preferred
    run_cli("--fix", "--unsafe-fixes", "--no-cache", path, cwd=tmp_path)
    assert apply(text, edits_for(fix)[uri].edits) == path.read_text(encoding="utf-8") != text


@pytest.mark.asyncio
@pytest.mark.parametrize("unsafe", [False, True])
async def test_fix_all_is_fix(client: LanguageClient, tmp_path, unsafe):
    await start(client, tmp_path, {"unsafeFixes": True} if unsafe else None)
    path = tmp_path / "model.py"
    text = (ROOT / "fixtures" / "TDL006" / "positive" / "appended_list.py").read_text() + \
        "\n\ndef more(x):\n    x.to('cuda')\n    return x\n"
    path.write_text(text, encoding="utf-8")
    uri = open_file(client, path)
    await published(client, uri, 1)
    actions = await code_actions(client, uri, [], only=["source.fixAll"])
    assert [a.kind for a in actions] == ["source.fixAll.torchdevlint"]
    fixed = apply(text, edits_for(actions[0])[uri].edits)
    run_cli("--fix", "--no-cache", *(["--unsafe-fixes"] if unsafe else []), path, cwd=tmp_path)
    assert fixed == path.read_text(encoding="utf-8") != text
    assert ("nn.ModuleList()" in fixed) == unsafe  # TDL006's fix is unsafe


@pytest.mark.asyncio
async def test_disable_for_this_line_adds_or_merges_noqa(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    path = tmp_path / "noqa.py"
    text = ('import torch\nx = torch.ones(2)\nx.to("cpu")  # noqa: E501\n'
            'y = torch.ones(2)\ny.cpu()\n')
    uri = open_file(client, path, text)
    diagnostics = [d for d in (await published(client, uri, 1)).diagnostics if d.code == "TDL001"]
    assert [d.range.start.line for d in diagnostics] == [2, 4]
    edited = []
    for diagnostic in diagnostics:
        actions = await code_actions(client, uri, [diagnostic])
        disable = [a for a in actions if a.title == "Disable TDL001 for this line"]
        assert len(disable) == 1 and disable[0].kind == types.CodeActionKind.QuickFix
        edited.append(apply(text, edits_for(disable[0])[uri].edits))
    assert edited[0].splitlines()[2] == 'x.to("cpu")  # noqa: E501, TDL001'  # merged
    assert edited[1].splitlines()[4] == "y.cpu()  # noqa: TDL001"  # added
    new_text = edited[0]
    change(client, uri, 2, new_text)
    after = await published(client, uri, 2)
    assert [d.range.start.line for d in after.diagnostics if d.code == "TDL001"] == [4]


# -- notebooks ------------------------------------------------------------------------------


NOTEBOOK_CELLS = [
    ("markdown", "# Training"),
    ("code", "import torch\nweights = torch.randn(3, 3)"),
    ("code", "%time y = 1\nweights.to('cuda')\nz = 1"),
    ("code", "weights.cpu()"),  # displayed by Jupyter: not a discarded move
]


def write_notebook(path: Path, cells) -> None:
    import nbformat
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell(s) if kind == "markdown"
                      else nbformat.v4.new_code_cell(s) for kind, s in cells]
    notebook.metadata["language_info"] = {"name": "python"}
    nbformat.write(notebook, str(path))  # (nbformat 5.0 takes no Path)


def cell_findings(params_by_cell) -> set:
    return {(cell + 1, d.range.start.line + 1, d.range.start.character + 1, d.code)
            for cell, params in params_by_cell.items() for d in params.diagnostics}


@pytest.mark.asyncio
async def test_notebook_cells_get_the_cli_findings(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    path = tmp_path / "train.ipynb"
    write_notebook(path, NOTEBOOK_CELLS)
    expected = {(f["cell"], f["line"], f["column"], f["code"]) for f in cli_findings(path)}
    assert expected == {(3, 2, 1, "TDL001"), (3, 2, 12, "TDL002")}

    notebook_uri = from_fs_path(str(path))
    cells = [f"vscode-notebook-cell:{path}#cell{i}" for i in range(len(NOTEBOOK_CELLS))]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        types.NotebookDocument(notebook_uri, "jupyter-notebook", 1, [
            types.NotebookCell(types.NotebookCellKind.Markup if kind == "markdown"
                               else types.NotebookCellKind.Code, uri)
            for (kind, _), uri in zip(NOTEBOOK_CELLS, cells)]),
        [types.TextDocumentItem(uri, "markdown" if kind == "markdown" else "python", 1, s)
         for (kind, s), uri in zip(NOTEBOOK_CELLS, cells)]))
    code_cells = {i: await published(client, cells[i]) for i in (1, 2, 3)}
    assert cell_findings(code_cells) == expected
    assert not [p for p in client.published if p.uri == cells[0]]  # markdown: not Python

    # A quick fix edits the cell it is for.
    third = code_cells[2]
    discarded = [d for d in third.diagnostics if d.code == "TDL001"]
    actions = await code_actions(client, cells[2], discarded, only=["quickfix"])
    fix = next(a for a in actions if a.title.startswith("Fix TDL001"))
    assert list(edits_for(fix)) == [cells[2]]
    assert apply(NOTEBOOK_CELLS[2][1], edits_for(fix)[cells[2]].edits) == \
        "%time y = 1\nweights = weights.to('cuda')\nz = 1"

    # The notebook is one program: editing the cell that defines `weights` changes what is
    # reported in the next one.
    edited = list(NOTEBOOK_CELLS)
    edited[1] = ("code", "import torch\nweights = [1.0, 2.0]")
    before = len(client.published)
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        types.VersionedNotebookDocumentIdentifier(version=2, uri=notebook_uri),
        types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
            text_content=[types.NotebookDocumentCellContentChanges(
                types.VersionedTextDocumentIdentifier(version=2, uri=cells[1]),
                [types.TextDocumentContentChangeWholeDocument(edited[1][1])])]))))
    after = {i: await published(client, cells[i], after=before) for i in (1, 2, 3)}
    write_notebook(path, edited)
    expected = {(f["cell"], f["line"], f["column"], f["code"]) for f in cli_findings(path)}
    assert cell_findings(after) == expected != cell_findings(code_cells)


# -- robustness -----------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_syntax_error_is_one_diagnostic_and_the_server_goes_on(client: LanguageClient,
                                                                        tmp_path):
    await start(client, tmp_path)
    broken = open_file(client, tmp_path / "broken.py", "import torch\ndef f(:\n    pass\n")
    params = await published(client, broken, 1)
    assert [(d.code, d.severity, d.range.start.line) for d in params.diagnostics] == [
        ("E999", types.DiagnosticSeverity.Error, 1)]
    good = open_file(client, tmp_path / "good.py", TRAINING)
    assert {d.code for d in (await published(client, good, 1)).diagnostics} >= {"TDL001"}


@pytest.mark.asyncio
async def test_settings_and_configuration_changes(client: LanguageClient, tmp_path):
    project = tmp_path / "project"
    (project / "generated").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[tool.torchdevlint]\nignore = ["TDL003"]\nexclude = ["generated"]\n'
        '[tool.torchdevlint.per-file-ignores]\n"tests/*" = ["TDL002"]\n')
    (project / "tests").mkdir()
    await start(client, tmp_path, {"lint": {"run": "onType"}})
    main = open_file(client, project / "train.py", TRAINING)
    assert {d.code for d in (await published(client, main, 1)).diagnostics} == {"TDL001", "TDL002"}
    test = open_file(client, project / "tests" / "t.py", TRAINING)
    assert {d.code for d in (await published(client, test, 1)).diagnostics} == {"TDL001"}
    generated = open_file(client, project / "generated" / "g.py", TRAINING)
    assert not (await published(client, generated, 1)).diagnostics

    # The configuration file changes: the open documents are linted again with it.
    (project / "pyproject.toml").write_text('[tool.torchdevlint]\nselect = ["TDL003"]\n')
    before = len(client.published)
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams([
        types.FileEvent(from_fs_path(str(project / "pyproject.toml")), types.FileChangeType.Changed)]))
    assert {d.code for d in (await published(client, main, 1, after=before)).diagnostics} == {"TDL003"}
    assert {d.code for d in (await published(client, generated, 1, after=before)).diagnostics} == {
        "TDL003"}

    # The editor's settings: on top of the file's, as --select / --ignore are.
    before = len(client.published)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        {"torchdevlint": {"select": ["TDL001", "TDL002"], "ignore": ["TDL002"]}}))
    assert {d.code for d in (await published(client, main, 1, after=before)).diagnostics} == {"TDL001"}

    # lint.run = onSave: an edit is linted when it is saved, not before. (The settings are
    # replaced as a whole: the file's `select` applies again.)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        {"torchdevlint": {"lint": {"run": "onSave"}}}))
    await asyncio.sleep(0.5)
    before = len(client.published)
    change(client, main, 2, TRAINING.replace('x.to("cuda")', 'x = x.to("cuda")'))
    await asyncio.sleep(1.0)
    assert [p for p in client.published[before:] if p.uri == main] == []
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(main)))
    assert {d.code for d in (await published(client, main, 2, after=before)).diagnostics} == {
        "TDL003"}

    # A bad setting is reported once and ignored, and linting goes on.
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        {"torchdevlint": {"select": "TDL00X!", "lint": {"run": "onType"}}}))
    for _ in range(TIMEOUT * 10):
        if client.messages:
            break
        await asyncio.sleep(0.1)
    assert "select" in client.messages[0].message
    assert client.messages[0].type == types.MessageType.Error


@pytest.mark.asyncio
async def test_a_burst_of_edits_ends_with_the_last_version_only(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    uri = open_file(client, tmp_path / "burst.py", TRAINING)
    await published(client, uri, 1)
    before = len(client.published)
    texts = {}
    for version in range(2, 52):
        # every other version has the discarded move, every third the unmapped torch.load
        text = TRAINING if version % 2 else TRAINING.replace('x.to("cuda")', 'x = x.to("cuda")')
        if version % 3 == 0:
            text = text.replace('"weights.pt")', '"weights.pt", map_location="cpu")')
        texts[version] = text
        change(client, uri, version, text)
    last = await published(client, uri, 51, after=before)
    await asyncio.sleep(1.0)  # nothing older may come after it
    versions = [p.version for p in client.published[before:] if p.uri == uri]
    assert versions[-1] == 51 and versions == sorted(versions), versions
    assert len(versions) < 50  # the burst was coalesced, not linted edit by edit
    path = tmp_path / "final.py"
    path.write_text(texts[51], encoding="utf-8")
    assert actual_ranges(last.diagnostics) == expected_ranges(texts[51], cli_findings(path))


def _children(pid: int) -> List[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        children = task / "children"
        if children.exists():
            found.extend(int(child) for child in children.read_text().split())
    return found


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
@pytest.mark.asyncio
async def test_a_slow_document_does_not_hold_up_others_and_a_dead_worker_is_reported(
        client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    large = open_file(client, tmp_path / "large.py", generate(30_000))
    await asyncio.sleep(1.0)  # its lint is under way
    small = open_file(client, tmp_path / "small.py", TRAINING)
    assert {d.code for d in (await published(client, small, 1)).diagnostics} >= {"TDL001"}
    assert not [p for p in client.published if p.uri == large]  # still being linted

    # The worker linting the large file dies: its diagnostic says so, the log too, and the
    # server goes on serving.
    server = client._server.pid
    for pid in _children(server):
        os.kill(pid, signal.SIGKILL)
    params = await published(client, large, 1)
    assert [d.code for d in params.diagnostics] == ["TDL999"]
    assert "died" in params.diagnostics[0].message
    assert any("died" in m.message and m.type == types.MessageType.Error
               for m in client.log_messages)
    change(client, small, 2, TRAINING.replace('x.to("cuda")', 'x = x.to("cuda")'))
    assert "TDL001" not in {d.code for d in (await published(client, small, 2)).diagnostics}


@pytest.mark.asyncio
async def test_shutdown_and_exit(tmp_path):
    client = make_client()
    await client.start_io(sys.executable, "-m", "torchdevlint", "server")
    await start(client, tmp_path)
    uri = open_file(client, tmp_path / "a.py", TRAINING)
    await published(client, uri, 1)
    server = client._server
    workers = _children(server.pid) if Path("/proc/self/task").exists() else []
    assert await client.shutdown_async(None) is None
    client.exit(None)
    assert await asyncio.wait_for(server.wait(), TIMEOUT) == 0
    for pid in workers:  # the worker processes are gone with it
        assert not Path(f"/proc/{pid}").exists() or \
            Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    await client.stop()


def test_without_pygls_the_command_says_what_to_install(tmp_path):
    # pygls hidden: a package of that name that is not pygls 2 (an old one, say)
    fake = tmp_path / "site"
    (fake / "pygls-1.3.0.dist-info").mkdir(parents=True)
    (fake / "pygls-1.3.0.dist-info" / "METADATA").write_text("Name: pygls\nVersion: 1.3.0\n")
    (fake / "pygls").mkdir()
    (fake / "pygls" / "__init__.py").write_text("")
    import subprocess
    result = subprocess.run([sys.executable, "-m", "torchdevlint", "server"], capture_output=True,
                            text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(fake)})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        'torchdevlint server: error: the language server needs pygls 2 (pygls 1.3.0 is '
        'installed): install the server extra: pip install ".[server]" in a checkout of '
        'torchdevlint, or pip install "torchdevlint[server] @ '
        'git+https://github.com/torchdevlint/torchdevlint"']


def test_the_linter_never_imports_pygls(tmp_path):
    path = tmp_path / "a.py"
    path.write_text(TRAINING)
    code = ("import sys; from torchdevlint.cli import main; main([sys.argv[1], '--no-cache']); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pygls', 'lsprotocol', 'cattrs')))")
    result = run_python(code, str(path))
    assert result.stdout.strip().splitlines()[-1] == "[]"


def run_python(code: str, *args: str):
    import subprocess
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


async def wait_for(client: LanguageClient, uri: str, wanted, after: int = 0):
    """The first publishDiagnostics for ``uri`` from index ``after`` on whose diagnostics
    ``wanted`` accepts (an index built in the background makes a second one)."""
    for _ in range(TIMEOUT * 100):
        for params in client.published[after:]:
            if params.uri == uri and wanted(params.diagnostics):
                return params
        await asyncio.sleep(0.01)
    raise AssertionError(f"never published as wanted for {uri}: {client.published}")


# (file, code) of what each fixture project reports with its index (tests/test_project_index.py)
PROJECT_FINDINGS = {
    "guard_across_imports": {("report.py", "TDL002")},
    "writer_provenance": {("evaluate.py", "TDL003")},
    "module_moved": {("models.py", "TDL007")},
    "placement_across_calls": {("engine.py", "TDL004"), ("metrics.py", "TDL008"),
                               ("metrics.py", "TDL011")},
    "buffer_moved": {("model.py", "TDL005")},
    "gpu_only": {("train.py", "TDL003")},
    "program_gpu_evidence": {("fused_adam.py", "TDL002")},
    # train.py calls a helper that stops without CUDA: GPU-only, silent (the summaries of the
    # index once it is ready)
    "program_stops_without_cuda": {("evaluate.py", "TDL002"), ("knn.py", "TDL002")},
    # utils.py's G and D loads follow the callers' CUDA moves (silent once the index is ready)
    "load_after_cuda_use": {("utils.py", "TDL003"), ("train.py", "TDL002"),
                            ("sample.py", "TDL002"), ("export.py", "TDL002")},
}


@pytest.mark.asyncio
@pytest.mark.parametrize("name", ["guard_across_imports", "writer_provenance", "module_moved",
                                  "placement_across_calls", "buffer_moved", "gpu_only",
                                  "program_gpu_evidence", "program_stops_without_cuda",
                                  "load_after_cuda_use"])
async def test_the_project_index_gives_the_cli_findings(client: LanguageClient, tmp_path, name):
    """Issue 27: the facts of the project's other files, as the CLI on the whole project has
    them; after a file they come from changes on disk, the open document follows."""
    root = tmp_path / name
    shutil.copytree(ROOT / "fixtures" / "projects" / name, root,
                    ignore=shutil.ignore_patterns(".torchdevlint_cache"))
    await start(client, root)
    reported = set()
    for path in sorted(root.glob("*.py")):
        expected = expected_ranges(path.read_text(), cli_findings(path))
        reported.update((path.name, code) for code, *_ in expected)
        uri = open_file(client, path)
        await wait_for(client, uri, lambda diagnostics: actual_ranges(diagnostics) == expected)
    # (the cross-file findings are among them: the CLI's on one file are the whole project's)
    assert reported == PROJECT_FINDINGS[name]
    if name != "guard_across_imports":
        return
    flags = root / "config" / "flags.py"
    flags.write_text(flags.read_text().replace("torch.cuda.is_available() and ", ""))
    train = root / "train.py"
    expected = expected_ranges(train.read_text(), cli_findings(train))
    assert [code for code, *_ in expected] == ["TDL002"]  # the flag is no guard any more
    after = len(client.published)
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent(from_fs_path(str(flags)), types.FileChangeType.Changed)]))
    await wait_for(client, from_fs_path(str(train)),
                   lambda diagnostics: actual_ranges(diagnostics) == expected, after)
