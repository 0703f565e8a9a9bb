"""Architecture: rules ask the analysis and torch_api; they keep no list of torch's names and
read no source text with regular expressions (issue 26). Parsed with ``ast``, no torch needed
(torch's own attribute names join in where it is installed)."""
from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from conftest import ROOT

from torchdevlint import torch_api

RULES = ROOT / "torchdevlint" / "rules"

# How many such lists each rule module still holds (with torch installed), to be moved out:
# a count may only go down.
STILL_LISTED = {
    "classfacts.py": 1, "factories.py": 1, "prefilter.py": 6, "tdl001_discarded_move.py": 3,
    "tdl002_hardcoded_cuda.py": 3, "tdl003_load_map_location.py": 2,
    "tdl004_unmoved_batch.py": 2, "tdl005_unregistered_tensor_attribute.py": 2,
    "tdl006_unregistered_submodule_container.py": 1, "tdl007_tensor_created_off_device.py": 2,
    "tdl008_numpy_of_device_tensor.py": 1, "tdl009_create_then_move.py": 1,
    "tdl010_autograd_graph_kept_alive.py": 5, "tdl011_mixed_device_operands.py": 5,
}
# Rule modules that still read source text with ``re``: the text prefilters (to become
# declared data, issue 26).
STILL_READ_WITH_RE = {"classfacts.py", "prefilter.py"}


def _torch_names() -> set:
    names = set()
    for value in vars(torch_api).values():
        if isinstance(value, (frozenset, set)) and all(isinstance(v, str) for v in value):
            names |= {v.rpartition(".")[2] for v in value}
    try:
        import torch
    except ImportError:
        return names
    return names | {n for n in dir(torch) + dir(torch.Tensor) + dir(torch.nn.functional)
                    if not n.startswith("_")}


def _string_lists(tree: ast.AST):
    """The strings of each set, frozenset or tuple literal (``frozenset("a b".split())``
    too)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("frozenset", "set", "tuple") and node.args:
            node = node.args[0]
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "split" and isinstance(node.func.value, ast.Constant):
                yield node.lineno, str(node.func.value.value).split()
                continue
        if isinstance(node, (ast.Tuple, ast.Set, ast.List)) and len(node.elts) >= 2 and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            yield node.lineno, [e.value for e in node.elts]


def torch_name_lists(path: Path, names: set) -> list:
    """(line, the torch names) of each literal list of ``path`` with two or more torch names."""
    found = {}
    for line, strings in _string_lists(ast.parse(path.read_text())):
        torch_names = sorted(set(strings) & names)
        if len(torch_names) >= 2:
            found[line] = torch_names
    return sorted(found.items())


def reads_with_re(path: Path) -> bool:
    tree = ast.parse(path.read_text())
    return any(isinstance(node, (ast.Import, ast.ImportFrom)) and (
        any(alias.name == "re" for alias in node.names) if isinstance(node, ast.Import)
        else node.module == "re") for node in ast.walk(tree))


def test_rules_keep_no_new_lists_of_torch_names():
    names = _torch_names()
    counts = Counter()
    for path in sorted(RULES.glob("*.py")):
        counts[path.name] = len(torch_name_lists(path, names))
    grown = {name: count for name, count in counts.items() if count > STILL_LISTED.get(name, 0)}
    assert grown == {}, "put these torch names in torch_api.py: " + repr({
        name: torch_name_lists(RULES / name, names) for name in grown})


def test_the_moved_lists_stay_moved():
    # the factory sets and the binary tensor methods (issue 26) are torch_api's alone
    names = _torch_names()
    for path in sorted(RULES.glob("*.py")):
        for line, found in torch_name_lists(path, names):
            assert not set(found) & (torch_api.COMPARISON_METHODS | {"zeros", "arange"}), \
                (path.name, line, found)


def test_rules_read_no_new_source_text_with_re():
    reading = {path.name for path in RULES.glob("*.py") if reads_with_re(path)}
    assert reading <= STILL_READ_WITH_RE


def test_the_checks_find_what_they_look_for(tmp_path):
    sample = tmp_path / "rule.py"
    sample.write_text('import re\n_M = frozenset("eq ne add".split())\n_T = ("zeros", "ones")\n'
                      '_F = ("kinds", "placement")\n')
    assert torch_name_lists(sample, _torch_names()) == [
        (2, ["add", "eq", "ne"]), (3, ["ones", "zeros"])]
    assert reads_with_re(sample)
