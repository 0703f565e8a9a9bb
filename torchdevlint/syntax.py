"""Is a file valid Python for the target version, and can LibCST parse it safely?

Two questions asked before LibCST sees a file:

- ``syntax_error``: Python's own parser judges the file, as flake8 and ruff do, against the
  *target* Python version (``target-version``), not against whatever interpreter torchdevlint
  runs on. Syntax older than the interpreter is judged by ``ast.parse(feature_version=...)``;
  syntax newer than the interpreter (``type X = ...`` on 3.11) is parsed by LibCST, which knows
  the grammar up to ``NEWEST``, and the constructs it finds are checked against the target.
- ``too_deep``: LibCST's native parser overflows its stack (a segfault, which no ``except``
  catches) at about 2,000 nested brackets, and its parse and every visitor are super-linear in
  the depth of an expression: 2,000 chained ``+`` take 0.8 s, ``f()()...`` 2.1 s, 5,000 over
  20 s. Python rejects more than 200 nested brackets itself, but not a 3,000-deep chain of
  ``-``, ``not``, ``.attr``, ``+`` or calls. A scan of the text bounds that depth first; the
  expressions found too deep are then left out of the analysis
  (``split.without_deep_expressions``), not the whole file.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from functools import lru_cache
from typing import TYPE_CHECKING, Iterator, Optional, Tuple

# LibCST is imported only to read syntax newer than this interpreter: Python's own parser
# judges every other file, and a run that parses none must not pay for importing it.
if TYPE_CHECKING:
    import libcst as cst

Version = Tuple[int, int]

# Fields of Python's ast that hold blocks of statements (``handlers`` and ``cases`` hold the
# ``except`` and ``case`` clauses, whose own ``body`` is such a block): what the walks of
# statements use (the rules' prefilters, ``noqa``'s groups of lines).
BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")

OLDEST: Version = (3, 9)
TARGET_NAMES = tuple(f"py3{minor}" for minor in range(OLDEST[1], 15))
RUNNING: Version = sys.version_info[:2]


@lru_cache(maxsize=None)
def libcst_version() -> str:
    """The version of the LibCST that ``import libcst`` would load, without importing it:
    from the ``libcst-VERSION.dist-info`` folder beside the package (one directory listing;
    ``importlib.metadata`` costs 20-50 ms to import, a tenth of a warm run), else from
    ``importlib.metadata``; "unknown" without metadata (a vendored copy)."""
    import importlib.util
    try:
        spec = importlib.util.find_spec("libcst")
        location = spec.submodule_search_locations if spec is not None else None
        if location:
            folder = os.path.dirname(os.path.abspath(list(location)[0]))
            found = [match.group(1) for match in map(_DIST_INFO.fullmatch, os.listdir(folder))
                     if match is not None]
            if len(found) == 1:  # (two: a botched upgrade; let importlib.metadata choose)
                return found[0]
    except (ImportError, OSError, ValueError):
        pass
    try:
        from importlib.metadata import version
        return version("libcst")
    except Exception:
        return "unknown"


_DIST_INFO = re.compile(r"libcst-([^-]+)\.dist-info", re.IGNORECASE)


@lru_cache(maxsize=None)
def newest() -> Version:
    """The newest grammar the installed LibCST parses (1.8 added Python 3.14's t-strings and
    unparenthesized ``except A, B``)."""
    match = re.match(r"(\d+)\.(\d+)", libcst_version())
    if match is None:  # no metadata: ask LibCST itself
        import libcst as cst
        return (3, 14) if hasattr(cst, "TemplatedString") else (3, 13)
    return (3, 14) if (int(match.group(1)), int(match.group(2))) >= (1, 8) else (3, 13)


def __getattr__(name: str):
    if name == "NEWEST":  # (computed on first use: it reads LibCST's metadata)
        return newest()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class TargetError(ValueError):
    """An unknown target-version name or an unusable requires-python."""


def parse_target(name: str) -> Version:
    """``"py311"`` -> ``(3, 11)``."""
    match = re.fullmatch(r"py3(\d{1,2})", name.strip().lower())
    if match is None or name.strip().lower() not in TARGET_NAMES:
        raise TargetError(f"unknown target version {name!r} (known: {', '.join(TARGET_NAMES)})")
    return 3, int(match.group(1))


def target_name(version: Version) -> str:
    return f"py{version[0]}{version[1]}"


def from_requires_python(spec: str) -> Optional[Version]:
    """The lowest Python version a ``requires-python`` specifier allows, as ruff infers it
    (``">=3.10"``, ``"~=3.10"``, ``">=3.9,<4"``, ``"==3.11.*"``); None when it names no lower
    bound. Versions below ``OLDEST`` become ``OLDEST``."""
    lowest: Optional[Version] = None
    for clause in spec.split(","):
        match = re.fullmatch(r"\s*(>=|~=|==|>)\s*(\d+)\.(\d+)(?:\.[\d*]+)?\s*", clause)
        if match is None:
            continue
        operator, major, minor = match.group(1), int(match.group(2)), int(match.group(3))
        version = (major, minor + 1) if operator == ">" and ".".join(
            clause.split(">")[-1].split(".")[2:]) == "" else (major, minor)
        if lowest is None or version > lowest:  # the clauses all hold: the highest bound wins
            lowest = version
    if lowest is None or lowest[0] != 3:
        return None
    return max(min(lowest, newest()), OLDEST)


# --- syntax newer than the target --------------------------------------------------------


def _newer_constructs(module: cst.Module) -> Iterator[Tuple[Version, str, cst.CSTNode]]:
    """Each construct whose grammar is newer than ``OLDEST``, with the version it needs."""
    import libcst as cst
    # t-strings exist in LibCST from 1.8 on; an older one (the declared floor) parses no
    # Python 3.14 grammar, so it has no such node to find.
    templated = getattr(cst, "TemplatedString", ())
    stack = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Match):
            yield (3, 10), "match statement", node
        elif isinstance(node, cst.TryStar):
            yield (3, 11), "except* (exception groups)", node
        elif isinstance(node, cst.TypeAlias):
            yield (3, 12), "type alias statement", node
        elif isinstance(node, cst.TypeParameters):
            yield (3, 12), "type parameter list", node
        elif isinstance(node, templated):
            yield (3, 14), "template string (t-string)", node
        elif isinstance(node, cst.ExceptHandler) and isinstance(node.type, cst.Tuple) \
                and not node.type.lpar:
            yield (3, 14), "unparenthesized `except A, B`", node
        stack.extend(reversed(node.children))


def _first_too_new(module: cst.Module, target: Version) -> Optional[Tuple[Version, str, int, int]]:
    import libcst as cst
    for version, what, node in _newer_constructs(module):
        if version > target:
            wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
            position = wrapper.resolve(cst.metadata.PositionProvider)
            # (the wrapper's tree is ``module`` itself: the node is found in it as is)
            start = position[node].start
            return version, what, start.line, start.column + 1
    return None


def syntax_error(source: str, target: Optional[Version] = None
                 ) -> Optional[Tuple[str, int, int]]:
    """``(message, line, column)`` when ``source`` is not valid Python ``target``, else None.

    The message is Python's (``SyntaxError: ...``, as flake8 words E999), or, for a construct
    newer than the target, ``type alias statement requires Python 3.12; target is 3.11``.
    ``target`` defaults to ``NEWEST``. (``chunks.syntax_error`` judges a huge module part
    by part.)"""
    return checked_tree(source, target)[1]


def checked_tree(source: str, target: Optional[Version] = None
                 ) -> Tuple[Optional[ast.AST], Optional[Tuple[str, int, int]]]:
    """``(Python's ast of source, None)`` when ``source`` is valid Python ``target``;
    ``(None, error)`` when not (see ``syntax_error``); ``(None, None)`` when it is valid but
    only LibCST could read it (syntax newer than this interpreter). The tree is what the
    syntax check builds anyway: the prefilter's statement-level tests reuse it."""
    target = target or newest()
    try:
        return ast.parse(source, feature_version=min(target, RUNNING)), None
    except SyntaxError as exc:
        python_error = (f"{type(exc).__name__}: {exc.msg}", exc.lineno or 1, exc.offset or 1)
    except ValueError as exc:
        # NUL bytes: Python 3.12+ raises SyntaxError, 3.11 ValueError; flake8 words both so
        return None, (f"SyntaxError: {exc}", 1, 1)
    except (MemoryError, RecursionError) as exc:
        return None, (f"{type(exc).__name__}: {exc}", 1, 1)
    # Python rejects it: maybe only because it is newer than this interpreter (or than the
    # target). LibCST knows the newer grammar; never hand it what would crash it.
    if too_deep(source) is not None:
        return None, python_error
    import libcst as cst
    try:
        module = cst.parse_module(source)
    except (cst.ParserSyntaxError, RecursionError):
        if target > RUNNING and target > newest():
            # the target's grammar is newer than both this Python and this LibCST: say so
            message, line, column = python_error
            return None, (f"{message} (Python {target[0]}.{target[1]} syntax on Python "
                          f"{RUNNING[0]}.{RUNNING[1]} needs LibCST 1.8 or newer; "
                          f"{libcst_version()} is installed)", line, column)
        return None, python_error
    too_new = _first_too_new(module, target)
    if too_new is not None:
        (major, minor), what, line, column = too_new
        return None, ((f"SyntaxError: {what} requires Python {major}.{minor}; "
                       f"target is {target[0]}.{target[1]}"), line, column)
    if target > RUNNING and any(version > RUNNING for version, _, _ in _newer_constructs(module)):
        return None, None  # valid for the target; this interpreter is just older
    return None, python_error


# --- nesting that LibCST cannot take -----------------------------------------------------

# LibCST parses and analyses a 1,000-deep chain in 0.1-0.5 s; real code stays below 100
# (torch's 2,328 files: at most 94 by the estimate below).
MAX_DEPTH = 1000

# Cheap gates (regular expressions, C speed) before the exact scan: a stretch of text from a
# separator (``,`` ``;`` ``=``) holding 64 operators, dots or brackets, 64 of the keywords
# that chain (``not``, ``else``, ``lambda``, ...), or 64 adjacent string literals. Each
# repetition consumes exactly one operator, so the match is linear; keywords are sparse enough
# to be visited one by one. On torch's sources the gates cost 3 % of a LibCST parse and let 7 %
# of files through to the scan, which would cost 8 % of a parse on every file. Not caught: 200
# nested brackets (Python's limit) each holding a chain of 60; a crash there costs its file
# only (see ``parallel.run_per_file``).
_GATES = (
    re.compile(r"(?:^|(?<=[,;=]))(?:[^-+*/%@&|^~.()\[\]{}<>,;=]*[-+*/%@&|^~.()\[\]{}<>]){64}"),
    re.compile(r"""(?:(?:'[^'\n]*'|"[^"\n]*")\s*){64}"""),
)

_CHAINING_KEYWORD = re.compile(r"\b(?:not|else|lambda|await|and|or)\b")
# (``=`` of an assignment, not of ``==``, ``<=``, ``>=``, ``!=`` or ``:=``, which chain)
_SEPARATOR = re.compile(r"[,;]|(?<![=!<>:])=(?!=)")


def _keyword_chain(source: str, length: int = 64) -> bool:
    """Whether ``length`` chaining keywords follow each other with no separator between."""
    run, previous = 0, 0
    for match in _CHAINING_KEYWORD.finditer(source):
        run = run + 1 if _SEPARATOR.search(source, previous, match.start()) is None else 1
        if run >= length:
            return True
        previous = match.end()
    return False


_TOKEN = re.compile(r"""
    (?P<string>(?:\b[rRbBuUfFtT]{1,2})?(?:'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
                |'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"))
  | (?P<comment>\#[^\n]*)
  | (?P<trailer>(?<=[\w)\]}'"])[(\[])
  | (?P<open>[(\[{])
  | (?P<close>[)\]}])
  | (?P<compare>==|!=|<=|>=|->|:=|:)
  | (?P<sep>[,;=\n])
  | (?P<op>\*\*|//|<<|>>|[-+*/%@&|^~<>]|\.(?!\d)|\b(?:not|and|or|if|else|lambda|await|in|is)\b)
""", re.VERBOSE | re.DOTALL)


def nesting_depth(source: str) -> Tuple[int, int]:
    """An upper estimate of the depth of LibCST's tree for ``source`` and the line where it is
    reached: brackets, plus the operators, dots and trailers chained at each bracket level
    since its last separator (a left-nested ``1+1+1`` is as deep as it is long)."""
    deepest, deepest_at = 0, 0
    counters = [0]
    total = 0  # len(counters) - 1 + sum(counters)
    after_string = -1
    for match in _TOKEN.finditer(source):
        kind = match.lastgroup
        if kind == "string":
            # adjacent literals concatenate into a nested tree: 'a' 'b' 'c'
            adjacent = not source[after_string:match.start()].strip()
            after_string = match.end()
            if not adjacent:
                continue
            kind = "op"
        if kind == "op" or kind == "trailer":
            counters[-1] += 1
            total += 1
            if kind == "trailer":
                counters.append(0)
                total += 1
        elif kind == "open":
            counters.append(0)
            total += 1
        elif kind == "close":
            if len(counters) > 1:
                total -= counters.pop() + 1
        elif kind == "sep":
            if match.group() != "\n" or len(counters) == 1:
                total -= counters[-1]
                counters[-1] = 0
            continue
        else:
            continue
        if total > deepest:
            deepest, deepest_at = total, match.start()
    return deepest, source.count("\n", 0, deepest_at) + 1


def too_deep(source: str) -> Optional[Tuple[str, int]]:
    """``(message, line)`` when ``source`` nests deeper than LibCST can safely parse."""
    if not any(gate.search(source) for gate in _GATES) and not _keyword_chain(source):
        return None
    depth, line = nesting_depth(source)
    if depth <= MAX_DEPTH:
        return None
    return (f"expression nested or chained too deeply to analyse (depth about {depth} at "
            f"line {line}; the limit is {MAX_DEPTH}); not analysed"), line
