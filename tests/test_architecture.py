"""The package's shape, read from its source: its modules stand on declared floors and import
only from their own floor or below (``LAYERS``), with no import circles; rules see the analysis
only through its facade, and fixes never reach into rules (a rule's fix lives with the rule).

Every import counts, wherever it stands: a function's own import, one under
``if TYPE_CHECKING``, ``from torchdevlint import name``. Deferring an import to a function
keeps the import cheap; it does not make it a different dependency."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Set

from conftest import ROOT

PACKAGE = ROOT / "torchdevlint"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: Dict[str, Path] = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports_in(source: str, module: str) -> Set[str]:
    """The package's modules that ``source`` (the text of ``module``) imports anywhere (a
    function's own import counts: it still joins the two modules). ``from pkg import name``
    is an import of ``pkg.name`` when that is a module; a relative import is resolved against
    ``module``."""
    package = module if MODULES.get(module, Path()).name == "__init__.py" \
        else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES
                     else base for alias in node.names]
        else:
            continue
        found.update(name for name in names if name in MODULES)
    return found


def _imports(path: Path) -> Set[str]:
    return _imports_in(path.read_text(encoding="utf-8"), _module_name(path))


GRAPH = {name: _imports(path) - {name} for name, path in MODULES.items()}

# The floors, lowest first. A module imports only from its own floor or a lower one. Each entry
# names modules or whole packages (``analysis`` is the package and every module in it); the
# longest entry that names a module places it. ``torchdevlint`` is the package's face alone.
LAYERS = (
    # plain data and questions about text, with no analysis behind them: what a finding and a
    # fix are (``fixes.model``: findings and the cache carry fixes), sources, syntax, # noqa,
    # torch's names and versions, positions
    ("data", ("torchdevlint", "findings", "fixes.model", "source", "syntax", "noqa",
              "positions", "torch_api", "torch_version", "ipysyntax", "atomicio", "parallel",
              "progress", "project", "docs", "textsearch", "checkpoints")),
    # the forms a file comes in: huge modules in parts, huge literals apart, notebooks
    ("file forms", ("chunks", "split", "notebook")),
    # what lasts between runs and spans files: the cache, and the project index that the
    # analysis consults for facts of other files (issue 27)
    ("cache and project", ("cache", "project_index")),
    ("analysis", ("analysis",)),
    # what a rule builds its fixes with (the fix context reads the analysis)
    ("fix model", ("fixes",)),
    ("rules", ("rules",)),
    # one file: prefilter, parse, analyse, run the rules, place findings, build fixes
    ("engine", ("engine",)),
    ("settings and reports", ("config", "output", "render")),
    ("runner", ("runner",)),
    # what a run does with many files: fix them (the applier's loop), add # noqa, commands
    ("commands", ("applier", "fixer", "add_noqa", "commands")),
    ("front ends", ("cli", "__main__", "flake8_plugin", "server", "runtime")),
)


def _floor(module: str) -> int:
    """The index in ``LAYERS`` of ``module``'s floor (-1: none names it)."""
    short = module[len("torchdevlint."):] if module != "torchdevlint" else "torchdevlint"
    best, floor = -1, -1
    for index, (_, entries) in enumerate(LAYERS):
        for entry in entries:
            if (short == entry or short.startswith(entry + ".")) and len(entry) > best:
                best, floor = len(entry), index
    return floor


def upward_imports(graph: Dict[str, Set[str]]) -> list:
    """``importer (floor) -> imported (floor)`` for every import of a higher floor's module."""
    found = []
    for module, imported in sorted(graph.items()):
        for other in sorted(imported):
            if _floor(other) > _floor(module):
                found.append(f"{module} ({LAYERS[_floor(module)][0]}) -> "
                             f"{other} ({LAYERS[_floor(other)][0]})")
    return found


def test_every_module_stands_on_a_declared_floor():
    unplaced = sorted(module for module in MODULES if _floor(module) < 0)
    assert unplaced == [], f"place {unplaced} on a floor in LAYERS"


def test_no_module_imports_from_a_higher_floor():
    upward = upward_imports(GRAPH)
    assert upward == [], "imports from a lower floor to a higher one:\n" + "\n".join(upward)


