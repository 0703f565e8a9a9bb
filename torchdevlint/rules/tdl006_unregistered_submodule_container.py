"""TDL006: an ``nn.Module`` keeps submodules in a plain list, tuple or dict, which torch does
not see: ``.to(device)`` does not move them, ``parameters()`` does not list them (the optimizer
never trains them) and ``state_dict()`` does not save them.

Fix: wrap the container: ``[...]`` / ``(...)`` / a comprehension / ``[]`` -> ``nn.ModuleList(...)``,
``{...}`` / ``{}`` -> ``nn.ModuleDict(...)`` (only when every key is a string: ModuleDict
refuses others). Always unsafe: ``state_dict()`` gains the container's keys, so a checkpoint
saved before the fix no longer loads with ``strict=True``; and code that relies on the plain
type (``isinstance(x, list)``, ``+`` with a list) behaves differently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Set

import libcst as cst

from torchdevlint.analysis import (
    ASSIGN, IMPORT, Analysis, Binding, ClassInfo, ModuleState, api, Scope, for_clauses, last_name,
    string_value, walk_code,
)
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext
from torchdevlint.fixes.model import Edit, Fix, FixPlan
from torchdevlint.rules.base import Message, Rule, Violation
from torchdevlint.rules.classfacts import module_container_in

_EMPTY_LIST = "list"
_EMPTY_DICT = "dict"
_FILLING_METHODS = frozenset(("append", "extend", "insert"))
_REGISTERING_CONTAINERS = frozenset(("Sequential", "ModuleList", "ModuleDict"))
_DYNAMIC_REGISTRATION = api.MODULE_REGISTERING_METHODS
_MOVES = api.ACCELERATOR_MOVE_METHODS


@dataclass
class WrapContainer(FixPlan):
    """The container value that gets wrapped in ``nn.ModuleList`` / ``nn.ModuleDict``."""

    value: cst.BaseExpression
    scope: Scope
    wrapper: str  # "ModuleList" | "ModuleDict"

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        start, end = ctx.span(self.value)
        edits = []
        nn = _nn_alias(ctx.analysis, self.scope)
        if nn is None:
            torch = ctx.torch_reference(self.scope, start)
            if torch is None:
                return None
            alias, needs_import = torch
            nn = f"{alias}.nn"
            if needs_import:
                edits.append(ctx.import_torch_edit())
        value = self.value
        if isinstance(value, (cst.List, cst.Dict)) and not _elements(value):
            text = f"{nn}.{self.wrapper}()"
        elif _empty_container(value) is not None:  # list() / dict()
            text = f"{nn}.{self.wrapper}()"
        elif isinstance(value, cst.GeneratorExp) and value.lpar:
            text = f"{nn}.{self.wrapper}{ctx.text(value)}"
        else:
            text = f"{nn}.{self.wrapper}({ctx.text(value)})"
        edits.append(Edit(start, end, text))
        return Fix(finding.code, False, f"wrap it in `{nn}.{self.wrapper}`", tuple(edits))


class UnregisteredSubmoduleContainer(Rule):
    """
    ## What it does
    Reports, in an `nn.Module`, `self.NAME` bound to a list, tuple or dict of submodules that torch
    does not see:

    - a literal of modules built right there (`[nn.Linear(d, d), nn.ReLU()]`,
      `{"a": Head(), "b": Head()}`; one item only when the class adds more later);
    - a comprehension that builds modules (`[Block(cfg) for _ in range(n)]`);
    - `[]` / `{}` (or `list()` / `dict()`) that the class then fills with modules built there, by
      `.append`, `.extend`, `.insert` or item assignment (`self.heads[name] = nn.Linear(...)`);
    - a local list of the method, bound once to such a literal or comprehension or to `[]` that
      the method fills by `.append` / `.insert` with modules built there, and used for nothing
      else (`modules = []; for ...: modules.append(nn.Linear(...)); self.layers = modules`,
      issue 28);
    - what a method of the class or a plain function of the file returns, when every `return`
      gives such a list (`self.blocks = self._make_blocks(n)`, `self.heads = make_heads(d, k)`,
      issue 28);

    when a method other than `__init__` (and the helpers only it calls) reads the container. The
    finding is on the binding.

    ## Why is this bad
    Only attributes that are modules are registered as submodules. A plain Python container hides
    its modules from torch:

    - `model.to(device)` does not move them, so `forward` mixes devices (a convolution reports it
      as an input type and weight type that "should be the same");
    - `model.parameters()` does not list their weights, so the optimizer never trains them; a
      Lightning user's classifier that kept its convolutions in a list registered 6 of its 22
      parameter tensors;
    - `model.state_dict()` does not save them, so a checkpoint silently loses them;
    - `model.train()` / `model.eval()` do not reach them (dropout and batch norm stay in the
      wrong mode).

    The device error, from the first layer of the list that meets a moved input:

    ```
    RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
    ```

    On the `meta` device, which plays the GPU in this project's runtime tests, depending on which
    operand the operation checks first:

    ```
    RuntimeError: Tensor on device cpu is not on the expected device meta!
    RuntimeError: Tensor on device meta is not on the expected device cpu!
    ```

    ## Example
    ```python
    class Encoder(nn.Module):
        def __init__(self, d, depth):
            super().__init__()
            self.blocks = [nn.Linear(d, d) for _ in range(depth)]

        def forward(self, x):
            for block in self.blocks:
                x = block(x).relu()
            return x
    ```

    ## Use instead
    ```python
    class Encoder(nn.Module):
        def __init__(self, d, depth):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(d, d) for _ in range(depth)])

        def forward(self, x):
            for block in self.blocks:
                x = block(x).relu()
            return x
    ```

    ## Fix safety
    `--fix --unsafe-fixes` wraps the container: a list, tuple or comprehension (or an empty list
    filled later, a local list, a helper's call) in `nn.ModuleList(...)`, a dict whose keys are all
    strings (or an empty dict
    filled with string keys) in `nn.ModuleDict(...)`. It uses the file's name for `torch.nn` when
    there is one, else `torch.nn` (adding `import torch` if needed).

    The fix is **always unsafe**:

    - `state_dict()` gains the container's keys (`blocks.0.weight`, ...), so a checkpoint saved
      before the fix no longer loads with `load_state_dict(..., strict=True)`; load it with
      `strict=False` once and save it again;
    - the optimizer now trains weights it never trained;
    - code that relies on the plain type (`isinstance(x, list)`, `+` with a list, dict methods that
      `ModuleDict` lacks) behaves differently.

    No fix for a dict whose keys are not all known to be strings (`ModuleDict` refuses others):
    a literal with a key that is not a string literal, or an empty dict filled through
    `self.heads[key] = ...` with a key that is neither a string literal nor an f-string.

    ## Known limits
    The rule stays silent on:

    - containers of references to submodules already registered as attributes
      (`self.stages = [self.layer1, self.layer2]`), and on modules bound to a local name that is
      also used elsewhere (it may be registered that way);
    - containers of functions (`[F.relu, F.gelu]`) or of anything not known to be a module;
    - containers whose every module holds no parameters or buffers and does not switch with
      `train()`/`eval()` (`[nn.AvgPool1d(k) ...]`, `{"box": nn.SmoothL1Loss(), "cls":
      nn.CrossEntropyLoss()}`, a module class of the file holding only such, as Autoformer's
      `series_decomp`; `api.PARAMETER_FREE_MODULES`): `.to()`, `parameters()`,
      `state_dict()` and `eval()` miss nothing there. A loss given a class-weight tensor, or
      `nn.Dropout`, is still reported;
    - local lists later wrapped in `nn.Sequential(*layers)` or `nn.ModuleList(layers)` (a local
      list used for anything but being filled, returned or stored: passed to any call, bound
      twice, indexed), and containers the class passes to `Sequential`, `ModuleList`,
      `ModuleDict` or `add_module`;
    - classes that register modules under computed names (`add_module(f"block{i}", block)`,
      `setattr(self, name, module)`);
    - a one-item literal the class never adds to (`self.teacher = [Teacher().eval()]`): the known
      trick of hiding a frozen module from `parameters()` and `state_dict()`;
    - containers whose items the class moves itself (`for m in self.models: m.to(device)`), and
      classes that override `_apply`, `to` or `cuda` (but for a `to`/`cuda` of the class itself
      that only moves named attributes and hands on to `super()`: the containers it does not
      name are reported);
    - classes that are not modules, or that the analysis cannot tell are (a base class from
      another file, in a class that defines no `forward` or registers no parameter or layer
      with weights of its own);
    - containers never read after construction.
    """

    # The kind of finding (its message, as data; the report fills the fields).
    PLAIN_CONTAINER = Message(
        "`{owner}.{name}` keeps submodules of `{module}` in a plain {plain}, which torch does "
        "not see: `.to(device)` does not move them (RuntimeError: Expected all tensors to be on "
        "the same device), `parameters()` does not list them (the optimizer never trains them) "
        "and `state_dict()` does not save them; use `nn.{container}`")

    code = "TDL006"
    name = "unregistered-submodule-container"
    summary = "Submodules kept in a plain list or dict are not moved, trained or saved"
    fixable = True
    facts = frozenset(("kinds", "modules", "placement"))
    # A module class: its base is named through an import of torch or of a library whose
    # modules the analysis knows (Lightning, transformers, timm).
    required_text = (r"\bclass\b", r"torch|lightning|transformers|timm")
    valid = (
        # the same modules registered through a Sequential
        "import torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.blocks = [nn.Linear(2, 2) for _ in range(3)]\n"
        "        self.net = nn.Sequential(*self.blocks)\n\n"
        "    def forward(self, x):\n        for block in self.blocks:\n"
        "            x = block(x)\n        return x\n",
        # one module hidden from parameters() on purpose (a frozen teacher)
        "import torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.student = nn.Linear(2, 2)\n"
        "        self.teacher = [nn.Linear(2, 2).eval()]\n\n"
        "    def forward(self, x):\n        return self.student(x) - self.teacher[0](x)\n",
    )
    invalid = (
        ("import torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n"
         "        super().__init__()\n        self.blocks = [nn.Linear(2, 2) for _ in range(3)]\n\n"
         "    def forward(self, x):\n        for block in self.blocks:\n"
         "            x = block(x)\n        return x\n", ((7, 9),)),
    )

    could_report_in = staticmethod(module_container_in)  # (in classfacts: see rules/prefilter.py)

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        self.analysis = analysis
        self.kinds = analysis.kinds
        self._lists: Set[int] = set()  # bindings of a local list or a helper's list
        for state in analysis.modules_moved_only_by_to():
            candidates = self._candidates(state)
            if candidates:
                yield from self._check_class(state, candidates)

    def _candidates(self, state: ModuleState) -> Dict[str, List[Binding]]:
        """Attributes bound to a container of new modules, or to an empty list or dict."""
        found: Dict[str, List[Binding]] = {}
        for name, bindings in state.info.attributes.items():
            if name in state.registered or name in (state.override_moves or ()):
                continue  # (moved by the class's own ``to``)
            for binding in bindings:
                if binding.how != ASSIGN or binding.path:
                    continue
                if name in state.module_containers and binding in state.module_containers[name] \
                        and self._of_new_modules(binding.value, binding):
                    found.setdefault(name, []).append(binding)
                elif _empty_container(binding.value) is not None:
                    found.setdefault(name, []).append(binding)
                elif self._listed(binding.value, binding.ctx.scope):
                    self._lists.add(id(binding))
                    found.setdefault(name, []).append(binding)
        return found

    def _listed(self, value, scope, depth: int = 0) -> bool:
        """``value`` is a list of modules built right there that nothing else holds: a local
        name of the method (``modules = []`` filled with ``modules.append(nn.Linear(...))``,
        or ``convs = [nn.Conv1d(...) for k in ks]``) used for nothing but that, or a call of a
        method or top-level function of this file every ``return`` of which gives one
        (``self.blocks = self._make_blocks(n)``, ``make_layers(cfg)``; issue 28)."""
        if scope is None or depth > 3:
            return False
        if isinstance(value, cst.Name):
            return self._local_list(value.value, scope)
        if not isinstance(value, cst.Call):
            return False
        placement = self.analysis.placement
        helper = placement.method_called(value, scope) or placement.helper_called(value, scope)
        if helper is None or not helper.returns:
            return False
        for returned, ctx in helper.returns:
            if isinstance(returned, (cst.List, cst.ListComp)) and self._of_new_modules(
                    returned, None) and self._holds_modules(returned, ctx.scope):
                continue
            if not self._listed(returned, ctx.scope, depth + 1):
                return False
        return True

    def _holds_modules(self, value, scope) -> bool:
        items = [value.elt] if isinstance(value, cst.ListComp) else _elements(value)
        if isinstance(value, cst.ListComp):
            scope = next((s for s in self.analysis.collected.scopes if s.node is value), scope)
        return all(self.kinds.is_module(self.kinds.kind_of(item, scope)) for item in items)

    def _local_list(self, name: str, scope) -> bool:
        """The local ``name`` of ``scope`` (a function) is bound once, to a list of new
        modules or to an empty list filled with new modules, and read only to be filled,
        returned or stored on ``self``."""
        if scope.kind != "function" or scope.resolve(name) is not scope:
            return False
        bindings = scope.bindings.get(name, ())
        if len(bindings) != 1 or bindings[0].how != ASSIGN or bindings[0].path:
            return False
        value = bindings[0].value
        modules = 0
        if isinstance(value, (cst.List, cst.ListComp)) and _elements(value) or \
                isinstance(value, cst.ListComp):
            if not (self._of_new_modules(value, None) and self._holds_modules(value, scope)):
                return False
            modules += 1
        elif _empty_container(value) != _EMPTY_LIST:
            return False
        allowed = set()
        body = scope.node.body
        for node in walk_code(body, into_functions=True):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and isinstance(node.func.value, cst.Name) and node.func.value.value == name:
                if node.func.attr.value not in ("append", "insert") or not node.args:
                    return False
                if not _is_new_module(self.kinds, node.args[-1].value, scope, node):
                    return False
                allowed.add(id(node.func.value))
                modules += 1
            elif isinstance(node, cst.Assign) and isinstance(node.value, cst.Name) \
                    and node.value.value == name:
                if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Attribute):
                    return False
                allowed.add(id(node.value))
            elif isinstance(node, cst.Return) and isinstance(node.value, cst.Name) \
                    and node.value.value == name:
                allowed.add(id(node.value))
            elif isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Name) \
                    and node.target.value == name:
                allowed.add(id(node.target))
            elif isinstance(node, cst.Attribute):
                allowed.add(id(node.attr))  # (``self.convs``: an attribute's name)
        if not modules or (modules == 1 and len(_elements(value)) == 1):
            return False  # (one module hidden on purpose: ``teacher = [Teacher().eval()]``)
        return all(id(node) in allowed for node in walk_code(body, into_functions=True)
                   if isinstance(node, cst.Name) and node.value == name)

    def _of_new_modules(self, value, binding: Optional[Binding]) -> bool:
        """Every item is a module built right there (``nn.Linear(...)``, ``Block(cfg)``), not a
        reference to one registered elsewhere."""
        items = _built_items(value)
        return bool(items) and all(isinstance(item, cst.Call) for item in items)

    def _parameter_free_items(self, binding: Binding) -> bool:
        """Every module the container's literal or comprehension builds holds no parameters
        or buffers and does not switch with ``train()``/``eval()``
        (``ModuleClasses.parameter_free``)."""
        items = _built_items(binding.value)
        modules = self.analysis.modules
        return bool(items) and all(
            modules.parameter_free(item, binding.ctx.scope) for item in items)

    def _check_class(self, state: ModuleState, candidates: Dict[str, List[Binding]]) -> Iterator[Violation]:
        info = state.info
        uses = _ClassUses(self, info, set(candidates))
        if uses.registers_dynamically:
            return  # add_module(f"block{i}", block): the items may be registered after all
        init_methods = self.analysis.modules.init_methods(info)
        for name, bindings in candidates.items():
            if name in uses.wrapped or name in uses.moved or name in uses.unknown_fill:
                continue
            if not any(method not in init_methods for method in uses.read_in.get(name, ())):
                continue  # never used while the module runs
            if len(bindings) != len(info.attributes[name]):
                continue  # also bound to something else
            empty = [b for b in bindings if _empty_container(b.value) is not None]
            full = [b for b in bindings if b not in empty]
            filled = name in uses.filled
            if full and not filled and all(self._parameter_free_items(b) for b in full):
                continue  # ``[nn.AvgPool1d(k), ...]``: nothing the container hides from torch
            if not full and not filled:
                continue
            if not filled and all(len(_elements(b.value)) == 1 for b in full):
                # one-item literals never added to: the known trick of hiding a module from
                # ``parameters()`` (``self.teacher = [Teacher().eval()]``)
                continue
            for binding in full + (empty if filled else []):
                kind = "ModuleList" if id(binding) in self._lists else \
                    self._container_kind(binding.value, uses.string_keys.get(name, True))
                owner = binding.node.value.value if isinstance(binding.node, cst.Attribute) else "self"
                plain = "dict" if kind == "ModuleDict" or isinstance(binding.value, (cst.Dict, cst.DictComp)) \
                    else "list"
                yield Violation(
                    binding.node,
                    self.PLAIN_CONTAINER(
                        owner=owner, name=name, module=info.name, plain=plain,
                        container="ModuleDict" if plain == "dict" else "ModuleList"),
                    fix=WrapContainer(binding.value, binding.ctx.scope, kind)
                    if kind is not None and isinstance(binding.node, cst.Attribute) else None,
                )

    @staticmethod
    def _container_kind(value, string_keys: bool) -> Optional[str]:
        """The registering container to wrap ``value`` in, or None (no fix)."""
        if isinstance(value, (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp)):
            return "ModuleList"
        if isinstance(value, cst.Dict):
            keys_ok = all(isinstance(e, cst.DictElement) and string_value(e.key) is not None
                          for e in value.elements)
            return "ModuleDict" if keys_ok and string_keys else None
        if isinstance(value, cst.Call):
            return {"list": "ModuleList", "dict": "ModuleDict" if string_keys else None}.get(
                _empty_container(value))
        return None


class _ClassUses:
    """How a class's methods use its candidate containers, from one walk of each method."""

    def __init__(self, rule: UnregisteredSubmoduleContainer, info: ClassInfo, names: Set[str]) -> None:
        self.rule = rule
        self.names = names
        self.read_in: Dict[str, Set[str]] = {}  # name -> methods that read it
        self.filled: Set[str] = set()  # names given module items
        self.unknown_fill: Set[str] = set()  # something that may not be a module is added
        self.string_keys: Dict[str, bool] = {}  # every item assignment uses a string key
        self.wrapped: Set[str] = set()  # passed to Sequential / ModuleList / ModuleDict
        self.moved: Set[str] = set()  # its items are moved by the class itself
        self.registers_dynamically = False
        for method in info.methods.values():
            if method.self_name is not None:
                self._walk(method)

    def _container(self, expr, self_name: str) -> Optional[str]:
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
                and expr.value.value == self_name and expr.attr.value in self.names:
            return expr.attr.value
        return None

    def _mentioned(self, expr, self_name: str) -> Set[str]:
        return {name for node in walk_code(expr, into_functions=True)
                for name in [self._container(node, self_name)] if name is not None}

    def _walk(self, method) -> None:
        self_name = method.self_name
        scope = method.scope
        for node in walk_code(method.node.body, into_functions=True):
            name = self._container(node, self_name)
            if name is not None:
                self.read_in.setdefault(name, set()).add(method.name)
            if isinstance(node, cst.Call):
                self._call(node, self_name, scope)
            elif isinstance(node, cst.Assign):
                for target in node.targets:
                    target = target.target
                    if isinstance(target, cst.Subscript):
                        owner = self._container(target.value, self_name)
                        if owner is not None:
                            self._fill(owner, node.value, scope, node)
                            key = target.slice[0].slice if len(target.slice) == 1 else None
                            if not (isinstance(key, cst.Index) and (
                                    string_value(key.value) is not None
                                    or isinstance(key.value, cst.FormattedString))):
                                self.string_keys[owner] = False
            elif isinstance(node, (cst.For, cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
                iterables = [node.iter] if isinstance(node, cst.For) else \
                    [f.iter for f in for_clauses(node.for_in)]
                over = set().union(*(self._mentioned(i, self_name) for i in iterables))
                if over and any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
                                and n.func.attr.value in _MOVES for n in walk_code(node)):
                    self.moved |= over  # ``for m in self.models: m.to(device)``

    def _call(self, call: cst.Call, self_name: str, scope) -> None:
        func = call.func
        callee = last_name(func) or ""
        if callee in _DYNAMIC_REGISTRATION:
            # the name: add_module(name, module), setattr(self, name, module)
            name_at = 1 if callee == "setattr" and len(call.args) > 1 else 0
            if not call.args or string_value(call.args[name_at].value) is None:
                self.registers_dynamically = True
        if isinstance(func, cst.Attribute):
            owner = self._container(func.value, self_name)
            if owner is not None and func.attr.value in _FILLING_METHODS:
                items = [a.value for a in call.args]
                if func.attr.value == "insert":
                    items = items[1:]
                if func.attr.value == "extend":
                    items = [e for item in items for e in (_elements(item) if isinstance(
                        item, (cst.List, cst.Tuple)) else [item])]
                for item in items:
                    self._fill(owner, item, scope, call, extend=func.attr.value == "extend")
            elif func.attr.value in _MOVES:
                self.moved |= self._mentioned(func.value, self_name)
        if callee in _REGISTERING_CONTAINERS or callee in _DYNAMIC_REGISTRATION:
            for arg in call.args:
                self.wrapped |= self._mentioned(arg.value, self_name)

    def _fill(self, owner: str, item, scope, filling: cst.CSTNode, extend: bool = False) -> None:
        if isinstance(item, (cst.ListComp, cst.GeneratorExp)) and extend:
            item = item.elt
        if self._is_new_module(item, scope, filling):
            self.filled.add(owner)
        else:
            self.unknown_fill.add(owner)

    def _is_new_module(self, item, scope, filling: cst.CSTNode) -> bool:
        return _is_new_module(self.rule.kinds, item, scope, filling)


def _is_new_module(kinds, item, scope, filling: cst.CSTNode) -> bool:
    """``item`` is a module built right there (a call, or a local name bound only to
    such calls and handed nowhere else)."""
    if isinstance(item, cst.Call):
        return kinds.is_module(kinds.kind_of(item, scope))
    if isinstance(item, cst.Name) and scope is not None:
        owner = scope.resolve(item.value)
        if owner is not scope:
            return False
        bindings = owner.bindings.get(item.value, ())
        return bool(bindings) and all(
            b.how == ASSIGN and not b.path and isinstance(b.value, cst.Call)
            and kinds.is_module(kinds.kind_of(b.value, b.ctx.scope)) for b in bindings) \
            and not _also_registered(item.value, scope, filling)
    return False


def _also_registered(name: str, scope, filling: cst.CSTNode) -> bool:
    """The local module is also handed elsewhere, where it may be registered: assigned as
    a whole (``self.conv = conv``), passed to a call other than the one that fills the
    container, or put in another container. Setting its own attributes
    (``down.block = block``) or calling it is not handing it elsewhere."""
    body = scope.node.body if isinstance(scope.node, cst.FunctionDef) else scope.node

    def is_name(node) -> bool:
        return isinstance(node, cst.Name) and node.value == name

    for node in walk_code(body, into_functions=True):
        if isinstance(node, (cst.Assign, cst.AnnAssign)) and node is not filling \
                and is_name(node.value):
            return True
        if isinstance(node, cst.Call) and node is not filling:
            for arg in node.args:
                value = arg.value
                items = [e.value for e in value.elements] if isinstance(
                    value, (cst.List, cst.Tuple)) else [value]
                if any(is_name(item) for item in items):
                    return True
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)) and any(
                is_name(e.value) for e in node.elements):
            return True
        if isinstance(node, cst.Dict) and any(
                isinstance(e, cst.DictElement) and is_name(e.value) for e in node.elements):
            return True
    return False


