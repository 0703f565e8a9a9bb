"""Where a value is written to or read from: the same file target, named the same way.

TDL003 asks whether a ``torch.load`` reads what this file itself wrote, and so needs to
compare two path expressions written in different places: ``save_path`` in one function and
``tmp_path / "model.pth"`` in another. ``canonical`` spells an expression as text with every
name that is bound once replaced by what it is bound to, parameters that are pytest fixtures
of this file replaced by what the fixture returns, and other names tied to the scope that owns
them, so that equal text means the same target.
"""

from __future__ import annotations

import re

from typing import List, Optional, Tuple

import libcst as cst

from torchdevlint import torch_api as api
from torchdevlint.analysis.builder import walk_code
from torchdevlint.analysis.model import ASSIGN, PARAM, WITH, FunctionInfo, Scope, last_name, string_value
from torchdevlint.positions import code_for_node

# pytest's per-test (or per-session) temporary directories: fresh and empty when the test
# starts, so a file found there was written by this test run.
FRESH_TEMP_FIXTURES = frozenset("tmp_path tmpdir tmp_path_factory tmpdir_factory".split())
FRESH_TEMP_CALLS = frozenset("mkdtemp TemporaryDirectory NamedTemporaryFile mkstemp".split())
_MAX_DEPTH = 4


