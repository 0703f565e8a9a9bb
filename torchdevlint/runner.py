"""Finding the files to lint and linting them (the part --jobs and the cache plug into)."""

from __future__ import annotations

import dataclasses
import functools
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Callable, Dict, Iterator, Optional, Sequence, Set

from torchdevlint import torch_version as torch_versions
from torchdevlint.cache import Cache
from torchdevlint.config import Resolver, Settings, absolute
from torchdevlint.engine import FileResult, gc_paused, lint_bytes
from torchdevlint.findings import PARSER_ERROR, READ_ERROR, Finding, internal_error, unreadable
from torchdevlint.notebook import SUFFIX as NOTEBOOK_SUFFIX, NotebookError, is_python_notebook, \
    parse_notebook
from torchdevlint.parallel import run_per_file

DIRECTORY_SUFFIXES = (".py", ".pyi", NOTEBOOK_SUFFIX)


class UsageError(Exception):
    """A problem with how torchdevlint was invoked (exit code 2)."""


class GitIgnored:
    """The files and directories git ignores under a directory, asked from git once per walk.

    ``git ls-files --others --ignored --exclude-standard --directory`` honours .gitignore files,
    .git/info/exclude and the global excludes file, and names a wholly ignored directory once
    instead of listing it. Outside a git work tree (or without git) nothing is ignored.
    """

    def __init__(self, top: Path) -> None:
        self.paths: Set[Path] = set()
        try:
            listing = subprocess.run(
                ["git", "-C", str(top), "ls-files", "-z", "--others", "--ignored",
                 "--exclude-standard", "--directory"],
                capture_output=True, check=False, timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            return
        for entry in listing.decode("utf-8", "surrogateescape").split("\0"):
            if entry:
                self.paths.add(top / entry.rstrip("/"))

    def __contains__(self, path: Path) -> bool:
        return path in self.paths


def force_excluded(settings: Settings, path: Path) -> bool:
    """--force-exclude: is a path named on the command line, or a folder above it (inside the
    project), excluded?"""
    if settings.is_excluded(path):
        return True
    if settings.root not in path.parents:
        return False
    for candidate in path.parents:
        if candidate == settings.root:
            return False
        if settings.is_excluded(candidate):
            return True
    return False


def iter_python_files(paths: Sequence[str], resolver: Optional[Resolver] = None,
                      warn: Optional[Callable[[str], None]] = None) -> Iterator[Path]:
    """Files to lint, in a stable order. A path that does not exist, or a directory named
    here that cannot be listed, is yielded as is: reading it gives its E902 diagnostic
    (``findings.unreadable``) and the run goes on, as in ruff and flake8.

    Directories are searched for *.py, *.pyi and *.ipynb, skipping what the applicable
    configuration excludes and (with respect-gitignore) what git ignores. Files named
    explicitly are always linted unless force-exclude is on. A directory inside the tree that
    cannot be read is skipped with one warning naming it (``warn``, default: a line on
    standard error), as ruff does; the warning alone does not change the exit code.
    """
    resolver = resolver or Resolver(isolated=True)
    warn = warn or _warn
    for raw in paths:
        path = Path(raw)
        full = absolute(path)
        try:
            if not path.exists():
                yield path
                continue
            if path.is_dir():
                os.scandir(path).close()  # can it be listed (its configuration read)?
            settings = resolver.for_path(full)
        except OSError:
            # (a path below a directory that cannot be searched, or one that cannot be listed)
            settings = resolver.for_directory(full.parent)
            if not (settings.force_exclude and force_excluded(settings, full)):
                yield path
            continue
        if settings.force_exclude and force_excluded(settings, full):
            continue
        if path.is_file():
            yield path
            continue
        ignored = GitIgnored(full) if settings.respect_gitignore else None

        def skipped(error: OSError) -> None:
            warn(f"cannot read directory {display_path(Path(error.filename or path))}: "
                 f"{error.strerror or error}; skipped")

        for root, dirs, files in os.walk(path, onerror=skipped):
            directory = absolute(Path(root))
            settings = resolver.for_directory(directory)
            dirs[:] = sorted(
                d for d in dirs
                if not settings.is_excluded(directory / d)
                and not (ignored and directory / d in ignored))
            for name in sorted(files):
                if not name.endswith(DIRECTORY_SUFFIXES):
                    continue
                file = directory / name
                if settings.is_excluded(file) or (ignored and file in ignored):
                    continue
                yield Path(root) / name


def _warn(message: str) -> None:
    print(f"torchdevlint: warning: {message}", file=sys.stderr)


def display_path(path: Path) -> str:
    text = str(path)
    return text[2:] if text.startswith("./") else text


def lint_data(data: bytes, shown: str, rules, target=None,
              torch_version=torch_versions.DEFAULT, parser=None,
              apply_noqa: bool = True) -> FileResult:
    """Lint a file's contents; notebooks (by their .ipynb name) are linted as one program.
    ``target``: the Python version whose syntax the file must be (None: the newest);
    ``torch_version``: the torch version messages and fixes write code for; ``parser``: what
    parses the text (``engine.lint_source``); ``apply_noqa=False``: ``# noqa`` comments
    silence nothing (``--ignore-noqa``)."""
    if not shown.endswith(NOTEBOOK_SUFFIX):
        return lint_bytes(data, shown, rules, target=target, torch_version=torch_version,
                          parser=parser, apply_noqa=apply_noqa)
    try:
        notebook = parse_notebook(data)
    except NotebookError as exc:
        return FileResult(shown, error=Finding(shown, 1, 1, READ_ERROR, str(exc)))
    if not is_python_notebook(notebook):
        return FileResult(shown)
    result = lint_bytes(notebook.program.encode("utf-8"), shown, rules, target=target,
                        torch_version=torch_version, parser=parser, apply_noqa=apply_noqa)
    result.notebook = notebook
    result.findings = notebook.map_findings(result.findings)
    if result.error is not None:
        result.error = notebook.to_cells(result.error)
    return result


def lint_path(path: Path, rules, cache: Optional[Cache] = None, target=None,
              torch_version=torch_versions.DEFAULT,
              fixes: bool = False, cached_only: bool = False,
              apply_noqa: bool = True) -> Optional[FileResult]:
    """Lint one file; never raises (a failure becomes the file's diagnostic).

    With a cache, a file whose content was linted before is answered from it (no parse;
    the result then has no ``module``). With ``fixes``, and always with a cache, findings
    carry every fix their plans build, placed in rows and columns (``fixes.locate``): the
    configuration narrows them when they are reported. ``cached_only``: None instead of
    linting a file the cache does not answer.
    """
    shown = display_path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return FileResult(shown, error=unreadable(shown, exc))
    key = None
    if cache is not None:
        # Notebooks and modules with the same bytes lint differently: the suffix is in the key.
        # The target version decides what is a syntax error, the torch version what a
        # message proposes and a fix writes: they are in the key too.
        # So does whether ``# noqa`` comments count (--ignore-noqa).
        key = cache.key(data + b"\0" + path.suffix.encode() + b"\0" + repr(target).encode()
                        + b"\0" + repr(torch_version).encode()
                        + (b"" if apply_noqa else b"\0ignore-noqa")
                        + b"\0" + _project_key(path).encode())
        hit = cache.get(key, shown)
        if hit is not None:
            return FileResult(shown, findings=hit[0], error=hit[1])
    if cached_only:
        return None
    result = guarded(lambda: lint_data(data, shown, rules, target, torch_version,
                                       apply_noqa=apply_noqa), shown)
    if (fixes or key is not None) and any(f.fix is not None for f in result.findings):
        from torchdevlint.engine import attach_located_fixes
        attach_located_fixes(result, _parsed_text(data, result))
    if key is not None and not result.internal_error:  # an internal error is retried next run
        cache.put(key, result.findings, result.error)
    return result


def _project_key(path: Path) -> str:
    """What the file's findings depend on in the project's other files (a flag imported from
    there, a checkpoint written there): a finding cached with one is stale once they change."""
    from torchdevlint.project_index import view_for
    view = view_for(str(path))
    return view.dependency_key() if view is not None else ""


def _parsed_text(data: bytes, result: FileResult) -> Optional[str]:
    """The text ``lint_data`` parsed (a notebook's program, else the decoded file)."""
    from torchdevlint.source import SourceError, decode_source
    if result.notebook is not None:
        return result.notebook.program
    try:
        return decode_source(data).text
    except SourceError:
        return None


def guarded(lint: Callable[[], FileResult], shown: str) -> FileResult:
    try:
        return lint()
    except Exception as exc:  # a bug in torchdevlint must not take the whole run down
        result = FileResult(shown, error=internal_error(shown, "analysing", exc))
        result.internal_error = True
        return result


def _lint_in_worker(path: Path, rules, cache: Optional[Cache], fix_options=None,
                    target=None, torch_version=torch_versions.DEFAULT,
                    cached_only: bool = False, apply_noqa: bool = True) -> Optional[FileResult]:
    """``lint_path`` that returns only plain data (no tree), for worker processes and the
    serial loop alike. With ``fix_options`` the findings carry their fixes (plain edits) as
    those options allow them, else none. The tree is freed before collections resume (see
    ``gc_paused``)."""
    with gc_paused():
        result = lint_path(path, rules, cache, target, torch_version,
                           fixes=fix_options is not None, cached_only=cached_only,
                           apply_noqa=apply_noqa)
        if result is None:
            return None
        if any(f.available_fix is not None for f in result.findings):
            if fix_options is not None:
                from torchdevlint.fixes.locate import resolve
                result.findings = resolve(result.findings, fix_options)
            else:  # (a cached result): the caller asked for none
                result.findings = [dataclasses.replace(f, available_fix=None)
                                   for f in result.findings]
        # plans hold syntax nodes: they never leave the process that made them
        result.findings = [dataclasses.replace(f, fix=None) if f.fix is not None else f
                           for f in result.findings]
        result.drop_tree()
    return result


def _worker_crashed(path: Path, reason: str) -> FileResult:
    shown = display_path(path)
    result = FileResult(shown, error=Finding(
        shown, 1, 1, PARSER_ERROR,
        f"internal error: the process analysing this file died ({reason}); please report it"))
    result.internal_error = True
    return result


def lint_files(files: Sequence[Path], rules, jobs: int = 1, cache: Optional[Cache] = None,
               fix_options=None, target=None,
               torch_version=torch_versions.DEFAULT,
               apply_noqa: bool = True) -> Iterator[FileResult]:
    """Results in the order of ``files``, streamed as they are ready.

    With ``jobs > 1`` files are linted in worker processes, else in this one; either way the
    results carry no ``module``, and their findings carry resolved fixes when ``fix_options``
    is given, else none.
    """
    files = list(files)
    worker = functools.partial(_lint_in_worker, rules=rules, cache=cache, fix_options=fix_options,
                               target=target, torch_version=torch_version,
                               apply_noqa=apply_noqa)
    if jobs <= 1 or len(files) < 2:
        for path in files:
            yield worker(path)
        return
    answered = {}
    if cache is not None:
        # The cache answers here, the workers lint the rest: a run with every file cached
        # starts no process (a pool costs more than reading the cache).
        for index, path in enumerate(files):
            result = worker(path, cached_only=True)
            if result is not None:
                answered[index] = result
    linted = run_per_file(worker, [path for index, path in enumerate(files)
                                   if index not in answered], jobs, on_crash=_worker_crashed)
    for index in range(len(files)):
        yield answered.pop(index) if index in answered else next(linted)


def lint_with_settings(files: Sequence[Path], resolver: Resolver, jobs: int = 1,
                       make_cache: Optional[Callable[[Sequence[type]], Optional[Cache]]] = None,
                       fix_options_for: Optional[Callable[[Settings], object]] = None,
                       apply_noqa: bool = True) -> Iterator[FileResult]:
    """Lint each file with the rules its configuration (and per-file-ignores) gives it.

    Files are grouped by settings (one group in the usual case) so that ``lint_files`` sees
    long runs; results come group by group, each group in file order. ``apply_noqa=False``:
    ``# noqa`` comments silence nothing (``--ignore-noqa``). Findings of rules the
    configuration makes unfixable lose their fix, as in ruff. Each rule set gets its own
    cache (the rules are part of what a cached result means).
    """
    from torchdevlint import project_index
    project_index.configure(jobs=jobs)
    if make_cache is not None or jobs > 1:
        # Each project's index, built (or read) once, before any worker: the cache keys each
        # file by what it depends on in the others, and workers should not each build it.
        # Otherwise (one process, no cache) it is built when a rule first asks the project,
        # for the projects where one does: linting torch's nn, optim, utils/data and
        # distributions, summarising all 253 files up front cost 1.0 s of 3.6 s CPU, and
        # no rule asked.
        roots = set()
        for path in files:
            root = project_index.root_of_path(str(path))
            if root not in roots:
                roots.add(root)
                project_index.index_for(str(path))
    groups: Dict[tuple, list] = {}
    settings_of: Dict[tuple, Settings] = {}
    for path in files:
        settings = resolver.for_directory(absolute(path).parent)
        key = (settings.rules_for(path), settings.fixable, settings.target_version,
               settings.torch_version)
        groups.setdefault(key, []).append(path)
        settings_of.setdefault(key, settings)
    for (rules, fixable, target, torch_version), group in groups.items():
        cache = make_cache(rules) if make_cache is not None else None
        settings = settings_of[(rules, fixable, target, torch_version)]
        fix_options = fix_options_for(settings) if fix_options_for else None
        for result in lint_files(group, rules, jobs, cache, fix_options, target, torch_version,
                                 apply_noqa):
            if any(f.available_fix is not None and f.code not in fixable for f in result.findings):
                result.findings = [f if f.code in fixable else replace(f, available_fix=None)
                                   for f in result.findings]
            yield result
