"""Finding the files to lint and linting them (the part --jobs and the cache plug into)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from torchdevlint.engine import FileResult, lint_bytes
from torchdevlint.findings import PARSER_ERROR, READ_ERROR, Finding

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


def lint_path(path: Path, rules) -> FileResult:
    """Lint one file; never raises (a failure becomes the file's diagnostic)."""
    shown = display_path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return FileResult(shown, error=Finding(shown, 1, 1, READ_ERROR,
                                               f"cannot read file: {exc.strerror or exc}"))
    try:
        return lint_bytes(data, shown, rules)
    except Exception as exc:  # a bug in torchdevlint must not take the whole run down
        result = FileResult(shown, error=Finding(
            shown, 1, 1, PARSER_ERROR,
            f"internal error while analysing this file ({type(exc).__name__}: {exc}); "
            f"please report it"))
        result.internal_error = True
        return result


def lint_files(files: Iterable[Path], rules) -> Iterator[FileResult]:
    """Results in the order of ``files``."""
    for path in files:
        yield lint_path(path, rules)