def test_the_floors_check_sees_every_kind_of_import():
    """An import inside a function, under ``TYPE_CHECKING``, of a name from the package, or
    relative: each is an import the floors check judges."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from torchdevlint.engine import FileResult\n"
        "def f():\n    from torchdevlint import cli\n"
        "def g():\n    import torchdevlint.fixer as fixer\n"
        "from ..applier import fix_source\n"
    )
    imported = _imports_in(source, "torchdevlint.fixes.model")
    assert imported == {"torchdevlint.engine", "torchdevlint.cli", "torchdevlint.fixer",
                        "torchdevlint.applier"}
    upward = upward_imports({"torchdevlint.fixes.model": imported})
    assert len(upward) == 4 and all(line.startswith("torchdevlint.fixes.model (data) -> ")
                                    for line in upward)
    # the same floor, or a lower one, is fine
    assert upward_imports({"torchdevlint.engine": {"torchdevlint.rules.registry",
                                                   "torchdevlint.findings"}}) == []


def test_the_import_graph_has_no_cycles():
    state: Dict[str, int] = {}  # 1: on the current path, 2: done
    path = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for imported in sorted(GRAPH[module]):
            if state.get(imported) == 1:
                cycle = path[path.index(imported):] + [imported]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if imported not in state:
                visit(imported)
        path.pop()
        state[module] = 2

    for module in sorted(GRAPH):
        if module not in state:
            visit(module)


def test_rules_import_the_analysis_only_through_its_facade():
    for module, imported in GRAPH.items():
        if module.startswith("torchdevlint.rules"):
            behind = sorted(m for m in imported if m.startswith("torchdevlint.analysis."))
            assert behind == [], f"{module} imports {behind}; use torchdevlint.analysis"


def test_fixes_do_not_import_rules():
    for module, imported in GRAPH.items():
        if module.startswith("torchdevlint.fixes"):
            rules = sorted(m for m in imported if m.startswith("torchdevlint.rules"))
            assert rules == [], f"{module} imports {rules}: a rule's fix belongs to the rule"


def test_the_graph_is_read_at_all():
    """The checks above mean something only if the imports are found."""
    assert "torchdevlint.analysis" in GRAPH["torchdevlint.rules.tdl001_discarded_move"]
    assert "torchdevlint.engine" in GRAPH["torchdevlint.applier"]
    assert "torchdevlint.fixes.model" in GRAPH["torchdevlint.engine"]  # (a function's import)
    assert len(MODULES) > 30


def _branches(function: ast.AST) -> int:
    """Decision points: ``if``/``for``/``while``/``except``, conditional expressions,
    comprehension loops, and each extra operand of ``and``/``or``."""
    count = 0
    for node in ast.walk(function):
        if isinstance(node, (ast.If, ast.For, ast.While, ast.ExceptHandler, ast.IfExp,
                             ast.comprehension)):
            count += 1
        elif isinstance(node, ast.BoolOp):
            count += len(node.values) - 1
    return count


def test_the_command_line_is_small_functions_by_concern():
    """``cli`` reads the command line in steps (the command word, the arguments, the settings,
    the files, the run: lint, fix or --add-noqa, then the report and the exit code), each a
    function one can read at once. The parser's declarations are a list, not a path."""
    tree = ast.parse((PACKAGE / "cli.py").read_text(encoding="utf-8"))
    declarations = {"build_parser", "_add_configuration_arguments", "_add_output_arguments"}
    large = [f"{node.name}: {node.end_lineno - node.lineno + 1} lines, {_branches(node)} branches"
             for node in tree.body if isinstance(node, ast.FunctionDef)
             and node.name not in declarations
             and (node.end_lineno - node.lineno + 1 > 30 or _branches(node) > 10)]
    assert large == [], "split these by concern: " + "; ".join(large)


def test_the_architecture_page_shows_these_floors():
    """docs/architecture.md's table of floors is the one this test checks."""
    import re
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    page = page[page.index("## Floors"):]
    page = page[:page.index("\n## ", 1)]  # (the section of floors, not the fact map)
    shown = []
    for row in re.findall(r"^\| ([a-z ]+) \| (`.*?) \| .* \|$", page, re.MULTILINE):
        names = [name.removesuffix("/").removesuffix(".py").replace("/", ".")
                 for name in re.findall(r"`([^`]+)`", row[1])]
        shown.append((row[0], tuple(sorted(names))))
    declared = [(name, tuple(sorted(e for e in entries if e != "torchdevlint")))
                for name, entries in LAYERS]
    assert shown == declared
