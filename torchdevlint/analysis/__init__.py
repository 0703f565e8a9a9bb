"""The shared analysis every rule asks: what a value is, what a name refers to, what guards it.

This module is the facade: rules import from here only (``from torchdevlint.analysis import
Analysis, K, api, CallSite, walk_code``), never from the modules behind it, so that those can
be split and rearranged without touching a rule. A test reads the imports to keep it so.
"""

from __future__ import annotations

import weakref
from collections import Counter
from typing import Callable, Dict, FrozenSet, List, Optional, Tuple

import libcst as cst

from torchdevlint import textsearch
from torchdevlint import torch_api as api
from torchdevlint import torch_version
from torchdevlint.analysis import kinds as K  # noqa: F401 (facade)
from torchdevlint.analysis.callees import CalleeSummary, Callees  # noqa: F401 (facade)
from torchdevlint.analysis.builder import (
    Builder, Collected, decorator_callee, holds, iter_children, reads_name, walk_code,
)
from torchdevlint.analysis.devices import (  # noqa: F401 (facade)
    Devices, device_names_visible, is_device_name, move_device_argument, names_a_length,
)
from torchdevlint.analysis.flow import (  # noqa: F401 (facade)
    UNDECIDED, DeviceTrace, OrderedWalk, reached_without,
)
from torchdevlint.analysis.gradmode import GradMode
from torchdevlint.analysis.guards import Guards
from torchdevlint.analysis.modules import (  # noqa: F401 (facade)
    INDEX_ARGUMENT_ERROR, INDEX_ERROR, RNN_STATE_ERROR, SAME_DEVICE_ERROR, Meeting, ModuleClasses,
    ModuleState,
)
from torchdevlint.analysis.kinds import KindInference
from torchdevlint.analysis.placement import (  # noqa: F401 (facade)
    OnAccelerator, OnCPU, OnModuleDevice, Placement, argument_for_parameter, assignments_of, copied_to_host,
    returns_torch_tensors, unpacked_element, updates_itself,
)
from torchdevlint.analysis import testcode
from torchdevlint.analysis.shapes import (  # noqa: F401 (facade)
    data_of_unknown_shape, factory_dimensions, literal_rank, makes_an_empty_tensor, method_rank,
    rank_after_index, sizes_rank,
)
from torchdevlint.analysis.references import References
from torchdevlint.analysis.targets import Targets
from torchdevlint.analysis.model import (  # noqa: F401 (facade)
    ARITHMETIC_OPERATORS, ASSIGN, AUGMENT, EXPECTS_FAILURE, FOR, GRAD_OFF, GRAD_ON, GRAD_RUNTIME, HANDLES_FAILURE, IMPORT, PARAM,
    Binding, CallSite, Ctx, DefaultOf, exclusive_branches, expects_failure, failure_expected_or_handled, grad_mode_set_by,
    ClassInfo, FunctionInfo, Scope, dotted_name, for_clauses, is_number, keyword_value, last_name,
    call_argument, checked_index_operands, is_elementwise_comparison, positional_items, root_name,
    says_it_fails, source_of, string_value, with_item_expects_failure,
)

# What rules may use, besides ``Analysis`` itself.
__all__ = [
    "ARITHMETIC_OPERATORS",
    "Analysis", "FACTS", "UndeclaredFact", "K", "api", "walk_code", "decorator_callee", "iter_children", "holds",
    "reads_name",
    "ASSIGN", "AUGMENT", "FOR", "IMPORT", "PARAM", "Binding", "CallSite", "ClassInfo", "Ctx", "FunctionInfo", "Scope",
    "dotted_name", "for_clauses", "is_number", "last_name", "root_name", "source_of", "string_value",
    "GRAD_OFF", "GRAD_ON", "GRAD_RUNTIME", "grad_mode_set_by", "expects_failure", "failure_expected_or_handled", "says_it_fails",
    "with_item_expects_failure",
    "is_device_name", "device_names_visible", "move_device_argument", "names_a_length",
    "ModuleState", "Meeting",
    "DeviceTrace", "OrderedWalk", "UNDECIDED", "reached_without", "OnAccelerator", "OnCPU", "OnModuleDevice", "copied_to_host",
    "literal_rank", "method_rank", "rank_after_index", "sizes_rank", "returns_torch_tensors",
    "unpacked_element", "updates_itself", "INDEX_ERROR", "RNN_STATE_ERROR", "positional_items", "call_argument", "is_elementwise_comparison", "checked_index_operands",
    "INDEX_ARGUMENT_ERROR", "SAME_DEVICE_ERROR",
]


