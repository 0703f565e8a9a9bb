"""``[tool.torchdevlint]`` in pyproject.toml, merged with command-line overrides, as ruff does it.

The keys that choose the findings may also sit in ``[tool.torchdevlint.lint]``, as ruff's do
in ``[tool.ruff.lint]`` (``LINT_KEYS``); an unknown key gets a hint (the table it belongs in,
or the key it looks like).

Discovery: every linted file uses the closest ``pyproject.toml`` above it that has a
``[tool.torchdevlint]`` table (files in one directory share it); ``--config PATH`` makes one file
apply to everything and ``--isolated`` ignores them all. Paths and globs in a configuration file
are relative to the directory holding it; those given on the command line to the current
directory.

Rule selection follows ruff: the configuration file and then the command line are applied in
turn; a ``select`` replaces what came before while ``extend-select`` / ``ignore`` adjust it, and
within one layer a more specific code (``TDL001``) beats a less specific one (``TDL``), with
``ignore`` winning a tie. Opt-in rules (``Rule.default_enabled = False``, e.g. TDL009) are off by
default and stay off under prefix selectors (``TDL``, ``TDL0``, ``ALL``): only a selector naming
their exact code turns them on.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from torchdevlint import syntax
from torchdevlint import torch_version as torch_versions
from torchdevlint.project import rules_for_location
from torchdevlint.rules.registry import ALL_RULES, OPT_IN_CODES, RULES_BY_CODE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

TABLE = ("tool", "torchdevlint")

# Directories and files never entered when recursing (ruff's defaults). Files named explicitly on
# the command line are still linted unless force-exclude is on.
DEFAULT_EXCLUDE: Tuple[str, ...] = tuple(
    """
    .bzr .direnv .eggs .git .git-rewrite .hg .ipynb_checkpoints .mypy_cache .nox .pants.d
    .pyenv .pytest_cache .pytype .ruff_cache .svn .tox .venv .vscode __pypackages__ _build
    buck-out build dist node_modules site-packages venv __pycache__ .torchdevlint_cache
    *.egg-info
    """.split()
)

# key -> expected type, for validation and for the documentation test.
CODE_LIST_KEYS = ("select", "extend-select", "ignore", "extend-ignore", "fixable", "unfixable")
GLOB_LIST_KEYS = ("exclude", "extend-exclude")
BOOL_KEYS = ("respect-gitignore", "force-exclude", "unsafe-fixes", "require-accelerator", "fix")
TABLE_KEYS = ("per-file-ignores", "extend-per-file-ignores")
STRING_KEYS = ("target-version", "torch-version")
KNOWN_KEYS = (*CODE_LIST_KEYS, *GLOB_LIST_KEYS, *BOOL_KEYS, *TABLE_KEYS, *STRING_KEYS)
# ruff keeps what decides the findings under [tool.ruff.lint]; those keys may sit in
# [tool.torchdevlint.lint] too (or in [tool.torchdevlint], as ruff still accepts them).
LINT_TABLE = "lint"
LINT_KEYS = (*CODE_LIST_KEYS, *TABLE_KEYS, "require-accelerator")


class ConfigError(Exception):
    """An invalid configuration (exit code 2); ``str(err)`` names the file and the problem."""


# --- code selectors -------------------------------------------------------------------------


def _check_codes(codes: Iterable[str], where: str) -> List[str]:
    """Selectors as codes: a code prefix, ``ALL``, or a rule's name (``unmoved-batch``), which
    selects that rule as its exact code does."""
    normalized = []
    unknown = []
    for code in codes:
        code = code.strip()
        code = _CODES_BY_NAME.get(code.lower(), code.upper())
        if not code:
            continue
        if code != "ALL" and not any(known.startswith(code) for known in RULES_BY_CODE):
            unknown.append(code)
        normalized.append(code)
    if unknown:
        raise ConfigError(f"{where}: unknown rule code{'s' if len(unknown) > 1 else ''} "
                          f"{', '.join(map(repr, unknown))} (known: {', '.join(RULES_BY_CODE)}, "
                          "or a rule's name: see --list-rules)")
    return normalized


_CODES_BY_NAME = {rule.name: rule.code for rule in ALL_RULES}


def _specificity(selector: str) -> int:
    return 0 if selector == "ALL" else len(selector)


def _rules_of(selector: str) -> List[str]:
    return [code for code in RULES_BY_CODE if selector == "ALL" or code.startswith(selector)]


def _selected_by(selector: str, opt_in: bool = True) -> List[str]:
    """The codes a select/extend-select ``selector`` turns on: an opt-in rule only when the
    selector is its exact code (``opt_in=False``: every rule it matches, for ``fixable``)."""
    return [code for code in _rules_of(selector)
            if not opt_in or code not in OPT_IN_CODES or code == selector]


@dataclass(frozen=True)
class RuleSelection:
    """One layer of rule choices (a configuration file, or the command line)."""

    select: Optional[Tuple[str, ...]] = None  # None: keep what earlier layers chose
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()


def resolve_codes(layers: Sequence[RuleSelection], default: Sequence[str] = ("ALL",),
                  opt_in: bool = True) -> frozenset:
    """The enabled codes after applying ``layers`` in order (ruff's algorithm). ``opt_in``:
    opt-in rules are chosen only by their exact code (False for ``fixable``, where every rule
    is fixable unless excluded)."""
    enabled = {code for selector in default for code in _selected_by(selector, opt_in)}
    carryover_ignores: Tuple[str, ...] = ()
    for layer in layers:
        updates: Dict[str, bool] = {}
        ignores = (*layer.ignore, *carryover_ignores)
        carryover_ignores = ()
        for specificity in sorted({_specificity(s) for s in (*(layer.select or ()),
                                                             *layer.extend_select, *ignores)}):
            for selector in (*(layer.select or ()), *layer.extend_select):
                if _specificity(selector) == specificity:
                    updates.update(dict.fromkeys(_selected_by(selector, opt_in), True))
            for selector in ignores:
                if _specificity(selector) == specificity:
                    updates.update(dict.fromkeys(_rules_of(selector), False))
        if layer.select is not None:
            enabled = {code for code, on in updates.items() if on}
            # `select = []` with an ignore list means "the ignores still apply to what comes next".
            if not layer.select and not layer.extend_select and layer.ignore:
                carryover_ignores = layer.ignore
        else:
            for code, on in updates.items():
                (enabled.add if on else enabled.discard)(code)
    return frozenset(enabled)


def select_rules(select: Iterable[str] = ("ALL",), ignore: Iterable[str] = ()) -> Tuple[type, ...]:
    """The rules that ``--select``/``--ignore`` prefixes alone would enable (no configuration
    file): the programmatic shorthand, with the same algorithm and checks as the CLI."""
    codes = resolve_codes([RuleSelection(select=tuple(_check_codes(select, "select")),
                                         ignore=tuple(_check_codes(ignore, "ignore")))])
    return tuple(rule for rule in ALL_RULES if rule.code in codes)


# --- globs ----------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def _glob_regex(pattern: str) -> "re.Pattern[str]":
    """gitignore-style: ``*`` and ``?`` stay within one path component, ``**`` crosses them."""
    out = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = pattern[i + 1:end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out) + r"\Z")


@dataclass(frozen=True)
class Glob:
    """A path pattern anchored at ``root``; a pattern without ``/`` also matches a file name."""

    pattern: str
    root: str  # absolute, posix

    @property
    def absolute(self) -> str:
        if self.pattern.startswith("/") or re.match(r"[A-Za-z]:/", self.pattern):
            return self.pattern
        base = self.root.rstrip("/")
        pattern = self.pattern[2:] if self.pattern.startswith("./") else self.pattern
        return f"{base}/{pattern}"

    @cached_property
    def _regexes(self) -> "Tuple[Optional[re.Pattern[str]], re.Pattern[str]]":
        # (once per glob: every file and folder of a walk meets every exclude glob)
        bare = self.pattern.rstrip("/")
        return (_glob_regex(bare) if "/" not in bare else None,
                _glob_regex(self.absolute.rstrip("/")))

    def matches(self, path: str, name: str) -> bool:
        """``path``: absolute posix path; ``name``: its last component."""
        by_name, by_path = self._regexes
        if by_name is not None and by_name.match(name):
            return True
        return bool(by_path.match(path))


def _posix(path: Path) -> str:
    return path.as_posix()


def absolute(path: Path) -> Path:
    return Path(os.path.abspath(path))


# --- settings -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PerFileIgnore:
    glob: Glob
    negated: bool
    codes: Tuple[str, ...]

    def applies_to(self, path: str, name: str) -> bool:
        return self.glob.matches(path, name) != self.negated


# The origin of a value that nothing set.
DEFAULT_ORIGIN = "default"


@dataclass(frozen=True)
class Settings:
    """Everything that decides how one file is linted."""

    root: Path  # the configuration file's directory (or the current directory without one)
    config_path: Optional[Path] = None
    enabled: frozenset = frozenset(RULES_BY_CODE) - OPT_IN_CODES
    per_file_ignores: Tuple[PerFileIgnore, ...] = ()
    exclude: Tuple[Glob, ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False
    fixable: frozenset = frozenset(RULES_BY_CODE)
    unsafe_fixes: bool = False
    fix: bool = False  # ``fix = true``: a run fixes as with --fix (--no-fix overrides it)
    # The Python version whose syntax files must be: target-version, else the lowest that
    # [project] requires-python allows, else None (the newest LibCST parses).
    target_version: Optional[Tuple[int, int]] = None
    # The torch version fixes write code for (torch-version, else the lowest that the
    # project's torch requirement allows, else 2.0), and where that value came from.
    torch_version: Tuple[int, int] = torch_versions.DEFAULT
    torch_version_origin: str = DEFAULT_ORIGIN
    # require-accelerator: True (TDL002 off), False (on, even in a GPU-only project), None
    # (the default: off only in a project that the index finds GPU-only)
    require_accelerator: Optional[bool] = None

    def rules_for(self, path: Path) -> Tuple[type, ...]:
        """The rules to run on ``path``: the enabled ones minus its per-file ignores, and
        minus those the project around it makes moot (``project.rules_for_location``)."""
        ignored = set()
        if self.per_file_ignores:
            text, name = _posix(absolute(path)), path.name
            for entry in self.per_file_ignores:
                if entry.applies_to(text, name):
                    ignored.update(code for selector in entry.codes for code in _rules_of(selector))
        from torchdevlint.project_index import rules_for_program
        return rules_for_program(rules_for_location(
            [rule for rule in ALL_RULES if rule.code in self.enabled and rule.code not in ignored],
            str(path)), str(path), self.require_accelerator)

    def fix_options(self):
        """The fix options a fix of a file with these settings uses (every front end's)."""
        from torchdevlint.fixes import FixOptions
        return FixOptions(unsafe=self.unsafe_fixes, fixable=self.fixable,
                          target=self.target_version, torch_version=self.torch_version)

    def is_excluded(self, path: Path) -> bool:
        """Does an exclude pattern match ``path`` (absolute) itself?"""
        names, by_name, by_path = self._exclude_matcher
        name = path.name
        if name in names or (by_name is not None and by_name.match(name)):
            return True
        return by_path is not None and by_path.match(_posix(path)) is not None

    @cached_property
    def _exclude_matcher(self):
        """The exclude globs as one test: a set of the plain names (most of them: ``.git``,
        ``venv``), and one regex each for the other names and for the paths. Every file and
        folder of a walk meets every glob: one by one, they were a third of a warm run over
        257 files."""
        names, by_name, by_path = set(), [], []
        for glob in self.exclude:
            bare = glob.pattern.rstrip("/")
            if "/" in bare:
                by_path.append(_glob_regex(glob.absolute.rstrip("/")).pattern)
            elif any(char in bare for char in "*?["):
                by_name.append(_glob_regex(bare).pattern)
            else:
                names.add(bare)  # (its anchored path, root/NAME, has that name too)

        def combined(patterns):
            return re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None
        return frozenset(names), combined(by_name), combined(by_path)


@dataclass
class Overrides:
    """What the command line says; None means "not given"."""

    select: Optional[List[str]] = None
    extend_select: List[str] = field(default_factory=list)
    ignore: List[str] = field(default_factory=list)  # --ignore and --extend-ignore
    exclude: Optional[List[str]] = None
    extend_exclude: List[str] = field(default_factory=list)
    per_file_ignores: Optional[Dict[str, List[str]]] = None
    extend_per_file_ignores: Dict[str, List[str]] = field(default_factory=dict)
    respect_gitignore: Optional[bool] = None
    force_exclude: Optional[bool] = None
    fixable: Optional[List[str]] = None
    unfixable: List[str] = field(default_factory=list)
    unsafe_fixes: Optional[bool] = None
    require_accelerator: Optional[bool] = None
    target_version: Optional[str] = None
    torch_version: Optional[str] = None


def _expect(value: Any, kind: str, key: str, where: str) -> Any:
    def bad() -> ConfigError:
        return ConfigError(f"{where}: `{key}` must be {kind}, not {type(value).__name__} {value!r}")

    if kind == "a list of strings":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad()
    elif kind == "true or false":
        if not isinstance(value, bool):
            raise bad()
    elif kind == "a table of glob = [codes]":
        if not isinstance(value, dict) or not all(
                isinstance(v, list) and all(isinstance(c, str) for c in v) for v in value.values()):
            raise bad()
    return value


def _per_file_ignores(table: Mapping[str, List[str]], root: str, where: str) -> List[PerFileIgnore]:
    entries = []
    for pattern, codes in table.items():
        negated = pattern.startswith("!")
        entries.append(PerFileIgnore(Glob(pattern[1:] if negated else pattern, root), negated,
                                     tuple(_check_codes(codes, f"{where}: per-file-ignores {pattern!r}"))))
    return entries


def _unknown_keys(keys: Iterable[str], name: str, valid: Sequence[str], other: str,
                  valid_there: Sequence[str], where: str) -> Optional[ConfigError]:
    """The error for the keys of table ``name`` that are not in ``valid`` (None: none), with
    a hint for each: the table it belongs in (``other``, where ``valid_there`` holds it, as
    ruff's ``select`` under ``[tool.ruff.lint]``), else the known key it looks like."""
    import difflib
    unknown = [key for key in keys if key not in valid]
    if not unknown:
        return None
    hints = []
    for key in unknown:
        if key in valid_there:
            hints.append(f"`{key}` belongs in [{other}]")
        else:
            close = difflib.get_close_matches(key, valid, n=1)
            if close:
                hints.append(f"did you mean `{close[0]}`?")
    return ConfigError(f"{where}: unknown key{'s' if len(unknown) > 1 else ''} "
                       f"{', '.join(map(repr, unknown))} in [{name}]"
                       + (f": {'; '.join(hints)}" if hints else "")
                       + f" (known: {', '.join(valid)})")


def _with_lint_table(table: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    """``table`` with the keys of its ``lint`` sub-table (``[tool.torchdevlint.lint]``)
    merged in; a key set in both is an error, as is a key that is not a lint key there."""
    lint = table.get(LINT_TABLE)
    if lint is None:
        return table
    name = f"{'.'.join(TABLE)}.{LINT_TABLE}"
    if not isinstance(lint, dict):
        raise ConfigError(f"{where}: [{name}] must be a table")
    error = _unknown_keys(lint, name, LINT_KEYS, ".".join(TABLE), KNOWN_KEYS, where)
    if error is not None:
        raise error
    twice = [key for key in lint if key in table]
    if twice:
        raise ConfigError(f"{where}: {', '.join(f'`{key}`' for key in twice)} set both in "
                          f"[{'.'.join(TABLE)}] and in [{name}]: keep one")
    return {**{key: value for key, value in table.items() if key != LINT_TABLE}, **lint}


def parse_table(table: Mapping[str, Any], where: str) -> Dict[str, Any]:
    """Validate a ``[tool.torchdevlint]`` table (with its ``lint`` sub-table merged in);
    returns it with checked values."""
    error = _unknown_keys([key for key in table if key != LINT_TABLE], ".".join(TABLE),
                          KNOWN_KEYS, f"{'.'.join(TABLE)}.{LINT_TABLE}", LINT_KEYS, where)
    if error is not None:
        raise error
    table = _with_lint_table(table, where)
    checked: Dict[str, Any] = {}
    for key, value in table.items():
        if key in CODE_LIST_KEYS:
            checked[key] = _check_codes(_expect(value, "a list of strings", key, where), f"{where}: `{key}`")
        elif key in GLOB_LIST_KEYS:
            checked[key] = _expect(value, "a list of strings", key, where)
        elif key in BOOL_KEYS:
            checked[key] = _expect(value, "true or false", key, where)
        elif key in STRING_KEYS:
            if not isinstance(value, str):
                raise ConfigError(f"{where}: `{key}` must be a string, not "
                                  f"{type(value).__name__} {value!r}")
            try:
                checked[key] = torch_versions.parse(value) if key == "torch-version" \
                    else syntax.parse_target(value)
            except (syntax.TargetError, torch_versions.TorchVersionError) as exc:
                raise ConfigError(f"{where}: `{key}`: {exc}") from None
        else:
            checked[key] = _expect(value, "a table of glob = [codes]", key, where)
    return checked


def _document(path: Path) -> Dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def read_requires_python(path: Path) -> Optional[Tuple[int, int]]:
    """The lowest Python version ``[project] requires-python`` allows (None without one)."""
    project = _document(path).get("project")
    spec = project.get("requires-python") if isinstance(project, dict) else None
    return syntax.from_requires_python(spec) if isinstance(spec, str) else None


def read_torch_requirement(path: Path) -> Optional[Tuple[Tuple[int, int], str]]:
    """(the lowest torch version ``[project]``'s torch requirement allows, where it is said),
    or None without such a requirement."""
    project = _document(path).get("project")
    found = torch_versions.from_project(project) if isinstance(project, dict) else None
    return (found[0], f"{path}: {found[1]}") if found is not None else None


def read_table(path: Path) -> Optional[Dict[str, Any]]:
    """The ``[tool.torchdevlint]`` table of a pyproject.toml (None when it has none)."""
    document = _document(path)
    table: Any = document
    for key in TABLE:
        if not isinstance(table, dict) or key not in table:
            return None
        table = table[key]
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.torchdevlint] must be a table")
    return parse_table(table, str(path))


def build_settings(table: Optional[Mapping[str, Any]], root: Path, config_path: Optional[Path],
                   overrides: Overrides) -> Settings:
    table = table or {}
    file_root = _posix(absolute(root))
    cli_root = _posix(absolute(Path.cwd()))
    where = str(config_path) if config_path else "configuration"

    # A project that only runs on GPUs says so once: its hard-coded CUDA is by design, so
    # TDL002 is off for it, as if the file ignored it (the command line can still select it).
    # Unset, a project with no CPU path anywhere is taken for one (``Settings.rules_for``);
    # ``false`` keeps TDL002 on even there.
    require_accelerator = overrides.require_accelerator \
        if overrides.require_accelerator is not None else table.get("require-accelerator")
    gpu_only = ("TDL002",) if require_accelerator else ()
    file_layer = RuleSelection(
        tuple(table["select"]) if "select" in table else None,
        tuple(table.get("extend-select", ())),
        tuple(table.get("ignore", ())) + tuple(table.get("extend-ignore", ())) + gpu_only)
    cli_layer = RuleSelection(
        tuple(_check_codes(overrides.select, "--select")) if overrides.select is not None else None,
        tuple(_check_codes(overrides.extend_select, "--extend-select")),
        tuple(_check_codes(overrides.ignore, "--ignore/--extend-ignore")))
    enabled = resolve_codes([file_layer, cli_layer])

    fixable_layer = RuleSelection(tuple(table["fixable"]) if "fixable" in table else None, (),
                                  tuple(table.get("unfixable", ())))
    cli_fixable = RuleSelection(
        tuple(_check_codes(overrides.fixable, "--fixable")) if overrides.fixable is not None else None,
        (), tuple(_check_codes(overrides.unfixable, "--unfixable")))
    fixable = resolve_codes([fixable_layer, cli_fixable], opt_in=False)

    if overrides.exclude is not None:
        exclude = [Glob(p, cli_root) for p in overrides.exclude]
    elif "exclude" in table:
        exclude = [Glob(p, file_root) for p in table["exclude"]]
    else:
        exclude = [Glob(p, file_root) for p in DEFAULT_EXCLUDE]
    exclude += [Glob(p, file_root) for p in table.get("extend-exclude", ())]
    exclude += [Glob(p, cli_root) for p in overrides.extend_exclude]

    if overrides.per_file_ignores is not None:
        ignores = _per_file_ignores(overrides.per_file_ignores, cli_root, "--per-file-ignores")
    else:
        ignores = _per_file_ignores(table.get("per-file-ignores", {}), file_root, where)
    ignores += _per_file_ignores(table.get("extend-per-file-ignores", {}), file_root, where)
    ignores += _per_file_ignores(overrides.extend_per_file_ignores, cli_root, "--extend-per-file-ignores")

    def flag(cli: Optional[bool], key: str, default: bool) -> bool:
        return cli if cli is not None else table.get(key, default)

    target = table.get("target-version")
    if overrides.target_version is not None:
        try:
            target = syntax.parse_target(overrides.target_version)
        except syntax.TargetError as exc:
            raise ConfigError(f"--target-version: {exc}") from None

    torch, torch_origin = torch_versions.DEFAULT, DEFAULT_ORIGIN
    if "torch-version" in table:
        torch, torch_origin = table["torch-version"], f"{where}: [tool.torchdevlint] torch-version"
    if overrides.torch_version is not None:
        try:
            torch = torch_versions.parse(overrides.torch_version)
        except torch_versions.TorchVersionError as exc:
            raise ConfigError(f"--torch-version: {exc}") from None
        torch_origin = "--torch-version"

    return Settings(
        root=absolute(root), config_path=config_path, enabled=enabled,
        per_file_ignores=tuple(ignores), exclude=tuple(exclude),
        respect_gitignore=flag(overrides.respect_gitignore, "respect-gitignore", True),
        force_exclude=flag(overrides.force_exclude, "force-exclude", False),
        fixable=fixable, unsafe_fixes=flag(overrides.unsafe_fixes, "unsafe-fixes", False),
        fix=table.get("fix", False),
        target_version=target, torch_version=torch, torch_version_origin=torch_origin,
        require_accelerator=require_accelerator)


def _is_file(candidate: Path) -> bool:
    """``candidate.is_file()``, False where it cannot be looked at (a directory that cannot be
    searched: no file in it can be read and linted either; each gets its E902)."""
    try:
        return candidate.is_file()
    except OSError:
        return False


class Resolver:
    """Settings for any path: the closest configuration above it, cached per directory."""

    def __init__(self, overrides: Optional[Overrides] = None, config: Optional[Path] = None,
                 isolated: bool = False) -> None:
        self.overrides = overrides or Overrides()
        self.config = config
        self._by_config: Dict[Optional[Path], Settings] = {}
        self._by_directory: Dict[Path, Settings] = {}
        self._fixed: Optional[Settings] = None
        self._tables: Dict[Path, Optional[Dict[str, Any]]] = {}
        self._requires: Dict[Path, Optional[Tuple[int, int]]] = {}
        self._torch_requirements: Dict[Path, Optional[Tuple[Tuple[int, int], str]]] = {}
        if config is not None:
            if not config.is_file():
                raise ConfigError(f"{config}: no such configuration file")
            self._fixed = build_settings(read_table(config), absolute(config).parent, config,
                                         self.overrides)
        elif isolated:
            self._fixed = build_settings(None, Path.cwd(), None, self.overrides)
        # Invalid overrides are reported even when no file is linted.
        self.default()

    def default(self) -> Settings:
        """The settings for the current directory (used for paths given on the command line)."""
        return self.for_directory(absolute(Path.cwd()))

    def config_files(self) -> List[Path]:
        """Every pyproject.toml this resolver read or looked for (found or not): what a
        long-running front end (the language server) watches to notice a changed setting."""
        files = [*self._tables, *self._requires, *self._torch_requirements]
        if self.config is not None:
            files.append(self.config)
        return list(dict.fromkeys(files))

    def _find_config(self, directory: Path) -> Optional[Path]:
        """The closest pyproject.toml at or above ``directory`` with a [tool.torchdevlint] table."""
        for folder in (directory, *directory.parents):
            candidate = folder / "pyproject.toml"
            if candidate not in self._tables:
                self._tables[candidate] = read_table(candidate) if _is_file(candidate) else None
            if self._tables[candidate] is not None:
                return candidate
        return None

    def for_path(self, path: Path) -> Settings:
        path = absolute(path)
        return self.for_directory(path if path.is_dir() else path.parent)

    def _requires_python(self, candidate: Path) -> Optional[Tuple[int, int]]:
        if candidate not in self._requires:
            self._requires[candidate] = (read_requires_python(candidate)
                                         if _is_file(candidate) else None)
        return self._requires[candidate]

    def _inferred_target(self, directory: Path, config: Optional[Path]) -> Optional[Tuple[int, int]]:
        """As ruff infers it: ``requires-python`` of the configuration file, or (without one)
        of the closest pyproject.toml above ``directory`` that has it."""
        if config is not None:
            return self._requires_python(config)
        for folder in (directory, *directory.parents):
            version = self._requires_python(folder / "pyproject.toml")
            if version is not None:
                return version
        return None

    def _torch_requirement(self, candidate: Path) -> Optional[Tuple[Tuple[int, int], str]]:
        if candidate not in self._torch_requirements:
            self._torch_requirements[candidate] = (read_torch_requirement(candidate)
                                                   if _is_file(candidate) else None)
        return self._torch_requirements[candidate]

    def _inferred_torch(self, directory: Path, config: Optional[Path]
                        ) -> Optional[Tuple[Tuple[int, int], str]]:
        """As ``_inferred_target`` with ``requires-python``: the torch requirement of the
        configuration file, or (without one) of the closest pyproject.toml that has one."""
        if config is not None:
            return self._torch_requirement(config)
        for folder in (directory, *directory.parents):
            found = self._torch_requirement(folder / "pyproject.toml")
            if found is not None:
                return found
        return None

    def _with_torch(self, settings: Settings, directory: Path, config: Optional[Path]) -> Settings:
        """``settings`` with the torch version the project requires, when nothing set one."""
        if settings.torch_version_origin != DEFAULT_ORIGIN:
            return settings
        found = self._inferred_torch(directory, config)
        if found is None:
            return settings
        return replace(settings, torch_version=found[0], torch_version_origin=found[1])

    def for_directory(self, directory: Path) -> Settings:
        if self._fixed is not None:
            if self._fixed.target_version is None and self.config is not None:
                self._fixed = replace(self._fixed,
                                      target_version=self._inferred_target(directory, self.config))
            if self.config is not None:
                self._fixed = self._with_torch(self._fixed, directory, self.config)
            return self._fixed
        settings = self._by_directory.get(directory)
        if settings is None:
            config = self._find_config(directory)
            settings = self._by_config.get(config)
            if settings is None:
                table = self._tables[config] if config else None
                settings = build_settings(table, config.parent if config else Path.cwd(), config,
                                          self.overrides)
                self._by_config[config] = settings
            if settings.target_version is None:
                inferred = self._inferred_target(directory, config)
                if inferred is not None:
                    settings = replace(settings, target_version=inferred)
            settings = self._with_torch(settings, directory, config)
            self._by_directory[directory] = settings
        return settings


def parse_per_file_ignores(values: Iterable[str]) -> Dict[str, List[str]]:
    """``GLOB:CODE[,CODE...]`` pairs from the command line."""
    table: Dict[str, List[str]] = {}
    for value in values:
        pattern, sep, codes = value.rpartition(":")
        if not sep or not pattern:
            raise ConfigError(f"--per-file-ignores {value!r}: expected GLOB:CODES")
        table.setdefault(pattern, []).extend(c for c in codes.split(",") if c.strip())
    return table


__all__ = ["ConfigError", "DEFAULT_EXCLUDE", "KNOWN_KEYS", "Overrides", "Resolver", "Settings"]
