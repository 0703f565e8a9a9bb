"""The language server's analysis, run in worker processes.

The server process only speaks LSP; every lint and fix runs here, in a process of its own, so
that a long analysis never stalls the editor, a superseded one can be stopped (the process is
killed), and a crash of LibCST on one document costs only that worker. Nothing here imports
pygls: jobs and results are plain data (pickled over the worker's standard input and output).

Jobs take a document's text as the editor holds it and go through the CLI's own entry points
(``Resolver`` for the document's configuration, ``engine.lint_source`` / ``runner.lint_data``,
``fixer.fix_data``, ``engine.attach_fixes``, ``add_noqa.add_noqa_to_line``), so the
findings, ranges, messages and fixes are the CLI's. Positions come back in the client's
position encoding (LSP: 0-based lines, columns in UTF-16 code units unless negotiated).
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import io
import json
import os
import pickle
import re
import struct
import sys
import tokenize
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Dict, List, Optional, Sequence, Tuple

from torchdevlint.findings import PARSER_ERROR, READ_ERROR, SYNTAX_ERROR, Finding, internal_error

# The server process imports this module for its data types: the linter is imported by the
# jobs, in the worker.
if TYPE_CHECKING:
    from torchdevlint.config import Overrides, Settings

# (start line, start character, end line, end character, new text): 0-based, client units.
TextEdit = Tuple[int, int, int, int, str]
# LSP's line breaks (and the linter's: positions.line_starts); str.splitlines knows more.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_HEADER = struct.Struct("!I")
NOTEBOOK_SUFFIX = ".ipynb"


# -- positions -------------------------------------------------------------------------------


def split_lines(text: str) -> List[str]:
    """``text``'s lines as LSP counts them, each with its line break."""
    return _LINE.findall(text)


class Lines:
    """One text's lines, for turning code-point positions into the client's units."""

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.lines = split_lines(text)
        self.encoding = encoding

    def units(self, prefix: str) -> int:
        if self.encoding == "utf-32" or prefix.isascii():
            return len(prefix)
        if self.encoding == "utf-8":
            return len(prefix.encode("utf-8", "surrogatepass"))
        return len(prefix.encode("utf-16-le", "surrogatepass")) // 2

    def position(self, line: int, column: int) -> Tuple[int, int]:
        """A 0-based line and code-point column, clamped into the text, in client units."""
        if line >= len(self.lines):
            if not self.lines:
                return 0, 0
            last = self.lines[-1]
            if last.endswith(("\n", "\r")):
                return len(self.lines), 0  # the empty line after a final line break
            return len(self.lines) - 1, self.units(last)
        body = self.lines[max(line, 0)].rstrip("\r\n")
        return max(line, 0), self.units(body[:max(column, 0)])

    def range_of(self, finding: Finding) -> Tuple[int, int, int, int]:
        """A finding's range (1-based line and columns, end exclusive) in client units."""
        start = self.position(finding.line - 1, finding.column - 1)
        if finding.end_line:
            end = self.position(finding.end_line - 1, finding.end_column - 1)
            if end >= start:
                return (*start, *end)
        return (*start, *start)

    def edits(self, new: str) -> List[TextEdit]:
        """The text edits that turn this text into ``new``: the changed lines found by a line
        diff, each narrowed to the characters that differ."""
        old_text = "".join(self.lines)
        if new == old_text:
            return []
        old, fresh = self.lines, split_lines(new)
        head = 0
        while head < min(len(old), len(fresh)) and old[head] == fresh[head]:
            head += 1
        tail = 0
        while tail < min(len(old), len(fresh)) - head and old[-1 - tail] == fresh[-1 - tail]:
            tail += 1
        matcher = difflib.SequenceMatcher(None, old[head:len(old) - tail],
                                          fresh[head:len(fresh) - tail])
        edits: List[TextEdit] = []
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            i1, i2, j1, j2 = i1 + head, i2 + head, j1 + head, j2 + head
            before, after = "".join(old[i1:i2]), "".join(fresh[j1:j2])
            prefix = len(os.path.commonprefix([before, after]))
            room = min(len(before), len(after)) - prefix
            suffix = len(os.path.commonprefix([before[::-1][:room], after[::-1][:room]]))
            start = self._locate(i1, before[:prefix])
            end = self._locate(i1, before[:len(before) - suffix])
            edits.append((*start, *end, after[prefix:len(after) - suffix]))
        return edits

    def _locate(self, line: int, text: str) -> Tuple[int, int]:
        """The position reached after ``text``, which starts at the start of ``line``."""
        breaks = split_lines(text)
        if not breaks:
            return line, 0
        if breaks[-1].endswith(("\n", "\r")):
            return line + len(breaks), 0
        return line + len(breaks) - 1, self.units(breaks[-1])


