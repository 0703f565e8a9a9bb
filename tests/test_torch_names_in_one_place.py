"""Architecture: rules ask the analysis and torch_api; they keep no list of torch's names and
read no source text with regular expressions (issue 26). Parsed with ``ast``, no torch needed
(torch's own attribute names join in where it is installed)."""
from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

from torchdevlint import torch_api

RULES = ROOT / "torchdevlint" / "rules"
ANALYSIS = ROOT / "torchdevlint" / "analysis"

# The literal lists of names that remain in rules/ and analysis/, each with why it is no list
# of torch's API (keyed by the module and the list's strings, not by a line that moves):
NOT_TORCH_NAMES = {
    ("classfacts.py", frozenset({"list", "dict"})): "Python's builtins: list() and dict() "
                                                     "build an empty container",
    ("placement.py", frozenset({"list", "dict"})): "Python's builtins: list() and dict() "
                                                    "build an empty container",
    ("tdl002_hardcoded_cuda.py", frozenset("getattr hasattr str isinstance repr print len".split())):
        "Python's builtins that only inspect a device string",
    ("tdl002_hardcoded_cuda.py", frozenset(
        "startswith endswith lower upper split replace strip format".split())):
        "methods of Python's str",
    ("tdl003_load_map_location.py", frozenset({"dict", "list", "tuple"})):
        "Python's builtins that build a container of their arguments",
    ("tdl003_load_map_location.py", frozenset(
        "data dataset datasets cache cached vocab vectors triples tokens corpus captions".split())):
        "words of the names code gives data sets (``train_data``), not an API",
    ("tdl003_load_map_location.py", frozenset(
        "param params weight weights model state checkpoint ckpt snapshot".split())):
        "words of the names code gives a model's saved state (``best_checkpoint``), not an API",
    ("guards.py", frozenset(("is_initialized", "and_initialized", "dist_initialized",
                             "is_distributed", "world_size"))):
        "words of the names code gives its distributed checks (``is_dist_avail_and_"
        "initialized``), matched inside a name, not an API",
    ("tdl010_autograd_graph_kept_alive.py", frozenset({"staticmethod", "classmethod"})):
        "Python's method decorators",
    ("__init__.py", frozenset(
        ("kinds", "placement", "guards", "devices", "targets", "grad", "modules", "project"))):
        "the analysis's own fact names (``analysis.FACTS``)",
    ("tdl008_numpy_of_device_tensor.py", frozenset(
        ("kinds", "placement", "devices", "grad", "guards", "modules", "project"))):
        "the facts the rule declares (``Rule.facts``: ``analysis.FACTS``'s names)",
    ("builder.py", frozenset(
        """lpar rpar comma semicolon header footer leading_lines lines_after_decorators
        trailing_whitespace equal colon dot asynchronous newline lbracket rbracket lbrace rbrace
        operator keyword arrow walrus star indent""".split())):
        "LibCST's fields that only hold syntax (``dot``, ``equal``)",
    ("kinds.py", frozenset({"property", "cached_property"})): "Python's property decorators",
    ("placement.py", frozenset(("append", "insert"))): "Python's list methods that add an item",
    ("placement.py", frozenset(("keys", "values", "items", "get", "copy"))):
        "Python's dict methods that only read it",
    ("kinds.py", frozenset(("list", "List", "tuple", "Tuple", "Sequence"))):
        "annotations of a parameter that holds a list (Python's builtins and typing's names)",
    ("model.py", frozenset({"func", "name"})): "the ``__slots__`` of a class of the analysis",
    ("model.py", frozenset({"scope", "conditions", "func", "cls", "grad"})):
        "the ``__slots__`` of a class of the analysis",
}
# The modules of analysis/ that use ``re``, and on what text: none reads a file's source.
ANALYSIS_RE = {
    "model.py": "a comment's text: does it say the line fails (``# raises RuntimeError``)",
    "targets.py": "a canonical target's text (``.state_dict``), not the source",
}


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


def _unexplained_lists(folder: Path, names: set) -> dict:
    found = {}
    for path in sorted(folder.glob("*.py")):
        if path.name == "_catalog.py":
            continue  # generated from the rule classes (their names are torch_api's)
        tree = ast.parse(path.read_text())
        for line, strings in _string_lists(tree):
            if len(set(strings) & names) >= 2 and not any(
                    module == path.name and set(strings) <= listed
                    for module, listed in NOT_TORCH_NAMES):
                found.setdefault(path.name, []).append((line, sorted(set(strings) & names)))
    return found


def test_rules_keep_no_list_of_torch_names():
    assert _unexplained_lists(RULES, _torch_names()) == {}, "put these names in torch_api.py"


def test_the_analysis_keeps_no_list_of_torch_names():
    assert _unexplained_lists(ANALYSIS, _torch_names()) == {}, "put these names in torch_api.py"


def test_each_explained_list_is_still_there():
    # an explanation of a list that no longer exists is stale: remove it
    strings = {(path.name, frozenset(found)) for folder in (RULES, ANALYSIS)
               for path in folder.glob("*.py")
               for _, found in _string_lists(ast.parse(path.read_text()))}
    stale = [key for key in NOT_TORCH_NAMES
             if not any(module == key[0] and found <= key[1] for module, found in strings)]
    assert stale == []


def test_rules_read_no_source_text_with_re():
    # text is searched in torchdevlint/textsearch.py; a rule declares patterns, never runs them
    assert [path.name for path in sorted(RULES.glob("*.py")) if reads_with_re(path)] == []


def test_the_analysis_reads_no_source_with_re():
    assert {path.name for path in ANALYSIS.glob("*.py") if reads_with_re(path)} <= set(ANALYSIS_RE)


def test_the_checks_find_what_they_look_for(tmp_path):
    sample = tmp_path / "rule.py"
    sample.write_text('import re\n_M = frozenset("eq ne add".split())\n_T = ("zeros", "ones")\n'
                      '_F = ("kinds", "placement")\n')
    assert torch_name_lists(sample, _torch_names()) == [
        (2, ["add", "eq", "ne"]), (3, ["ones", "zeros"])]
    assert reads_with_re(sample)
    assert _unexplained_lists(tmp_path, _torch_names()) == {
        "rule.py": [(2, ["add", "eq", "ne"]), (3, ["ones", "zeros"])]}
    # a list explained for one module is not explained in another
    (tmp_path / "rule.py").write_text('_C = ("list", "dict")\n')
    assert _unexplained_lists(tmp_path, {"list", "dict"}) == {"rule.py": [(1, ["dict", "list"])]}