# The facts a rule can declare (``Rule.facts``), one per provider behind this facade. The
# scopes, bindings and call sites of the one traversal (``collected``) need no declaration.
FACTS: FrozenSet[str] = frozenset(
    ("kinds", "placement", "guards", "devices", "targets", "grad", "modules", "project"))


class UndeclaredFact(RuntimeError):
    """A rule asked for a fact it did not declare."""


class Analysis:
    """One parsed file, traversed once; rules query it."""

    def __init__(self, module: cst.Module, collected: Optional[Collected] = None,
                 facts: Optional[FrozenSet[str]] = None) -> None:
        """``facts``: the providers the rules that will ask declared (``Rule.facts``); asking
        for another one is a bug in the rule (``UndeclaredFact``). None: every fact."""
        self.module = module
        self.collected: Collected = collected if collected is not None else Builder().build(module)
        if facts is not None and not facts <= FACTS:
            raise ValueError(f"unknown facts: {sorted(facts - FACTS)} (known: {sorted(FACTS)})")
        self.facts = FACTS if facts is None else facts
        # The torch version the project targets (``torch-version``): which device idiom the
        # messages propose and the fixes write.
        self.torch_version: Tuple[int, int] = torch_version.DEFAULT
        # The text the module was parsed from, when the front end has it: ``module.code``
        # regenerates it from the tree (0.65 s for a 5,000-line file).
        self.source: Optional[str] = None
        # The file's path, when the front end has one: what the project index (the facts of
        # the project's other files, ``torchdevlint.project_index``) is found by.
        self.path: Optional[str] = None
        self._project = None  # the ProjectView, looked up on first use (False: none)
        self._mentions: Optional[Counter] = None  # (``mentions``: the text's word counts)
        self._references: Optional[References] = None  # (``references``)
        self._kinds = KindInference(self.collected)  # lazy inside: a file nobody asks pays nothing
        # The fact providers behind this facade, each built on first use: a file whose
        # selected rules never ask a question never pays for its answers.
        self._guards: Optional[Guards] = None
        self._placement: Optional[Placement] = None
        self._callees: Optional[Callees] = None
        self._devices: Optional[Devices] = None
        self._grad: Optional[GradMode] = None
        self._modules: Optional[ModuleClasses] = None
        self._targets: Optional[Targets] = None

    @classmethod
    def of_fragment(cls, module: cst.Module, node: cst.CSTNode, ctx: Ctx,
                    outer: "Analysis") -> "Analysis":
        """The analysis of ``node`` (an expression of ``module``, a fragment parsed on its own)
        as if it stood where ``ctx`` is in ``outer``'s module: names resolve in that module."""
        builder = Builder()
        builder.out.module_scope = outer.collected.module_scope
        builder.out.imported_as = outer.collected.imported_as
        builder.walk(node, ctx)
        fragment = cls(module, builder.out, outer.facts)
        fragment.torch_version = outer.torch_version
        return fragment

    def release(self) -> None:
        """Break the analysis's reference cycles (scopes and their bindings, functions and
        their scopes, classes and their methods), so that dropping the last reference frees
        it and the tree it points into at once, without waiting for (and paying for) the
        cyclic garbage collector. The analysis cannot be used afterwards."""
        collected = self.collected
        self._targets = self._guards = self._placement = self._devices = self._project = None
        collected._sites = None
        collected.item_stores = []
        self._callees = None
        self._grad = self._modules = None
        for scope in collected.scopes:
            scope.bindings = {}
            scope.func = None
        for info in collected.functions:
            info.scope = None
            info.returns = []
            info.return_points = []
        for info in collected.classes:
            info.scope = None
            info.methods = {}
            info.attributes = {}

    @property
    def targets(self) -> Targets:
        """Canonical file targets (TDL003's round trips); built on first use."""
        self._declared("targets")
        if self._targets is None:
            self._targets = Targets(self.collected)
        return self._targets

    # Shorthands the rules use.
    def qualname(self, expr: cst.BaseExpression, scope: Scope) -> Optional[str]:
        return self.kinds.qualname(expr, scope)

    def kind_of(self, expr: cst.BaseExpression, scope: Scope):
        return self.kinds.kind_of(expr, scope)

    def makes_tensor_parts(self, value, scope: Scope) -> bool:
        """``torch.meshgrid(...)`` and the like (``torch_api.TENSOR_TUPLE_FUNCTIONS``): a
        tuple of tensors, each where the call's tensors are and with at least one of their
        dimensions, so that each part unpacked from it (``yv, xv = torch.meshgrid(...)``)
        is one."""
        return isinstance(value, cst.Call) and \
            api.is_tensor_parts_function(self.kinds.qualname(value.func, scope) or "")

    def is_loss(self, func: cst.BaseExpression, scope: Scope) -> bool:
        """Whether calling ``func`` computes a loss (``loss_evidence``)."""
        return self.loss_evidence(func, scope) is not None

    def loss_evidence(self, func: cst.BaseExpression, scope: Scope, depth: int = 0,
                      by_name: bool = True) -> Optional[str]:
        """How the analysis knows that calling ``func`` computes a loss, in words for a
        message, or None. By provenance first (issue 28): a torch.nn loss class, built in
        place (``nn.CrossEntropyLoss()(out, y)``) or a module of one (a class of this file
        deriving from one, or from ``_Loss``), a torch.nn.functional loss function, a name or
        ``self`` attribute every assignment of which builds such a module, a parameter every
        call of the function passes one; then, where provenance says nothing, by its name
        (``criterion``, ``loss_fn``), unless ``by_name`` is False (provenance only)."""
        if isinstance(func, cst.Call):
            return "a torch.nn loss" if self._builds_a_loss(func, scope) else None
        qualified = self.qualname(func, scope)
        if qualified is not None:
            return "a torch.nn.functional loss" if (
                qualified.startswith("torch.nn.functional.")
                and qualified.rpartition(".")[2] in api.LOSS_FUNCTIONS) else None
        name = last_name(func)
        if name is None:
            return None
        kind = self.kinds.kind_of(func, scope)
        if isinstance(kind, K.Instance) and self._class_is_loss(kind.info):
            return f"`{name}` is a `{kind.info.name}`, a loss class"
        assigned = assignments_of(func, scope, self.kinds)
        if any(not path and self._builds_a_loss(value, value_scope)
               for value, value_scope, path, _ in assigned):
            return f"`{name}` is a torch.nn loss"
        if isinstance(func, cst.Name) and not assigned and depth < 3:
            passed, function = self._passed_to_parameter(func.value, scope)
            if passed and all(self.loss_evidence(argument, site.ctx.scope, depth + 1, by_name)
                              is not None for argument, site in passed):
                return f"`{name}` is given a loss by every call of `{function}`"
        return f"`{name}` is named like a loss" if by_name and api.is_criterion_name(name) \
            else None

    def _builds_a_loss(self, value, scope: Scope) -> bool:
        """``nn.MSELoss()``, ``nn.MSELoss().to(device)``, ``FocalLoss(gamma=2)`` (a class of
        this file deriving from a loss class)."""
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value in api.MODULE_SELF_METHODS:
            value = value.func.value  # ``.to(device)``, ``.cuda()`` return the module
        if not isinstance(value, cst.Call):
            return False
        if api.is_loss_class(self.qualname(value.func, scope) or ""):
            return True
        kind = self.kinds.kind_of(value.func, scope)
        return isinstance(kind, K.ClassRef) and self._class_is_loss(kind.info)

    def _class_is_loss(self, info: ClassInfo) -> bool:
        """A class of this file deriving (through classes of this file) from a torch.nn loss
        class or from ``torch.nn.modules.loss._Loss``."""
        for cls in self.kinds.class_chain(info):
            for base in cls.bases:
                if api.is_loss_class(self.qualname(base, cls.ctx.scope) or ""):
                    return True
        return False

    def _passed_to_parameter(self, name: str, scope: Scope):
        """([(argument, call site)], the function's name) for a parameter of a plain function
        (``kinds.caller_arguments``); (None, "") for any other name."""
        owner = scope.resolve(name)
        if owner is None or owner.func is None or owner.kind != "function":
            return None, ""
        bindings = owner.bindings.get(name, ())
        if len(bindings) != 1 or bindings[0].how != PARAM:
            return None, ""
        return self.kinds.caller_arguments(bindings[0]), owner.func.name

    def loader_paths(self, iterable: cst.BaseExpression, scope: Scope,
                     depth: int = 0) -> List[tuple]:
        """What a ``for`` loop over ``iterable`` takes from data loaders: (path into the loop
        target, the loader expression) for each loader it iterates, through ``enumerate``
        (path ``(1,)``), ``zip`` (``(i,)``) and transparent wrappers (``tqdm``), also when
        the wrapped loader was bound to a name first (``pbar = tqdm(enumerate(loader))``,
        ``for i, (x, y) in pbar``); empty when it iterates none. ``for x in loader`` gives
        ``[((), loader)]``."""
        if isinstance(iterable, cst.Call):
            name = last_name(iterable.func)
            positional = [a.value for a in iterable.args if a.keyword is None and not a.star]
            if name == "enumerate" and positional:
                return [((1,) + path, loader)
                        for path, loader in self.loader_paths(positional[0], scope, depth)]
            if name == "zip":
                return [((i,) + path, loader) for i, arg in enumerate(positional)
                        for path, loader in self.loader_paths(arg, scope, depth)]
            if name in api.TRANSPARENT_ITER_WRAPPERS and positional:
                return self.loader_paths(positional[0], scope, depth)
        if self.kinds.kind_of(iterable, scope) is K.LOADER:
            return [((), iterable)]
        if isinstance(iterable, cst.Name) and depth < 2:
            return self._wrapped_loader_paths(iterable, scope, depth)
        return []

    def _wrapped_loader_paths(self, name: cst.Name, scope: Scope, depth: int) -> List[tuple]:
        """The loader paths of the one wrapper call ``name`` is bound to (``pbar =
        tqdm(enumerate(loader), total=n)``): only a wrapper, not any iterable of a loader's
        values, and only when every binding of the name is that call."""
        bindings = scope.lookup(name.value)
        if len(bindings) != 1:
            return []
        binding = bindings[0]
        value = binding.value
        if binding.how != ASSIGN or binding.path or not isinstance(value, cst.Call):
            return []
        if last_name(value.func) not in api.LOADER_WRAPPERS:
            return []
        return self.loader_paths(value, binding.ctx.scope, depth + 1)

    def is_test_module(self) -> bool:
        """A pytest or unittest module (``testcode.is_test_module``)."""
        return testcode.is_test_module(self.collected, self.path)

    def in_test_code(self, ctx: Ctx) -> bool:
        """Code a test of this (test) module runs: a test, its helpers, fixtures, classes,
        and a function only tests call (``Guards.called_only_where``)."""
        return self.is_test_module() and self.holds_where_called(
            ctx, lambda where: testcode.in_test_code(self.collected, where), "test")

    def holds_where_called(self, ctx: Ctx, holds: Callable[[Ctx], bool], what: str) -> bool:
        """Whether ``holds`` is true of ``ctx``, or, for a plain function around it, of the
        context of every call of that function (``Guards.called_only_where``, followed from
        caller to caller): the context a helper moved out of its caller keeps (issue 28:
        a test helper only tests call, a loader only a ``Dataset`` method calls). ``what``
        names the question, for the memo."""
        if holds(ctx):
            return True
        func = ctx.func
        while func is not None:
            if func.cls is None and self._guards_provider().called_only_where(
                    func.name, lambda where: self.holds_where_called(where, holds, what), what):
                return True
            func = func.ctx.func
        return False

    def call_sites(self, names, qualified_names=()):
        """Calls whose callee's last name is in ``names`` or is an import alias of one of
        ``qualified_names`` (``from torch import load as L``)."""
        wanted = set(names)
        for qualified in qualified_names:
            wanted.update(self.collected.imported_as.get(qualified, ()))
        sites = []
        for name in wanted:
            sites.extend(self.collected.calls_by_name.get(name, ()))
        return sites

    def torch_aliases(self) -> list:
        """Module-level names bound only to ``import torch``, ``torch`` first: what a fix
        writes for the torch module, and what a message proposing that fix names."""
        module_scope = self.collected.module_scope
        aliases = [name for name, bindings in module_scope.bindings.items()
                   if bindings and all(b.how == IMPORT and b.value == "torch" for b in bindings)]
        aliases.sort(key=lambda name: (name != "torch", name))
        return aliases

    def torch_alias_at(self, scope: Scope) -> str:
        """The name a fix in ``scope`` uses for torch when the alias is bound by then (see
        ``FixContext.torch_reference``), else ``torch``, which the fix then imports."""
        module_scope = self.collected.module_scope
        for alias in self.torch_aliases():
            if scope.resolve(alias) is module_scope:
                return alias
        return "torch"

    # -- the providers ------------------------------------------------------------------
    # Each is built on first use and asked for by name; a rule may ask only for what its
    # ``facts`` declare. Providers use one another freely (guards need kinds).

    def _declared(self, fact: str) -> None:
        if fact not in self.facts:
            raise UndeclaredFact(f"the {fact!r} fact was asked for, but the selected rules "
                                 f"declare only {sorted(self.facts)}: add it to the rule's facts")

    def mentions(self, name: str) -> Optional[int]:
        """How often the text the module was parsed from holds ``name`` as a word (in code,
        strings and comments alike), or None without the text. Every reference to a name is
        such a word, so where this count equals the references a question already knows of,
        there is no other, and the walk of the whole module that would show it
        (``references``) is spared (``Guards._only_referenced_at``, TDL010's callers)."""
        if self.source is None:
            return None
        if self._mentions is None:
            self._mentions = textsearch.word_counts(self.source)
        return self._mentions[name]

    @property
    def references(self) -> References:
        """Where the module names each name (``analysis.references``): one walk of the whole
        module for the file, on first use, for the questions ``mentions`` cannot settle."""
        if self._references is None:
            self._references = References(self.module)
        return self._references

    def site_of(self, call: cst.Call) -> Optional[CallSite]:
        """The call site the traversal recorded for ``call`` (its context, its source order,
        the loop around it), or None; one dictionary for the file, built on first use."""
        return self.collected.site_of(call)

    @property
    def kinds(self) -> KindInference:
        self._declared("kinds")
        return self._kinds

    @property
    def guards(self) -> Guards:
        self._declared("guards")
        return self._guards_provider()

    def _guards_provider(self) -> Guards:
        if self._guards is None:
            self._guards = Guards(self.module, self.collected, self._kinds, self.torch_version,
                                  project=self._project_view, may_define=self._may_define,
                                  mentions=self.mentions,
                                  references=lambda: self.references,
                                  project_of_calls=self._project_of_calls,
                                  test_module=self.is_test_module)
        return self._guards

    @property
    def project(self):
        """What the project's other files say (``project_index.ProjectView``), or None for
        a file outside a project, read from standard input, or with the index turned off."""
        self._declared("project")
        return self._project_view()

    def _may_define(self, qualified: str) -> bool:
        if not self.path:
            return False
        from torchdevlint.project_index import may_define
        return may_define(self.path, qualified)

    def _project_view(self):
        if self._project is None:
            from torchdevlint.project_index import view_for
            self._project = (view_for(self.path) if self.path else None) or False
        return self._project or None

    def _project_of_calls(self):
        """The project's view for placement across calls: only in a project (a root with a
        marker, ``project_index.in_project``), so that asking about a function's callers never
        builds the index of a directory of loose files."""
        from torchdevlint.project_index import in_project
        return self._project_view() if self.path and in_project(self.path) else None

    def project_class(self, qualified: str) -> bool:
        """Whether ``qualified`` (this file's import of a name) is a class of another file of
        the project (``ProjectView.defines_class``); asked only in a project, as the callers
        of a function are (``_project_of_calls``)."""
        self._declared("project")
        project = self._project_of_calls()
        return project is not None and project.defines_class(qualified)

    def shipped_checkpoint(self, target: cst.BaseExpression, scope: Scope,
                           ctx: Optional[Ctx] = None):
        """(the file, the accelerator types of its storages: empty when they are all on the
        CPU, or it holds no tensor) of the checkpoint the project ships that ``target``
        names: a relative path fixed in the code (``Targets.fixed_path``), read without torch
        (``ProjectView.shipped_storages``); or, for a parameter of the function of ``ctx``,
        the paths every call of it passes (``Guards.only_call_sites``: captum's
        ``train_load_save_model(model, "models/california_model.pt")``), the first file
        saved on a device, else the first. None when a run chooses a path, or no readable
        ``torch.save`` file is there."""
        self._declared("targets")
        project = self.project
        if project is None:
            return None
        paths = self._fixed_paths(target, scope, ctx)
        if not paths:
            return None
        from torchdevlint.checkpoints import device_locations
        found = []
        for path, beside_file in paths:
            shipped = project.shipped_storages(path, beside_file)
            if shipped is None:
                return None
            found.append((shipped[0], device_locations(shipped[1])))
        return next((item for item in found if item[1]), found[0])

    def _fixed_paths(self, target, scope: Scope, ctx: Optional[Ctx]) -> list:
        fixed = self.targets.fixed_path(target, scope, self.kinds.qualname)
        if fixed is not None:
            return [fixed] if fixed[0] else []
        func = ctx.func if ctx is not None else None
        if func is None or func.cls is not None or not isinstance(target, cst.Name) or \
                target.value not in func.param_names or len(scope.lookup(target.value)) != 1:
            return []
        sites = self.guards.only_call_sites(func.name)
        index = func.param_names.index(target.value)
        paths = []
        for site in sites or ():
            passed = call_argument(site.call, index, target.value)
            fixed = self.targets.fixed_path(passed, site.ctx.scope, self.kinds.qualname) \
                if passed is not None else None
            if fixed is None or not fixed[0]:
                return []
            paths.append(fixed)
        return paths

    def class_moved_in_project(self, name: str) -> Optional[str]:
        """``file:line`` where the project moves an instance of this file's ``nn.Module``
        class ``name`` to an accelerator (``.to(device)``, ``.cuda()``), or None: no code of
        the project does (TDL005, TDL007 ask)."""
        project = self.project
        return project.class_moved(name) if project is not None else None

    def module_meets_accelerator(self, info) -> Optional[Tuple[str, Optional[str]]]:
        """(what shows that instances of the module class ``info`` meet an accelerator, in a
        message's words; the other file of the project that moves it, where this file shows
        it too, else None), or None when nothing does: the file's own evidence first
        (``ModuleClasses.accelerator_evidence``), else the project's. The one answer for
        TDL007's and TDL008's module evidence."""
        evidence = self._module_classes().accelerator_evidence(info)
        moved = self.class_moved_in_project(info.name) if info.ctx.scope.kind == "module" else None
        if evidence is None and moved is None:
            return None
        if evidence is None:  # only another file of the project shows it
            return f"another file moves it to an accelerator: {moved}", None
        return evidence, moved

    def on_module_device(self, expr: cst.BaseExpression, scope: Scope) -> Optional[OnModuleDevice]:
        """Evidence (``OnModuleDevice``) that ``expr``, read in a method of an ``nn.Module``
        class of this file that runs once the module is built, is computed from the module's
        own state (``ModuleClasses.state_only``) and that the module meets an accelerator
        (``module_meets_accelerator``); else None."""
        method = scope.code_owner().func
        if method is None or method.cls is None or method.scope is not scope:
            return None
        info = method.cls
        if self._kinds.class_is_module(info) is not True or info.methods.get(method.name) is not method:
            return None
        modules = self._module_classes()
        if method.name in modules.init_methods(info):
            return None
        if not modules.state_only(modules.state(info), method).carries(expr):
            return None
        shown = self.module_meets_accelerator(info)
        return OnModuleDevice(expr, info.name, shown[0]) if shown is not None else None

    @property
    def placement(self) -> Placement:
        self._declared("placement")
        return self._placement_provider()

    def _placement_provider(self) -> Placement:
        if self._placement is None:
            self._placement = Placement(self.collected, self._kinds, self._device_provider,
                                        self._project_of_calls, self.is_loss,
                                        self._weighted_submodule)
        return self._placement

    @property
    def devices(self) -> Devices:
        self._declared("devices")
        return self._device_provider()

    @property
    def grad(self) -> GradMode:
        self._declared("grad")
        if self._grad is None:
            self._grad = GradMode()
        return self._grad

    @property
    def modules(self) -> ModuleClasses:
        self._declared("modules")
        return self._module_classes()

    def _module_classes(self) -> ModuleClasses:
        if self._modules is None:
            # (a weak reference: the module classes kept a bound method of this analysis
            # would tie it, and the tree, into a cycle that only the collector frees)
            self._modules = ModuleClasses(self.collected, self._kinds, self._device_provider(),
                                          weakref.WeakMethod(self._accelerator_evidence),
                                          weakref.WeakMethod(self._meetings_in_call))
        return self._modules

    def _accelerator_evidence(self, expr: cst.BaseExpression, scope: Scope):
        """``Placement.on_accelerator`` for the module classes (what a caller gives an
        instance), asked whatever facts the rules declared: every rule that reads module state
        gets the same answer."""
        return self._placement_provider().on_accelerator(expr, scope)

    def _meetings_in_call(self, call: cst.Call, scope: Scope) -> list:
        """``Callees.meetings_in_call`` for the module classes: what a ``forward`` hands a
        function of the file (a helper, a static method, a custom autograd operation) that
        combines its arguments there."""
        return self._callee_provider().meetings_in_call(call, scope)

    def _weighted_submodule(self, info, name: str) -> bool:
        """Whether ``self.NAME`` of the module class ``info`` is a registered submodule that
        certainly holds parameters (moved with the model: ``model.embed`` of a moved
        ``model``; the placement asks)."""
        if self._kinds.class_is_module(info) is not True:
            return False
        modules = self._module_classes()
        state = modules.state(info)
        return name in state.submodules and modules.has_parameters(state, name)

    def grad_recording(self, ctx: Ctx) -> Optional[bool]:
        """Whether autograd records at ``ctx`` (None: as the caller of its function)."""
        return self.grad.recording(ctx)

    def module_state(self, info) -> "ModuleState":
        """What an ``nn.Module`` class of this file registers and what it holds unregistered."""
        return self.modules.state(info)

    def model_wants_on_cpu(self, call: cst.Call, index: int, keyword: Optional[str],
                           scope: Scope) -> bool:
        """Whether the model called by ``call`` may want its argument (at ``index``, or
        ``keyword=``) on the CPU: its class's ``forward``, or when the model's class is
        unknown, that of any module class of this file, hands it to a function that wants it
        there (``pack_padded_sequence(x, lengths)``: ``ModuleClasses.cpu_inputs``)."""
        kind = self.kinds.kind_of(call.func, scope)
        if not isinstance(kind, K.Instance):
            # a model of a class from elsewhere given a length (``model(inputs,
            # input_lengths)``): packing or masks want it on the CPU, as far as this file can
            # tell (issue 28: kospeech's models, which read their lengths with ``.item()``)
            if keyword is not None:
                argument = keyword_value(call, keyword) if keyword != "**" else None
            else:
                positional = [a for a in call.args if a.keyword is None]
                argument = positional[index].value if 0 <= index < len(positional) \
                    and not any(a.star for a in positional[:index + 1]) else None
            if argument is not None and names_a_length(argument):
                return True
        classes = [kind.info] if isinstance(kind, K.Instance) else [
            info for info in self.collected.classes if "forward" in info.methods]
        wanted = keyword if keyword is not None else index
        return any(wanted in self.modules.cpu_inputs(info) for info in classes)

    def model_takes_as_rnn_state(self, call: cst.Call, index: int, keyword: Optional[str],
                                 scope: Scope) -> bool:
        """Whether the model ``call`` calls is an instance of a module class of this file whose
        ``forward`` hands its argument (at ``index``, or ``keyword=``) to a recurrent layer as
        its state (``ModuleClasses.rnn_state_inputs``), or a torch.nn RNN, LSTM or GRU itself
        (``rnn = nn.LSTM(d, h).to(device)``) given its state, ``hx``: ``rnn(x, (h0, c0))``."""
        kind = self.kinds.kind_of(call.func, scope)
        if not isinstance(kind, K.Instance):
            if keyword != "hx" and (keyword is not None or index != 1):
                return False
            built = self.placement.bindings_of(call.func, scope)
            return bool(built) and all(not path and self._builds_recurrent_layer(value, where)
                                       for value, where, path, _ in built)
        return (keyword if keyword is not None else index) in self.modules.rnn_state_inputs(
            kind.info)

    def _builds_recurrent_layer(self, value, scope: Scope) -> bool:
        """``nn.LSTM(d, h)``, moved or not (``.to(device)``, ``.cuda()``)."""
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                value.func.attr.value in api.ACCELERATOR_MOVE_METHODS:
            value = value.func.value
        return isinstance(value, cst.Call) and \
            (self.kinds.qualname(value.func, scope) or "").startswith("torch.nn.") and \
            last_name(value.func) in api.RECURRENT_MODULES

    def modules_moved_only_by_to(self):
        """The ``ModuleState`` of each module class of this file whose state only ``.to()``
        moves (see ``ModuleClasses.moved_only_by_to``)."""
        return self.modules.moved_only_by_to()

    def _device_provider(self) -> Devices:
        if self._devices is None:
            self._devices = Devices(self._kinds)
        return self._devices

    # -- placement: what a name holds at a given call -----------------------------------

    def reaching_bindings(self, name: str, site: CallSite):
        return self.placement.reaching_bindings(name, site)

    def kind_at(self, expr: cst.BaseExpression, site: CallSite):
        return self.placement.kind_at(expr, site)

    def on_accelerator(self, expr: cst.BaseExpression, scope: Scope):
        """Evidence (``OnAccelerator``: the call that put it there, and its device) that
        ``expr``'s value is on an accelerator where it is read, or None."""
        return self.placement.on_accelerator(expr, scope)

    def on_cpu(self, expr: cst.BaseExpression, scope: Scope):
        """Evidence (``OnCPU``: the call that put it there) that ``expr``'s value is a tensor
        on the CPU where it is read, or None."""
        return self.placement.on_cpu(expr, scope)

    def helper_called(self, call: cst.Call, scope: Scope):
        """The ``FunctionInfo`` of the plain function of this file that ``call`` calls by
        name, or None (``Placement.helper_called``)."""
        return self.placement.helper_called(call, scope)

    def object_method_called(self, call: cst.Call, scope: Scope):
        """The method of a class of this file (no ``nn.Module``) that ``call`` runs on an
        object, ``self.step(batch)``, or None (``Placement.object_method_called``)."""
        return self.placement.object_method_called(call, scope)

    def argument_for(self, call: cst.Call, function, name: str):
        """What ``call`` gives ``function`` for the parameter or object attribute ``name`` of
        its summary (``Placement.argument_for``)."""
        return self.placement.argument_for(call, function, name)

    def fed_to_model(self, info) -> list:
        """(tensor parameter, model parameter) pairs of a plain function of this file that
        calls the one with the other's value (``CalleeSummary.feeds``)."""
        return self.callee_summary(info).feeds

    def callee_summary(self, info) -> CalleeSummary:
        """What the plain function ``info`` of this file does with its parameters: returns a
        move of one, feeds one to the call of another, makes two meet in an operation
        (``callees.Callees``; each function walked once). Part of the placement fact."""
        self._declared("placement")
        return self._callee_provider().summary(info)

    def _callee_provider(self) -> Callees:
        if self._callees is None:
            self._callees = Callees(self._placement_provider())
        return self._callees

    def appended_to(self, name: str, scope: Scope, before: int, methods=("append",)):
        """The ``append`` calls (or those of ``methods``) of a list the function builds
        itself, as they reach the point ``before``, or None (``Placement.appended_to``)."""
        return self.placement.appended_to(name, scope, before, methods)

    # -- CUDA availability guards --------------------------------------------------------

    def is_guarded(self, ctx: Ctx) -> bool:
        return self.guards.is_guarded(ctx)

    def runs_only_with_cuda(self, ctx: Ctx) -> bool:
        """Code in ``ctx`` runs only where CUDA is there or asked for
        (``Guards.runs_only_with_cuda``)."""
        return self.guards.runs_only_with_cuda(ctx)

    def after_cuda_use(self, node: cst.CSTNode, ctx: Ctx) -> Optional[cst.CSTNode]:
        """The statement every run reaching ``node`` has run before it that fails without
        CUDA (an unconditional ``model.cuda()``), or None (``Guards.after_cuda_use``)."""
        return self.guards.after_cuda_use(node, ctx)

    def reached_after_cuda_use(self, node: cst.CSTNode, ctx: Ctx) -> bool:
        """Every run that reaches ``node`` has run a statement that fails without CUDA: in
        its function, or before every call of its function that can reach it, in this file
        and in the project's other files (``Guards.reached_after_cuda_use``)."""
        return self.guards.reached_after_cuda_use(node, ctx)

    def runs_only_without_cuda(self, ctx: Ctx) -> bool:
        """Code in ``ctx`` runs only where CUDA is not there nor asked for
        (``Guards.runs_only_without_cuda``)."""
        return self.guards.runs_only_without_cuda(ctx)

    def is_guard_test(self, expr: cst.CSTNode, scope: Scope, depth: int = 0) -> bool:
        return self.guards.is_guard_test(expr, scope, depth)

    def needs_no_accelerator_check(self, ctx: Ctx) -> bool:
        """Whether code in ``ctx`` only runs where an accelerator is there (or where its
        absence is expected or handled): ``Guards.is_guarded(ctx, accelerator=True)``."""
        return self.guards.is_guarded(ctx, accelerator=True)

    def live_branches(self, value: cst.IfExp, scope: Scope) -> tuple:
        """The branches of ``value`` that can run with the torch the project targets."""
        return self.guards.live_branches(value, scope)

    def is_accelerator_choice(self, value: cst.CSTNode, scope: Scope) -> bool:
        return self.guards.is_accelerator_choice(value, scope)

    def is_script(self) -> bool:
        return self.guards.is_script()

    def default_always_overridden(self, name: str, func: FunctionInfo) -> bool:
        return self.guards.default_always_overridden(name, func)

    def requires_cuda_throughout(self) -> bool:
        return self.guards.requires_cuda_throughout()

    # -- devices ------------------------------------------------------------------------

    def is_cpu_device(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> bool:
        return self.devices.is_cpu_device(expr, scope, depth)

    def is_dtype(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        return self.devices.is_dtype(expr, scope)