# -- settings --------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ClientSettings:
    """What the editor's settings add to the configuration files (as command-line flags do)."""

    select: Optional[Tuple[str, ...]] = None
    ignore: Tuple[str, ...] = ()
    unsafe_fixes: Optional[bool] = None
    # How many times the editor saw a project file saved or changed on disk: a worker that
    # saw fewer stats its project indexes again (``project_index.refresh_all``).
    project_files: int = 0

    def overrides(self) -> "Overrides":
        from torchdevlint.config import Overrides
        return Overrides(select=list(self.select) if self.select is not None else None,
                         ignore=list(self.ignore), unsafe_fixes=self.unsafe_fixes)


class Configurations:
    """The settings of any document, from the ``pyproject.toml`` files above it.

    A worker keeps its ``Resolver`` between jobs and drops it when a configuration file it
    read (or looked for) changed, so that an edited ``pyproject.toml`` applies to the next job
    even with a client that does not report file changes."""

    def __init__(self) -> None:
        self._client: Optional[ClientSettings] = None
        self._resolver = None  # a config.Resolver
        self._seen: Dict[Path, Optional[Tuple[int, int]]] = {}

    @staticmethod
    def _stamp(path: Path) -> Optional[Tuple[int, int]]:
        try:
            status = os.stat(path)
        except OSError:
            return None
        return status.st_mtime_ns, status.st_size

    def _stale(self) -> bool:
        return any(self._stamp(path) != stamp for path, stamp in self._seen.items())

    def settings(self, client: ClientSettings, path: Optional[Path]) -> Tuple[Settings, Optional[str]]:
        """The settings for ``path`` (None: a document that is not a file), and the reason the
        configuration could not be used, if it could not (then the defaults apply, with the
        client's settings where those are valid)."""
        if self._resolver is None or client != self._client or self._stale():
            self._client, self._resolver, self._seen = client, None, {}
        from torchdevlint.config import ConfigError, Resolver
        problem = None
        try:
            if self._resolver is None:
                self._resolver = Resolver(client.overrides())
            settings = (self._resolver.for_path(path) if path is not None
                        else self._resolver.default())
        except ConfigError as exc:
            problem = str(exc)
            try:
                settings = Resolver(client.overrides(), isolated=True).default()
            except ConfigError:
                settings = Resolver(isolated=True).default()
        if self._resolver is not None:
            for file in self._resolver.config_files():
                if file not in self._seen:
                    self._seen[file] = self._stamp(file)
        return settings, problem


# -- jobs ------------------------------------------------------------------------------------


