"""The result cache: an unchanged file is not parsed again.

An entry is keyed by the file's bytes and by everything else that decides its result: the
torchdevlint version and code, the selected rules, the Python version (syntax errors and
their messages) and the LibCST version (what parses). Entries store findings without the
path (two copies of a file share one entry). A finding's fix is stored as reports need it
(safety, description, edits in rows and columns, ``fixes.locate``), built whatever the
configuration says, which narrows it when it is reported; ``--fix`` never reads results from
here for a file it rewrites.

One small JSON file per entry, written atomically (temporary file + rename), so concurrent
runs never see half an entry; an entry that cannot be read or understood is a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

from torchdevlint import __version__
from torchdevlint.atomicio import replace_file
from torchdevlint.findings import Finding
from torchdevlint.fixes.model import EditLocation, Fix
from torchdevlint.syntax import libcst_version

CACHE_DIR_NAME = ".torchdevlint_cache"
_FORMAT = 2
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by torchdevlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
_ROOT_MARKERS = ("pyproject.toml", ".git")


def project_root(paths: Iterable[str], cwd: Optional[Path] = None) -> Path:
    """The nearest directory holding pyproject.toml or .git above all ``paths``, else cwd."""
    cwd = (cwd or Path.cwd()).resolve()
    absolute = [(cwd / p).resolve() for p in paths] or [cwd]
    try:
        common = Path(os.path.commonpath([str(p) for p in absolute]))
    except ValueError:  # different drives on Windows
        return cwd
    if not common.is_dir():
        common = common.parent
    for directory in (common, *common.parents):
        if any((directory / marker).exists() for marker in _ROOT_MARKERS):
            return directory
    return cwd


def _code_fingerprint() -> str:
    """Size and mtime of torchdevlint's own modules: an edited checkout invalidates entries
    even when the version number has not changed."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        try:
            stat = path.stat()
        except OSError:
            continue
        digest.update(f"{path.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()


def _libcst_version() -> str:
    # (from its metadata: a warm run does not import LibCST; without metadata, the code
    # fingerprint still applies)
    return libcst_version()


class Cache:
    """Picklable (plain strings), so that worker processes read and write it directly."""

    def __init__(self, root: Path, rule_codes: Sequence[str], options: str = "",
                 directory: Optional[Path] = None) -> None:
        """The cache under ``root`` (``.torchdevlint_cache/``), or in ``directory`` (as
        ``--cache-dir`` names it)."""
        salt = json.dumps([_FORMAT, __version__, _code_fingerprint(), sys.version,
                           _libcst_version(), sorted(rule_codes), options])
        self.base = str(Path(directory) if directory is not None else Path(root) / CACHE_DIR_NAME)
        self.directory = os.path.join(self.base, hashlib.sha256(salt.encode()).hexdigest()[:20])
        self._prepared = False

    def prepare(self) -> bool:
        """Create the directory with its CACHEDIR.TAG and .gitignore; False if impossible."""
        try:
            os.makedirs(self.directory, exist_ok=True)
            for name, text in (("CACHEDIR.TAG", _CACHEDIR_TAG), (".gitignore", "*\n")):
                target = os.path.join(self.base, name)
                if not os.path.exists(target):
                    _write_atomic(target, text)
        except OSError:
            return False
        self._prepared = True
        return True

    @staticmethod
    def key(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    def _entry(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key)

    def get(self, key: str, path: str):
        """(findings, error) for the file's content, or None on a miss."""
        try:
            with open(self._entry(key), encoding="utf-8") as handle:
                entry = json.load(handle)
            findings = [_finding(path, item) for item in entry["findings"]]
            error = _finding(path, entry["error"]) if entry["error"] is not None else None
        except (OSError, ValueError, TypeError, KeyError, IndexError):
            return None  # absent, truncated or from something else: lint the file again
        return findings, error

    def put(self, key: str, findings: Sequence[Finding], error: Optional[Finding]) -> None:
        entry = {
            "findings": [_fields(f) for f in findings],
            "error": _fields(error) if error is not None else None,
        }
        target = self._entry(key)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            _write_atomic(target, json.dumps(entry, separators=(",", ":")))
        except OSError:
            pass  # a read-only or full disk costs speed, never a result


_FIELD_TYPES = (int, int, str, str, int, int, (int, type(None)), (list, type(None)))
_EDIT_TYPES = (str, int, int, int, int, (int, type(None)))


def _finding(path: str, item) -> Finding:
    if not _typed(item, _FIELD_TYPES):
        raise ValueError("malformed cache entry")
    line, column, code, message, end_line, end_column, cell, fix = item
    return Finding(path, line, column, code, message, end_line, end_column, cell=cell,
                   available_fix=_fix(code, fix) if fix is not None else None)


def _fix(code: str, item) -> Fix:
    safe, description, edits = item
    if not isinstance(safe, bool) or not isinstance(description, str) or \
            not all(_typed(edit, _EDIT_TYPES) for edit in edits):
        raise ValueError("malformed cache entry")
    return Fix(code, safe, description, (), located=tuple(EditLocation(*edit) for edit in edits))


def _typed(item, types) -> bool:
    return len(item) == len(types) and all(
        isinstance(value, kind) and type(value) is not bool for value, kind in zip(item, types))


def _fields(finding: Finding) -> list:
    fix = finding.available_fix
    return [finding.line, finding.column, finding.code, finding.message, finding.end_line,
            finding.end_column, finding.cell,
            None if fix is None else [fix.safe, fix.description, [
                [e.content, e.row, e.column, e.end_row, e.end_column, e.cell]
                for e in fix.located]]]


def _write_atomic(target: str, text: str) -> None:
    replace_file(target, text.encode("utf-8"))


def cache_maker(root: Path, directory: Optional[Path] = None
                ) -> Callable[[Sequence[type]], Optional[Cache]]:
    """What gives a run the cache of each rule set (``runner.lint_with_settings``'s
    ``make_cache``): under ``root``, or in ``directory``; None where it cannot be written
    (the run then lints without one)."""
    def make_cache(rules: Sequence[type]) -> Optional[Cache]:
        cache = Cache(root, [rule.code for rule in rules], directory=directory)
        return cache if cache.prepare() else None
    return make_cache