def _built_items(value) -> list:
    """What a container value builds its items from: a comprehension's element (a dict
    comprehension's value), or the items of a display (``_elements``)."""
    if isinstance(value, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
        return [value.elt]
    if isinstance(value, cst.DictComp):
        return [value.value]
    return _elements(value)


def _elements(value) -> list:
    if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
        return [e.value for e in value.elements if not isinstance(e, cst.StarredElement)]
    if isinstance(value, cst.Dict):
        return [e.value for e in value.elements if isinstance(e, cst.DictElement)]
    return []


def _empty_container(value) -> Optional[str]:
    if isinstance(value, cst.List) and not value.elements:
        return _EMPTY_LIST
    if isinstance(value, cst.Dict) and not value.elements:
        return _EMPTY_DICT
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and not value.args \
            and value.func.value in (_EMPTY_LIST, _EMPTY_DICT):
        return value.func.value
    return None


def _nn_alias(analysis: Analysis, scope: Scope) -> Optional[str]:
    """A module-level name bound only to ``torch.nn`` that ``scope`` sees."""
    module_scope = analysis.collected.module_scope
    for name, bindings in sorted(module_scope.bindings.items()):
        if bindings and all(b.how == IMPORT and b.value == "torch.nn" for b in bindings) \
                and scope.resolve(name) is module_scope:
            return name
    return None

