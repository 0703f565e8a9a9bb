"""Finding the files to lint and linting them (the part --jobs and the cache plug into)."""

from __future__ import annotations

import dataclasses
import functools
import os
from pathlib import Path
from typing import Iterator, Optional, Sequence

from torchdevlint.cache import Cache
from torchdevlint.engine import FileResult, lint_bytes
from torchdevlint.findings import PARSER_ERROR, READ_ERROR, Finding
from torchdevlint.parallel import run_per_file

# Directories never entered when recursing (ruff's defaults); files named explicitly are linted.
DEFAULT_EXCLUDES = frozenset(
    """
    .bzr .direnv .eggs .git .git-rewrite .hg .ipynb_checkpoints .mypy_cache .nox .pants.d
    .pyenv .pytest_cache .pytype .ruff_cache .svn .tox .venv .vscode __pypackages__ _build
    buck-out build dist node_modules site-packages venv __pycache__ .torchdevlint_cache
    """.split()
)
DIRECTORY_SUFFIXES = (".py",)


class UsageError(Exception):
    """A problem with how torchdevlint was invoked (exit code 2)."""


def iter_python_files(paths: Sequence[str]) -> Iterator[Path]:
    """Files to lint, in a stable order; raises UsageError for a path that does not exist."""
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            yield path
        elif path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs
                                 if d not in DEFAULT_EXCLUDES and not d.endswith(".egg-info"))
                for name in sorted(files):
                    if name.endswith(DIRECTORY_SUFFIXES):
                        yield Path(root) / name
        else:
            raise UsageError(f"{raw}: no such file or directory")


def display_path(path: Path) -> str:
    text = str(path)
    return text[2:] if text.startswith("./") else text


def lint_path(path: Path, rules, cache: Optional[Cache] = None) -> FileResult:
    """Lint one file; never raises (a failure becomes the file's diagnostic).

    With a cache, a file whose content was linted before is answered from it (no parse;
    the result then has no ``module`` and no fixes).
    """
    shown = display_path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return FileResult(shown, error=Finding(shown, 1, 1, READ_ERROR,
                                               f"cannot read file: {exc.strerror or exc}"))
    key = None
    if cache is not None:
        key = cache.key(data)
        hit = cache.get(key, shown)
        if hit is not None:
            return FileResult(shown, findings=hit[0], error=hit[1])
    try:
        result = lint_bytes(data, shown, rules)
    except Exception as exc:  # a bug in torchdevlint must not take the whole run down
        result = FileResult(shown, error=Finding(
            shown, 1, 1, PARSER_ERROR,
            f"internal error while analysing this file ({type(exc).__name__}: {exc}); "
            f"please report it"))
        result.internal_error = True
        return result  # not cached: the next run tries again
    if key is not None:
        cache.put(key, result.findings, result.error)
    return result


def _lint_in_worker(path: Path, rules, cache: Optional[Cache]) -> FileResult:
    """``lint_path`` for a worker process: only plain data goes back (no tree, no fixes)."""
    result = lint_path(path, rules, cache)
    result.module = None
    result.findings = [dataclasses.replace(f, fix=None) if f.fix is not None else f
                       for f in result.findings]
    return result


def _worker_crashed(path: Path, reason: str) -> FileResult:
    shown = display_path(path)
    result = FileResult(shown, error=Finding(
        shown, 1, 1, PARSER_ERROR,
        f"internal error: the process analysing this file died ({reason}); please report it"))
    result.internal_error = True
    return result


def lint_files(files: Sequence[Path], rules, jobs: int = 1,
               cache: Optional[Cache] = None) -> Iterator[FileResult]:
    """Results in the order of ``files``, streamed as they are ready.

    With ``jobs > 1`` files are linted in worker processes and results carry no ``module``
    and no fixes; with one job (in this process) they keep both.
    """
    files = list(files)
    if jobs <= 1 or len(files) < 2:
        for path in files:
            yield lint_path(path, rules, cache)
        return
    worker = functools.partial(_lint_in_worker, rules=rules, cache=cache)
    yield from run_per_file(worker, files, jobs, on_crash=_worker_crashed)