class Targets:
    """Canonical spellings of path expressions, for one file's analysis."""

    def __init__(self, collected) -> None:
        self.collected = collected
        self._fixtures: Optional[dict] = None

    def fixtures(self) -> dict:
        """name -> FunctionInfo of the module-level functions decorated ``@pytest.fixture``."""
        if self._fixtures is None:
            self._fixtures = {}
            for info in self.collected.functions:
                if info.cls is None and info.ctx.scope.kind == "module" and any(
                        "fixture" in (last_name(_callee(d.decorator)) or "")
                        for d in info.node.decorators):
                    self._fixtures[info.name] = info
        return self._fixtures

    def canonical(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> str:
        if isinstance(expr, cst.Name):
            return self._name(expr.value, scope, depth)
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
            value = string_value(expr)
            return repr(value) if value is not None else _code(expr)
        if isinstance(expr, cst.Attribute):
            return f"{self.canonical(expr.value, scope, depth)}.{expr.attr.value}"
        if isinstance(expr, cst.Call):
            args = ",".join((f"{a.keyword.value}=" if a.keyword is not None else a.star)
                            + self.canonical(a.value, scope, depth) for a in expr.args)
            return f"{self.canonical(expr.func, scope, depth)}({args})"
        if isinstance(expr, cst.BinaryOperation):
            return (f"({self.canonical(expr.left, scope, depth)} {type(expr.operator).__name__} "
                    f"{self.canonical(expr.right, scope, depth)})")
        if isinstance(expr, cst.Subscript):
            item = self._dict_item(expr, scope) if depth < _MAX_DEPTH else None
            if item is not None:  # ``model_urls["resnet18"]`` of a dict display
                return self.canonical(item[0], item[1], depth + 1)
            return f"{self.canonical(expr.value, scope, depth)}[{_code(expr.slice[0]) if expr.slice else ''}]"
        return _code(expr)

    @staticmethod
    def _dict_item(expr: cst.Subscript, scope: Scope):
        """(value, scope) of ``NAME["key"]`` where ``NAME`` is bound once, to a dict display
        that holds ``"key"`` (torchvision's ``model_urls``); None otherwise."""
        if not isinstance(expr.value, cst.Name) or len(expr.slice) != 1 or \
                not isinstance(expr.slice[0].slice, cst.Index):
            return None
        key = string_value(expr.slice[0].slice.value)
        owner = scope.resolve(expr.value.value)
        bindings = owner.bindings.get(expr.value.value, ()) if owner is not None else ()
        if key is None or len(bindings) != 1 or bindings[0].how != ASSIGN or \
                bindings[0].path or not isinstance(bindings[0].value, cst.Dict):
            return None
        for element in bindings[0].value.elements:
            if isinstance(element, cst.DictElement) and string_value(element.key) == key:
                return element.value, bindings[0].ctx.scope
        return None

    def _name(self, name: str, scope: Scope, depth: int) -> str:
        owner = scope.resolve(name)
        if owner is None:
            return name  # a builtin or a global of another module
        bindings = owner.bindings[name]
        if name in FRESH_TEMP_FIXTURES and all(b.how == PARAM for b in bindings):
            return f"<{name}>"  # the same directory for a test and the fixtures it uses
        if len(bindings) == 1 and bindings[0].how == WITH and isinstance(bindings[0].value, cst.Call) \
                and last_name(bindings[0].value.func) in FRESH_TEMP_CALLS:
            return "<TemporaryDirectory>"  # ``with tempfile.TemporaryDirectory() as d``
        if depth < _MAX_DEPTH and len(bindings) == 1:
            binding = bindings[0]
            if binding.how == ASSIGN and not binding.path and isinstance(binding.value, cst.BaseExpression):
                return self.canonical(binding.value, binding.ctx.scope, depth + 1)
            if binding.how == PARAM:
                fixture = self.fixtures().get(name)
                returned = self.fixture_value(fixture) if fixture is not None else None
                if returned is not None:
                    return self.canonical(returned[0], returned[1], depth + 1)
        return f"{name}@{id(owner)}"

    @staticmethod
    def fixture_value(fixture: FunctionInfo):
        """(expression, scope) the fixture returns or yields, when it has exactly one."""
        values = [(value, ctx.scope) for value, ctx in fixture.returns if value is not None]
        if not values:
            for node in walk_code(fixture.node.body):
                if isinstance(node, cst.Yield) and isinstance(node.value, cst.BaseExpression):
                    values.append((node.value, fixture.scope))
        return values[0] if len(values) == 1 else None

    def is_fresh_temp(self, canonical_text: str) -> bool:
        """The target lies in a temporary directory this run created (pytest's ``tmp_path``,
        ``tempfile.mkdtemp()``): whatever is read from there, this run wrote."""
        return "<TemporaryDirectory>" in canonical_text or any(
            f"<{name}>" in canonical_text for name in FRESH_TEMP_FIXTURES) or any(
            f"{call}(" in canonical_text for call in FRESH_TEMP_CALLS)

    def released_urls(self, expr: cst.BaseExpression, scope: Scope,
                      depth: int = 0) -> Optional[List[str]]:
        """The strings ``expr`` may be when it is read from a table of the file: a string
        (through names bound once), or a subscript of a dict display, the item of a literal
        key or, for a key a run chooses, every item (torchvision's ``model_urls[f"resnet{n}"]``,
        Cadene's ``pretrained_settings["xception"][name]["url"]``). None when one of them is
        anything else."""
        if depth > _MAX_DEPTH:
            return None
        value = string_value(expr)
        if value is not None:
            return [value]
        found = self._table_items(expr, scope, depth)
        if found is None:
            return None
        urls: List[str] = []
        for item, item_scope in found:
            inner = self.released_urls(item, item_scope, depth + 1)
            if inner is None:
                return None
            urls.extend(inner)
        return urls

    def _table_items(self, expr, scope: Scope, depth: int):
        """(value, scope) of each item ``expr`` may be, read from dict displays; None when
        ``expr`` is no such read (or a name bound more than once)."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Name):
            bound = _assigned_once(expr.value, scope)
            return None if bound is None else [bound]
        if not isinstance(expr, cst.Subscript) or len(expr.slice) != 1 or \
                not isinstance(expr.slice[0].slice, cst.Index):
            return None
        key = string_value(expr.slice[0].slice.value)
        tables = self._table_items(expr.value, scope, depth + 1)
        if tables is None:
            return None
        items = []
        for table, table_scope in tables:
            while isinstance(table, cst.Name) or (isinstance(table, cst.Subscript)):
                inner = self._table_items(table, table_scope, depth + 1)
                if inner is None or len(inner) != 1:
                    return None
                table, table_scope = inner[0]
            if not isinstance(table, cst.Dict):
                return None
            for element in table.elements:
                if not isinstance(element, cst.DictElement):
                    return None  # (``**other``: items not shown)
                if key is None or string_value(element.key) == key:
                    items.append((element.value, table_scope))
        return items or None

    @staticmethod
    def is_cpu_release(canonical_text: str) -> bool:
        """The target is a release file PyTorch publishes with CPU storages (a URL under
        ``torch_api.CPU_RELEASE_URL_PREFIXES``, written out or through a name bound to it)."""
        return any(canonical_text.startswith(repr(prefix)[:-1])
                   for prefix in api.CPU_RELEASE_URL_PREFIXES)

    @staticmethod
    def setting_name(canonical_text: str) -> Optional[str]:
        """The attribute a target is read from when it is a named setting of the project
        (``self.mel_statistics_parameter_path``, ``trainer.config.mel_statistics_parameter_path``):
        one file, whichever object carries the setting. Only a distinctive name (with an
        underscore: not ``path`` or ``file``), and only at the end of an attribute chain."""
        match = re.search(r"\.([A-Za-z_]\w*)$", canonical_text)
        if match is None or "_" not in match.group(1).strip("_"):
            return None
        return match.group(1)

    def fixed_path(self, expr: cst.BaseExpression, scope: Scope, qualname,
                   depth: int = 0) -> Optional[Tuple[str, bool]]:
        """(path, whether it is relative to the file's own folder) when ``expr`` names one
        relative path whatever the run: a string (also through a name bound once, or
        ``"a/" + "b.pt"``), ``os.path.join`` / ``Path(...) / ...`` of such strings, and
        ``os.path.dirname(__file__)`` or ``Path(__file__).parent`` as the first part (the
        file's folder: path ``""``, relative ``True``), through ``abspath``/``realpath``/
        ``normpath``/``Path``. None for anything a run chooses (an option, a parameter, an
        environment variable), for an absolute path and one that leaves its base
        (``../x.pt``): what another machine holds there is unknown. ``qualname`` is the
        analysis's ``kinds.qualname``."""
        if depth > _MAX_DEPTH:
            return None
        value = string_value(expr)
        if value is not None:
            return (value, False) if _relative(value) else None
        if isinstance(expr, cst.Name):
            bound = _assigned_once(expr.value, scope)
            return None if bound is None else \
                self.fixed_path(bound[0], bound[1], qualname, depth + 1)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add,
                                                                                cst.Divide)):
            left = self.fixed_path(expr.left, scope, qualname, depth + 1)
            right = self.fixed_path(expr.right, scope, qualname, depth + 1)
            if left is None or right is None or right[1]:
                return None
            if isinstance(expr.operator, cst.Add):
                return None if left[1] else (left[0] + right[0], False)
            return _joined(left, right[0])
        if isinstance(expr, cst.Attribute) and expr.attr.value == "parent" and \
                _is_this_file(expr.value, scope, qualname):
            return "", True  # ``Path(__file__).parent``
        if not isinstance(expr, cst.Call) or any(a.keyword is not None or a.star
                                                 for a in expr.args):
            return None
        called = qualname(expr.func, scope) or (  # (a builtin: ``str(path)``)
            expr.func.value if isinstance(expr.func, cst.Name)
            and scope.resolve(expr.func.value) is None else None)
        args = [a.value for a in expr.args]
        if called in api.PATH_SPELLINGS and len(args) == 1:
            return self.fixed_path(args[0], scope, qualname, depth + 1)
        if called == "os.path.dirname" and len(args) == 1 and \
                _is_this_file(args[0], scope, qualname):
            return "", True
        if called == "os.path.join" and args:
            first = self.fixed_path(args[0], scope, qualname, depth + 1)
            for part in args[1:]:
                found = self.fixed_path(part, scope, qualname, depth + 1)
                if first is None or found is None or found[1]:
                    return None
                first = _joined(first, found[0])
            return first
        return None

    @staticmethod
    def file_names(canonical_text: str) -> List[str]:
        """The string literals in a canonical target that name a file (``'trainfeat.pth'``)."""
        names = []
        for part in canonical_text.split("'")[1::2]:
            if "." in part and "/" not in part.strip("/") and len(part) > 2:
                names.append(part.strip("/"))
        return names


def _assigned_once(name: str, scope: Scope):
    """(value, scope) of the one plain assignment of ``name`` where ``scope`` finds it; None
    when it is bound otherwise or more than once."""
    owner = scope.resolve(name)
    bindings = owner.bindings.get(name, ()) if owner is not None else ()
    if len(bindings) != 1 or bindings[0].how != ASSIGN or bindings[0].path or \
            not isinstance(bindings[0].value, cst.BaseExpression):
        return None
    return bindings[0].value, bindings[0].ctx.scope


def _relative(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    return bool(path) and not path.startswith(("/", "~")) and ":" not in path and \
        ".." not in parts


def _joined(base: Tuple[str, bool], part: str) -> Optional[Tuple[str, bool]]:
    text = f"{base[0].rstrip('/')}/{part}" if base[0] else part
    return (text, base[1]) if _relative(text) else None


def _is_this_file(expr, scope: Scope, qualname) -> bool:
    """``__file__``, ``os.path.abspath(__file__)``, ``Path(__file__)`` (``.resolve()``)."""
    if isinstance(expr, cst.Name):
        return expr.value == "__file__" and scope.resolve("__file__") is None
    if isinstance(expr, cst.Call) and len(expr.args) <= 1:
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("resolve",
                                                                           "absolute") \
                and not expr.args:
            return _is_this_file(expr.func.value, scope, qualname)
        if len(expr.args) == 1 and qualname(expr.func, scope) in api.PATH_SPELLINGS:
            return _is_this_file(expr.args[0].value, scope, qualname)
    return False


def _callee(expr):
    return expr.func if isinstance(expr, cst.Call) else expr


def _code(node: cst.CSTNode) -> str:
    return " ".join(code_for_node(node).split())