@dataclasses.dataclass
class Document:
    """A job's document: a Python file's text, or a notebook's cells."""

    path: Optional[str]  # on disk (None: an unsaved document)
    shown: str  # its name in messages (an .ipynb name for a notebook)
    text: str = ""
    cells: Optional[List[Tuple[str, str]]] = None  # notebooks: (cell_type, text) in order
    encoding: str = "utf-16"

    @property
    def is_notebook(self) -> bool:
        return self.cells is not None

    def data(self) -> bytes:
        """The document as the file would be saved: a notebook as nbformat 4 JSON, a Python
        file in the encoding its coding cookie names (which the linter decodes it by)."""
        if self.is_notebook:
            return self.notebook_bytes()
        data = self.text.encode("utf-8", "surrogatepass")
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            return self.text.encode(encoding) if encoding not in ("utf-8", "utf-8-sig") else data
        except (SyntaxError, LookupError, UnicodeEncodeError):
            return data  # the linter reports the bad cookie or encoding (E902), as the CLI does

    def notebook_bytes(self) -> bytes:
        """The cells as an nbformat 4 document, which the CLI's notebook reader takes."""
        cells = [{"cell_type": kind, "metadata": {}, "source": text,
                  **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                 for kind, text in self.cells or ()]
        return json.dumps({"cells": cells, "metadata": {"language_info": {"name": "python"}},
                           "nbformat": 4, "nbformat_minor": 5}).encode("utf-8")


def _excluded(settings: Settings, path: Optional[Path]) -> bool:
    """Does the configuration exclude the file, or a folder above it in the project? (What
    ``--force-exclude`` does: an editor names every file it opens.)"""
    if path is None:
        return False
    from torchdevlint.config import absolute
    from torchdevlint.runner import force_excluded
    return force_excluded(settings, absolute(path))


def _rules(settings: Settings, document: Document):
    return settings.rules_for(Path(document.path) if document.path else Path(document.shown))


def _lint(document: Document, settings: Settings, parser=None):
    """The CLI's lint of the document's contents (tree kept, for fixes). ``parser``: the
    document's ``Reparser`` (diagnostics), or None for a full parse (fixes: their edits are
    built from the tree, which must be the parser's own in every detail)."""
    from torchdevlint.runner import guarded, lint_data
    rules = _rules(settings, document)
    return guarded(lambda: lint_data(document.data(), document.shown, rules,
                                     settings.target_version, settings.torch_version, parser),
                   document.shown)


# Documents whose last tree a worker keeps, to parse only what the next edit changes: the
# ones being typed in. Larger texts are not kept (a tree costs ~500 bytes per byte of source;
# files this large are split into parts anyway).
REPARSED_DOCUMENTS = 4
REPARSED_MAX_CHARS = 256 * 1024


class Worker:
    """Runs jobs. Between them it keeps, per recently edited document, one syntax tree (that of
    its last lint, replaced by the next one), and nothing else: each job's analysis is freed
    before the next one starts."""

    def __init__(self) -> None:
        self.project_files = 0  # ClientSettings.project_files last seen
        self.configurations = Configurations()
        self.reparsers: "OrderedDict[str, Any]" = OrderedDict()

    def reparser(self, document: Document):
        """The document's ``Reparser`` (the most recently used ones are kept)."""
        from torchdevlint.server.reparse import Reparser
        key = document.path or document.shown
        if len(document.text or "") > REPARSED_MAX_CHARS:
            self.reparsers.pop(key, None)
            return None
        parser = self.reparsers.pop(key, None) or Reparser()
        self.reparsers[key] = parser
        while len(self.reparsers) > REPARSED_DOCUMENTS:
            self.reparsers.popitem(last=False)
        return parser

    def run(self, kind: str, document: Document, client: ClientSettings) -> Dict[str, Any]:
        from torchdevlint import project_index
        if client.project_files != self.project_files:
            self.project_files = client.project_files
            project_index.refresh_all()
        path = Path(document.path) if document.path else None
        settings, problem = self.configurations.settings(client, path)
        reply: Dict[str, Any] = {"config_error": problem}
        if _excluded(settings, path):
            reply["excluded"] = True
            return reply
        reply["excluded"] = False
        from torchdevlint.engine import gc_paused
        with gc_paused():  # (see gc_paused: the tree is freed before collections resume)
            if kind == "lint":
                reply.update(self.lint(document, settings))
            elif kind == "actions":
                reply.update(self.actions(document, settings))
            elif kind == "fix_all":
                reply.update(self.fix_all(document, settings))
            else:
                raise ValueError(f"unknown job {kind!r}")
        return reply

    # -- diagnostics ---------------------------------------------------------------------

    def lint(self, document: Document, settings: Settings) -> Dict[str, Any]:
        from torchdevlint import project_index
        asked = project_index.pending_asks()
        parser = self.reparser(document)
        result = _lint(document, settings, parser.parse if parser is not None else None)
        result.drop_tree()
        found = list(result.findings) + ([result.error] if result.error is not None else [])
        lines: Dict[Optional[int], Lines] = {}
        return {"diagnostics": [self._diagnostic(f, document, lines) for f in found],
                "internal_error": result.error.message if result.internal_error else None,
                # the lint asked for the project's index while it was being built: the
                # editor asks again soon
                "index_pending": project_index.pending_asks() != asked}

    def _diagnostic(self, finding: Finding, document: Document,
                    split: Dict[Optional[int], Lines]) -> Dict[str, Any]:
        """``split``: each text's lines, split once per job (per finding, the lines of a
        5,000-line file with 400 findings took a quarter of its lint)."""
        cell = None
        text = document.text
        if document.is_notebook:
            cell = (finding.cell or 1) - 1
            text = document.cells[cell][1] if 0 <= cell < len(document.cells) else ""
        lines = split.get(cell)
        if lines is None:
            lines = split[cell] = Lines(text, document.encoding)
        error = finding.code in (SYNTAX_ERROR, READ_ERROR, PARSER_ERROR)
        return {"cell": cell, "range": lines.range_of(finding), "code": finding.code,
                "message": finding.message, "error": error}

    # -- code actions --------------------------------------------------------------------

    def actions(self, document: Document, settings: Settings) -> Dict[str, Any]:
        """For each finding: its fix (as the edits of the file, or of each changed cell) and
        the edits of its "Disable ... for this line" comment."""
        from torchdevlint.applier import apply_edits
        from torchdevlint.engine import attach_fixes
        result = _lint(document, settings)
        if result.error is not None:
            result.drop_tree()
            return {"actions": []}
        attach_fixes(result, settings.fix_options(), _rules(settings, document))
        notebook = result.notebook
        program = notebook.program if notebook is not None else document.text
        findings = result.findings
        result.drop_tree()
        actions = []
        split: Dict[Optional[int], Lines] = {}
        for finding in findings:
            action: Dict[str, Any] = self._diagnostic(finding, document, split)
            action.update(fix=None, noqa=None)
            fix = finding.available_fix
            if fix is not None:
                changes = self._changes(document, notebook, apply_edits(program, list(fix.edits)))
                if changes:
                    action["fix"] = {"description": fix.description, "safe": fix.safe,
                                     "changes": changes}
            line = finding.line
            if notebook is not None:  # the finding's line in the program
                line += next(c.first_line for c in notebook.cells if c.number == finding.cell) - 1
            action["noqa"] = self._changes(document, notebook, _with_noqa(program, line,
                                                                          finding.code))
            actions.append(action)
        return {"actions": actions}

    def fix_all(self, document: Document, settings: Settings) -> Dict[str, Any]:
        """The edits ``--fix`` makes (safe fixes; unsafe ones too with unsafe-fixes)."""
        from torchdevlint.fixer import fix_data
        result = fix_data(document.data(), document.shown, _rules(settings, document),
                          settings.fix_options())
        if result.error is not None or not result.changed:
            return {"changes": {}}
        if not document.is_notebook:
            return {"changes": {None: Lines(document.text, document.encoding).edits(result.fixed)}}
        return {"changes": self._cell_changes(document, _cell_sources(json.loads(result.fixed)))}

    def _changes(self, document: Document, notebook, program: Optional[str]
                 ) -> Dict[Optional[int], List[TextEdit]]:
        """The edits that turn the document into ``program`` (a notebook's: per cell)."""
        if program is None:
            return {}
        if notebook is None:
            edits = Lines(document.text, document.encoding).edits(program)
            return {None: edits} if edits else {}
        from torchdevlint.notebook import Notebook, NotebookError
        fresh = Notebook(notebook.text, copy.deepcopy(notebook.document))
        try:
            _, changed = fresh.with_program(program)
        except NotebookError:
            return {}
        if not changed:
            return {}
        return self._cell_changes(document, _cell_sources(fresh.document))

    def _cell_changes(self, document: Document, sources: Sequence[str]
                      ) -> Dict[Optional[int], List[TextEdit]]:
        changes: Dict[Optional[int], List[TextEdit]] = {}
        for index, ((_, old), new) in enumerate(zip(document.cells or (), sources)):
            edits = Lines(old, document.encoding).edits(new)
            if edits:
                changes[index] = edits
        return changes


def _cell_sources(notebook: Dict[str, Any]) -> List[str]:
    return ["".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            for cell in notebook["cells"]]


def _with_noqa(program: str, line: int, code: str) -> Optional[str]:
    """``program`` with the ``# noqa`` that silences ``code`` on ``line`` (None: none can)."""
    from torchdevlint.add_noqa import NoqaError, add_noqa_to_line
    try:
        new = add_noqa_to_line(program, line, code)
    except NoqaError:
        return None
    return new if new != program else None


# -- the process -----------------------------------------------------------------------------


def _read(stream: BinaryIO, size: int) -> Optional[bytes]:
    chunks = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def receive(stream: BinaryIO) -> Optional[Any]:
    header = _read(stream, _HEADER.size)
    if header is None:
        return None
    body = _read(stream, _HEADER.unpack(header)[0])
    return None if body is None else pickle.loads(body)


def frame(message: Any) -> bytes:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(body)) + body


def main() -> int:
    """Serve jobs from standard input until it closes: ``(kind, document, client settings)``
    in, ``(True, reply)`` or ``(False, error message)`` out."""
    channel_in, channel_out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the channel
    from torchdevlint import project_index
    project_index.configure(background=True)  # an editor never waits for the index
    worker = Worker()
    while True:
        job = receive(channel_in)
        if job is None:
            return 0
        kind, document, client = job
        try:
            answer: Tuple[bool, Any] = (True, worker.run(kind, document, client))
        except Exception as exc:  # a bug: reported to the editor's log, the worker goes on
            answer = (False, internal_error(document.shown, "analysing", exc).message)
        channel_out.write(frame(answer))
        channel_out.flush()


if __name__ == "__main__":
    sys.exit(main())
