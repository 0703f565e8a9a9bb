"""The package's shape, read from its source: no import circles, rules see the analysis only
through its facade, and fixes never reach into rules (a rule's fix lives with the rule)."""
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


def _imports(path: Path) -> Set[str]:
    """The package's modules that ``path`` imports anywhere (a function's own import counts:
    it still joins the two modules). ``from pkg import name`` is an import of ``pkg.name``
    when that is a module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in MODULES
                     else node.module for alias in node.names]
        else:
            continue
        found.update(name for name in names if name in MODULES)
    return found


GRAPH = {name: _imports(path) - {name} for name, path in MODULES.items()}


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
    assert "torchdevlint.engine" in GRAPH["torchdevlint.fixes.applier"]
    assert len(MODULES) > 30
