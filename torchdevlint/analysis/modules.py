"""Module classes: what an ``nn.Module`` class of the file registers with torch (parameters,
buffers, submodules: what ``model.to(device)`` moves, ``parameters()`` lists and
``state_dict()`` saves) and what it holds that torch does not see (plain tensor attributes,
plain lists and dicts of modules). The ``modules`` fact.
"""

from __future__ import annotations

import weakref

from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

import libcst as cst

from torchdevlint import torch_api as api
from torchdevlint.analysis.builder import Collected, holds, walk_code
from torchdevlint.analysis.devices import Devices, move_device_argument
from torchdevlint.analysis.flow import UNDECIDED, DeviceTrace
from torchdevlint.analysis.kinds import (
    MODULE, TENSOR, ClassRef, FuncRef, Instance, KindInference, TupleKind,
)
from torchdevlint.analysis.model import (
    ARITHMETIC_OPERATORS, checked_index_operands, keyword_value, source_of,
)
from torchdevlint.analysis.placement import (
    argument_for_parameter, host_copy_chain, loop_item_source, plain_function_named,
)
from torchdevlint.analysis.model import (
    ASSIGN, FOR, Binding, ClassInfo, FunctionInfo, Scope, is_number, last_name, root_name,
    string_value,
)

# Methods whose override changes what ``.to()`` does to the module's state: such a class may
# move its plain tensors itself.
_MOVING_OVERRIDES = api.ACCELERATOR_MOVE_METHODS | {"_apply"}
_REGISTERING_CALLS = {"register_buffer": "buffers", "register_parameter": "parameters",
                      "add_module": "submodules", "register_module": "submodules"}


# Torch functions given an index: a meeting only where a CPU input gets an index on the device
# (a CPU index into a device tensor is not followed).
_TAKES_INDICES = api.INDEX_TAKING_FUNCTIONS
_REFUSE_DEVICE_INDEX = api.CPU_INPUT_DEVICE_INDEX_REFUSING
# Tensor methods that combine their receiver with their argument.
_COMBINING = api.COMBINING_METHODS


SAME_DEVICE_ERROR = "RuntimeError: Expected all tensors to be on the same device"
INDEX_ERROR = ("RuntimeError: indices should be either on cpu or on the same device as the "
               "indexed tensor (cpu)")

# (an index, or mask, off its tensor's device in an operation that checks both,
# ``api.DEVICE_CHECKED_INDEX_ARGUMENTS``, as torch words it: ``word`` is "index" or "mask",
# then its device and the others')
INDEX_ARGUMENT_ERROR = ("RuntimeError: Expected all tensors to be on the same device, but got "
                        "{word} is on {index_device}, different from other tensors on {other}")

# (``x.masked_fill(mask, v)`` given a mask on another device, as torch words it: the mask is
# checked before the dispatcher's common-device check)
MASK_ERROR = "RuntimeError: expected self and mask to be on the same device"

# (an ``nn.LSTM``/``nn.GRU``/``nn.RNN`` given a state on the CPU, as torch words it)
RNN_STATE_ERROR = ("RuntimeError: Input and hidden tensors are not at the same device, found "
                   "input tensor at cuda:0 and hidden tensor at cpu")
# (... given an input on the CPU, its weights on the device)
RNN_INPUT_ERROR = ("RuntimeError: Input and parameter tensors are not at the same device, "
                   "found input tensor at cpu and parameter tensor at cuda:0")


class Meeting(str):
    """What an expression does where a tensor off the module's device meets one on it, in a
    message's words, and the error torch raises there (``error``)."""

    def __new__(cls, words: str, error: str = SAME_DEVICE_ERROR) -> "Meeting":
        meeting = super().__new__(cls, words)
        meeting.error = error
        return meeting


@dataclass
class ModuleState:
    """One class's state as torch sees it, by attribute name."""

    info: ClassInfo
    is_module: Optional[bool]  # True: an nn.Module subclass; None: cannot tell
    parameters: Set[str] = field(default_factory=set)
    buffers: Set[str] = field(default_factory=set)
    submodules: Set[str] = field(default_factory=set)
    # ``self.NAME = <tensor>`` that is neither a parameter nor a buffer: the assignments
    tensor_attributes: Dict[str, List[Binding]] = field(default_factory=dict)
    # those of them that hold a tuple of tensors (an RNN's state), not one tensor
    tensor_tuples: Set[str] = field(default_factory=set)
    # ``self.NAME = [<module>, ...]`` / ``{k: <module>}`` / comprehensions of modules
    module_containers: Dict[str, List[Binding]] = field(default_factory=dict)
    # ``self.NAME = [...]`` / ``{...}`` / a comprehension, or ``[]`` filled by
    # ``self.NAME.append(...)``, of anything but modules: maybe tensors (``container_elements``)
    other_containers: Dict[str, List[Binding]] = field(default_factory=dict)
    overrides_moving: bool = False  # it or a base class of this file defines _apply, to or cuda
    # the attributes its own ``to``/``cuda`` moves (``self.scale = self.scale.to(device)``,
    # then ``super().to(device)``), when that is all the overrides do; else None
    override_moves: Optional[FrozenSet[str]] = None
    forward_reaches: Set[str] = field(default_factory=set)  # methods forward calls, transitively
    # a LightningModule's steps and the methods they call (run on the module's device)
    step_reaches: Set[str] = field(default_factory=set)
    # tensor attributes set by a base class of this file (``Base.__init__`` sets
    # ``self.scale = torch.ones(n)``, the subclass's ``forward`` reads it): name -> that class
    inherited: Dict[str, ClassInfo] = field(default_factory=dict)
    # methods that code of the file calls on an instance it moved to a device first
    # (``model = VAE().to(device)``, then ``model.sample(16)``), and what they call on ``self``
    called_reaches: Set[str] = field(default_factory=set)
    # ``self.register_buffer(f"w{i}", ...)``: buffers registered under names computed at run
    # time, which ``buffers`` cannot list
    computed_buffers: bool = False

    @property
    def registered(self) -> Set[str]:
        return self.parameters | self.buffers | self.submodules

    def owner(self, name: str) -> ClassInfo:
        """The class whose methods assign attribute ``name``: this one, or the base class of
        the file it inherits the attribute from."""
        return self.inherited.get(name, self.info)

    def bindings(self, name: str) -> List[Binding]:
        """Every assignment of attribute ``name`` in the methods of the class that owns it."""
        return self.owner(name).attributes.get(name, [])

    @property
    def running(self) -> Set[str]:
        """The methods that run on the module's device once it is moved: ``forward``, a
        LightningModule's steps, the methods the file calls on a moved instance, and what
        they call on ``self``."""
        return self.forward_reaches | self.step_reaches | self.called_reaches


class ModuleClasses:
    """Asked through ``Analysis.module_state``; each class is worked out once."""

    def __init__(self, collected: Collected, kinds: KindInference,
                 devices: Optional[Devices] = None,
                 on_accelerator: Optional[Callable] = None,
                 meetings_in_call: Optional[Callable] = None) -> None:
        self.collected = collected
        # (call, scope) -> the arguments that meet inside the function of the file the call
        # runs (``Callees.meetings_in_call``), as a ``weakref.WeakMethod`` of the analysis
        self.meetings_in_call = meetings_in_call
        self.kinds = kinds
        # the placement's evidence that an expression of the file is on an accelerator where
        # it is read (what a caller gives ``forward``: ``_given_by_instance_calls``), as a
        # ``weakref.WeakMethod`` of the analysis (or None)
        self.on_accelerator = on_accelerator
        self.devices = devices if devices is not None else Devices(kinds)
        self._states: Dict[int, ModuleState] = {}
        # ids of the classes whose state is being built: a base that is one of them (bases
        # that name each other, which Python refuses at run time) gives no attributes
        self._building: Set[int] = set()
        self._methods: Dict[int, "MethodDevices"] = {}  # id(method) ->
        self._methods_alone: Dict[int, "MethodDevices"] = {}  # (without its callers' arguments)
        self._methods_state_only: Dict[int, "MethodDevices"] = {}  # (``state_only``)
        self._placing: Set[int] = set()  # ids of the methods whose callers are worked out
        self._self_reads: Dict[int, Dict[str, List[tuple]]] = {}  # id(class) -> self_reads
        # (id(method), its parameters given device tensors) -> whether it returns one
        self._tensor_params: Dict[Tuple[int, str], bool] = {}  # (id(method), parameter) ->
        self._device_returns: Dict[Tuple[int, FrozenSet[str]], bool] = {}
        self._moves: Optional[List[cst.Call]] = None
        self._move_ids: Optional[Set[int]] = None  # (their ids, for ``_moved_instance_before``)
        self._evidence: Dict[int, Optional[str]] = {}  # id(class) -> accelerator_evidence
        self._init_methods: Dict[int, Set[str]] = {}  # id(class) -> init_methods

    def state(self, info: ClassInfo) -> ModuleState:
        known = self._states.get(id(info))
        if known is None:
            self._building.add(id(info))
            try:
                known = self._states[id(info)] = self._build(info)
            finally:
                self._building.discard(id(info))
        return known

    def _build(self, info: ClassInfo) -> ModuleState:
        state = ModuleState(info, self.kinds.class_is_module(info))
        state.overrides_moving = self._overrides_moving(info, set())
        if state.overrides_moving:
            state.override_moves = self._override_moves(info)
        for method, kind in self._registrations(info):
            if method is None:
                state.computed_buffers |= kind == "buffers"
            else:
                getattr(state, kind).add(method)
        for name, bindings in info.attributes.items():
            assigned = [b for b in bindings if b.how == ASSIGN and not b.path]
            for binding in assigned:
                value = binding.value
                registered = self._registered_by_value(value, binding)
                if registered is not None:
                    getattr(state, registered).add(name)
        for name, bindings in info.attributes.items():
            if name in state.registered:
                continue
            assigned = [b for b in bindings if b.how == ASSIGN and not b.path]
            kinds = [self.kinds.binding_kind(b) for b in assigned]
            tensors = [b for b, kind in zip(assigned, kinds) if kind is TENSOR]
            # a tuple of tensors, an RNN's state (``self.hidden = (torch.zeros(...),
            # torch.zeros(...))``, ``self.hidden = self.init_hidden()``): handed on whole, it
            # is judged as one tensor is
            pairs = [b for b, kind in zip(assigned, kinds) if _tensor_tuple(kind) and (
                isinstance(b.value, cst.Tuple) or type(b.value) not in _CONTAINER_NODES)]
            if pairs and not tensors:
                state.tensor_attributes[name] = pairs
                state.tensor_tuples.add(name)
                continue
            if tensors:
                state.tensor_attributes[name] = tensors
            containers = [b for b in assigned if self._holds_modules(b)]
            if containers:
                state.module_containers[name] = containers
            elif assigned and all(_CONTAINER_NODES.get(type(b.value)) for b in assigned):
                state.other_containers[name] = assigned
        self._inherit(state)
        state.forward_reaches = self._reached_from(info, "forward")
        for method in self._called_on_moved_instances(info):
            state.called_reaches |= self._reached_from(info, method)
        if self.kinds.class_is_lightning(info):
            for step in api.LIGHTNING_STEP_METHODS:
                state.step_reaches |= self._reached_from(info, step)
        return state

    def _inherit(self, state: ModuleState) -> None:
        """The tensor attributes that base classes of this file set and this class neither
        sets nor registers (issue 28: a base module builds its anchors or its scale in
        ``__init__``, a subclass's ``forward`` uses them; ``.to()`` of the subclass leaves
        them behind as it would the base's own). Nearest base first, as Python looks them up."""
        info = state.info
        for base in info.bases:
            kind = self.kinds.kind_of(base, info.ctx.scope)
            if not isinstance(kind, ClassRef) or id(kind.info) in self._building:
                continue
            base_state = self.state(kind.info)
            for name, bindings in base_state.tensor_attributes.items():
                if name in info.attributes or name in state.registered \
                        or name in state.tensor_attributes:
                    continue
                state.tensor_attributes[name] = bindings
                state.inherited[name] = base_state.owner(name)
                if name in base_state.tensor_tuples:
                    state.tensor_tuples.add(name)

    # -- whether the module meets an accelerator at all ----------------------------------

    def accelerator_evidence(self, info: ClassInfo) -> Optional[str]:
        """Why instances of ``info`` may run on an accelerator, in the words of a message, or
        None when nothing says they do (issue 28: a program that never uses an accelerator
        keeps its model on the CPU, where a CPU tensor meets nothing).

        - The file moves something to a device (``.cuda()``; ``.to(X)``, ``device=X``,
          ``torch.set_default_device(X)``, a DataParallel/DDP wrapper, X neither the CPU nor
          a dtype): that move is named, a move of an instance of ``info`` first.
        - Else, when the file runs no program (no ``if __name__ == "__main__":``, no loop and
          no call of this file's own classes or functions at its top level), ``info`` is a
          library class: it is imported, and its users move it.
        - Else (a script or notebook that moves nothing): None."""
        known = self._evidence.get(id(info), False)
        if known is not False:
            return known
        self._evidence[id(info)] = known = self._accelerator_evidence(info)
        return known

    def _accelerator_evidence(self, info: ClassInfo) -> Optional[str]:
        moves = self._device_moves()
        def makes_one(value) -> bool:
            return isinstance(value, cst.Call) and last_name(value.func) == info.name

        instances = {name for scope in self.collected.scopes
                     for name, bindings in scope.bindings.items()
                     if any(b.how == ASSIGN and makes_one(b.value) for b in bindings)}
        for call in moves:
            func = call.func
            root = root_name(func.value) if isinstance(func, cst.Attribute) else None
            if isinstance(func, cst.Attribute) and (
                    makes_one(func.value) or (root is not None and root.value in instances)):
                return f"this file moves it: `{source_of(call)}`"
        if moves:
            return f"this file uses an accelerator: `{source_of(moves[0])}`"
        trainer = self._lightning_trainer() if self.kinds.class_is_lightning(info) else None
        if trainer is not None:
            return ("this file trains it with a Lightning Trainer, which moves it to the "
                    f"accelerator there is: `{source_of(trainer)}`")
        if not self._runs_a_program():
            if self._kept_inside(info):
                return None
            return "a library class: its users move it"
        return None

    def _kept_inside(self, info: ClassInfo) -> bool:
        """Whether no user of the library can get hold of an instance of ``info`` to move it:
        ``info``, and every class of the file that holds or derives from it, is private
        (``_Name``), and each instance the file makes stays inside the file's own code (it is
        not made at module level, not handed to another call, and not returned from a public
        function, directly or through private ones). torchmetrics' NISQA network
        (``_SelfAttentionLayer`` in ``_NISQADIM``, built by ``_load_nisqa_model()`` for the
        functional metric, which runs it on the CPU) is such a class: the file moves nothing,
        so its CPU factories meet nothing (issue 28, cause 1)."""
        if not info.name.startswith("_"):
            return False
        classes = {c.name: c for c in self.collected.classes}
        kept, frontier = {info.name}, [info.name]
        while frontier:  # the private classes that hold or extend it, transitively
            name = frontier.pop()
            for other in classes.values():
                if other.name in kept:
                    continue
                holds_it = any(isinstance(node, cst.Call) and last_name(node.func) == name
                               for node in walk_code(other.node, into_functions=True))
                extends_it = any(last_name(base) == name for base in other.bases)
                if holds_it or extends_it:
                    if not other.name.startswith("_"):
                        return False
                    kept.add(other.name)
                    frontier.append(other.name)
        makers, seen = list(kept), set(kept)
        while makers:  # every place that makes one, and the private functions returning it
            name = makers.pop()
            for site in self.collected.calls_by_name.get(name, ()):
                if site.ctx.cls is not None and site.ctx.cls.name in kept:
                    continue
                func = site.ctx.func
                if func is None or (site.statement is None and not self._bound_or_returned(
                        site.call, func)):
                    return False  # made at module level, or handed to another call
                if self._returns(func, site.call):
                    if not func.name.startswith("_") or func.cls is not None or len(seen) > 8:
                        return False
                    if func.name not in seen:
                        seen.add(func.name)
                        makers.append(func.name)
        return True

    @staticmethod
    def _bound_or_returned(call: cst.Call, func: FunctionInfo) -> bool:
        """``x = Make()``, ``a, b = make()``, ``return Make()``: the call's value is kept
        whole by the function, not handed to another call."""
        for node in walk_code(func.node.body):
            if isinstance(node, (cst.Assign, cst.Return)) and node.value is call:
                return True
        return False

    @staticmethod
    def _returns(func: FunctionInfo, call: cst.Call) -> bool:
        """Whether ``func`` returns what ``call`` made: the call itself, or a name bound to
        it (also as part of a tuple)."""
        names = set()
        for node in walk_code(func.node.body):
            if isinstance(node, cst.Assign) and node.value is call:
                names |= {n.value for t in node.targets for n in walk_code(t.target)
                          if isinstance(n, cst.Name)}
        for node in walk_code(func.node.body):
            if isinstance(node, cst.Return) and node.value is not None:
                if node.value is call or any(isinstance(n, cst.Name) and n.value in names
                                             for n in walk_code(node.value)):
                    return True
        return False

    def _device_moves(self) -> List[cst.Call]:
        if self._moves is None:
            moves = []  # (the call site's source order, the call)
            sites = self.collected.calls_by_name
            for name in api.MODULE_MOVING_CALLS:
                for site in sites.get(name, ()):
                    call = site.call
                    if name in api.MODULE_MOVING_CALLS_WITHOUT_DEVICE:
                        moves.append((site.order, call))
                        continue
                    argument = move_device_argument(call) if name == "to" else \
                        (call.args[0].value if call.args else None)
                    if argument is not None and not self._cpu_or_dtype(argument, site.ctx.scope):
                        moves.append((site.order, call))
            for site in self.collected.devices.keyword_calls:
                device = keyword_value(site.call, "device")
                if device is not None and not self._cpu_or_dtype(device, site.ctx.scope):
                    moves.append((site.order, site.call))
            # in source order, for the message: the order the traversal recorded the sites in
            # (a walk of the whole module for it was a tenth of TDL007's cost on torch's
            # ``testing`` and ``_dynamo``, whose files move tensors hundreds of times)
            moves.sort(key=lambda move: move[0])
            self._moves = [call for _, call in moves]
        return self._moves

    def _lightning_trainer(self) -> Optional[cst.Call]:
        """A Lightning ``Trainer(...)`` of the file not told to use the CPU
        (``accelerator="cpu"``): its default, ``"auto"``, picks the GPU where there is one."""
        for site in self.collected.calls_by_name.get("Trainer", ()):
            if self.kinds.qualname(site.call.func, site.ctx.scope) not in api.LIGHTNING_TRAINERS:
                continue
            accelerator = keyword_value(site.call, "accelerator")
            if accelerator is None or string_value(accelerator) != "cpu":
                return site.call
        return None

    def _cpu_or_dtype(self, expr, scope) -> bool:
        """No accelerator: the CPU, a dtype, or a string naming no device (``.to("fp16")``)."""
        text = string_value(expr)
        if text is not None:
            return text.split(":")[0] not in api.ACCELERATOR_DEVICE_TYPES
        return self.devices.is_cpu_device(expr, scope) or self.devices.is_dtype(expr, scope)

    def _runs_a_program(self) -> bool:
        module = self.collected.module_scope.node
        own = {info.name for info in self.collected.classes} | \
            {info.name for info in self.collected.functions}
        for statement in module.body:
            if isinstance(statement, (cst.For, cst.While)):
                return True
            if isinstance(statement, cst.If) and any(
                    isinstance(n, cst.Name) and n.value == "__name__"
                    for n in walk_code(statement.test)):
                return True
            if isinstance(statement, cst.SimpleStatementLine):
                for node in walk_code(statement):
                    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and \
                            node.func.value in own:
                        return True
        return False

    def moved_only_by_to(self) -> Iterator[ModuleState]:
        """The states of this file's classes that are certainly ``nn.Module``s, assign
        attributes and leave moving them to ``Module.to`` (no ``_apply``, ``to`` or ``cuda`` of
        their own or of a base class of this file): where state ``.to()`` misses stays behind."""
        for info in self.collected.classes:
            if info.attributes or info.bases:
                state = self.state(info)
                if (state.is_module is True or self.shows_it_is_a_module(state)) and (
                        not state.overrides_moving or state.override_moves is not None):
                    yield state

    def shows_it_is_a_module(self, state: ModuleState) -> bool:
        """A class whose base the analysis cannot resolve (a class of another file of the
        project: ``class EigEncoder(BasePositionalEncoder)`` with the base from ``.base``)
        that shows it is an ``nn.Module`` itself: it defines ``forward`` and registers a
        parameter or a submodule that holds weights (``self.proj = nn.Linear(...)``), which
        only a module registers (issue 28: pytorch_geometric's f964759e2)."""
        info = state.info
        return state.is_module is None and "forward" in info.methods and any(
            api.foreign_base(self.kinds.qualname(base, info.ctx.scope) or "") for base in info.bases
        ) and bool(state.parameters or any(
            self.has_parameters(state, name) for name in state.submodules))

    def _override_moves(self, info: ClassInfo) -> Optional[FrozenSet[str]]:
        """The attributes that the class's own ``to``/``cuda`` overrides move, when they do
        nothing else but hand on to ``super()`` (issue 28: pytorch-soft-actor-critic's
        ``DeterministicPolicy.to`` moves ``action_scale`` and ``action_bias`` and forgets
        ``noise``); None when a base class of the file or ``_apply`` moves too, or an override
        does anything else."""
        own = _MOVING_OVERRIDES & set(info.methods)
        if not own or "_apply" in own or any(
                isinstance(kind, ClassRef) and self._overrides_moving(kind.info, set())
                for kind in (self.kinds.kind_of(b, info.ctx.scope) for b in info.bases)):
            return None
        moved: Set[str] = set()
        for name in own:
            method = info.methods[name]
            self_name = method.self_name
            body = method.node.body
            if self_name is None or not isinstance(body, cst.IndentedBlock):
                return None
            for statement in body.body:
                if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
                    return None
                small = statement.body[0]
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString):
                    continue  # the docstring
                if isinstance(small, cst.Return) and isinstance(small.value, cst.Call) and \
                        _super_move(small.value):
                    continue
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and \
                        _super_move(small.value):
                    continue
                target = small.targets[0].target if isinstance(small, cst.Assign) and \
                    len(small.targets) == 1 else None
                value = small.value if isinstance(small, cst.Assign) else None
                if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                        and target.value.value == self_name and isinstance(value, cst.Call)
                        and isinstance(value.func, cst.Attribute)
                        and value.func.attr.value in api.ACCELERATOR_MOVE_METHODS
                        and isinstance(value.func.value, cst.Attribute)
                        and isinstance(value.func.value.value, cst.Name)
                        and value.func.value.value.value == self_name
                        and value.func.value.attr.value == target.attr.value):
                    return None
                moved.add(target.attr.value)
        return frozenset(moved)

    def _overrides_moving(self, info: ClassInfo, seen: Set[int]) -> bool:
        if id(info) in seen:
            return False
        seen.add(id(info))
        if _MOVING_OVERRIDES & set(info.methods):
            return True
        for base in info.bases:
            kind = self.kinds.kind_of(base, info.ctx.scope)
            if isinstance(kind, ClassRef) and self._overrides_moving(kind.info, seen):
                return True
        return False

    def parameter_free(self, value, scope: Scope, depth: int = 0) -> bool:
        """``value`` builds a module that holds no parameters or buffers and behaves the same
        in train and eval mode: a torch.nn one of ``api.PARAMETER_FREE_MODULES``, a loss not
        given a tensor to keep (``nn.SmoothL1Loss()``, ``nn.CrossEntropyLoss()`` without
        ``weight``), or a module class of this file whose state is only such modules and
        plain values (Autoformer's ``series_decomp``, holding a ``moving_avg`` that holds an
        ``nn.AvgPool1d``). A plain list of them misses nothing that ``.to()``,
        ``parameters()``, ``state_dict()`` or ``eval()`` would reach (TDL006)."""
        if not isinstance(value, cst.Call) or depth > 3:
            return False
        qualified = self.kinds.qualname(value.func, scope) or ""
        if qualified.startswith("torch.nn."):
            name = qualified.rpartition(".")[2]
            if name in api.PARAMETER_FREE_MODULES:
                return True
            if api.is_loss_class(qualified):
                return not any(
                    arg.star or (arg.keyword is not None
                                 and arg.keyword.value in api.LOSS_TENSOR_KEYWORDS)
                    or (arg.keyword is None and name in api.WEIGHT_FIRST_LOSS_CLASSES)
                    for arg in value.args)
            return False
        kind = self.kinds.kind_of(value.func, scope)
        if not isinstance(kind, ClassRef):
            return False
        return self._parameter_free_class(kind.info, depth)

    def _parameter_free_class(self, info: ClassInfo, depth: int) -> bool:
        """A module class of this file that derives from ``nn.Module`` alone, registers
        nothing by a call (``register_buffer``, ``add_module``, ``setattr``), and whose every
        attribute is a parameter-free module it builds, a literal, or a value it never calls
        (``self.kernel_size = kernel_size``; not ``self.net = net`` then ``self.net(x)``)."""
        bases = [self.kinds.qualname(base, info.ctx.scope) for base in info.bases]
        if not bases or any(base not in api.MODULE_BASE_CLASSES for base in bases):
            return False
        state = self.state(info)
        if state.parameters or state.buffers or state.computed_buffers or \
                state.module_containers or state.overrides_moving:
            return False
        methods = set(map(id, info.methods.values()))
        called = set()
        for name, sites in self.collected.calls_by_name.items():
            for site in sites:
                if site.ctx.func is None or id(site.ctx.func) not in methods:
                    continue
                if name in api.REGISTERING_METHODS:
                    return False
                func = site.call.func
                if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                        and func.value.value == site.ctx.func.self_name:
                    called.add(func.attr.value)
        for name, bindings in info.attributes.items():
            for binding in bindings:
                value = binding.value
                if binding.how != ASSIGN or binding.path:
                    return False
                if isinstance(value, cst.Call):
                    if not self.parameter_free(value, binding.ctx.scope, depth + 1):
                        return False
                elif name in called or not (is_number(value) or isinstance(
                        value, (cst.Name, cst.SimpleString, cst.ConcatenatedString))):
                    return False
        return True

    def init_methods(self, info: ClassInfo) -> Set[str]:
        """``__init__`` and the methods only it reaches (``_build_layers``): code that runs
        while the module is built, on the CPU, before anyone can move it."""
        known = self._init_methods.get(id(info))
        if known is not None:
            return known
        from_init = self._reached_from(info, "__init__")
        elsewhere: Set[str] = set()
        for name in info.methods:
            if name not in from_init:
                elsewhere |= self._reached_from(info, name)
        known = self._init_methods[id(info)] = {
            name for name in from_init if name == "__init__" or name not in elsewhere}
        return known

    def mode_switches(self, info: ClassInfo) -> Set[str]:
        """The class's own ``train`` / ``eval`` (``nn.Module``'s mode switches): code its
        users run at any time, often before they move the module (``model.eval();
        model.to(device)``), so what they cache from the module's state stays where the
        module was then."""
        return {name for name in api.MODULE_MODE_SWITCHES if name in info.methods}

    def buffer_snapshot(self, state: ModuleState, value, self_name: Optional[str]) -> bool:
        """Whether ``value`` reads one of the module's registered buffers whole (``self.mask``,
        ``getattr(self, "mask")``, or ``getattr(self, f"w{i}")`` in a class that registers
        buffers under computed names). ``.to(device)`` replaces a buffer with a moved copy
        (parameters it moves in place), so a plain attribute or list that took the buffer
        while the module was built keeps the tensor where it was built (the ``buffer-list``
        report: ``self.params.append(getattr(self, f"param_{i}"))``)."""
        if self_name is None:
            return False
        if isinstance(value, cst.Attribute):
            return _is_name(value.value, self_name) and value.attr.value in state.buffers
        if not (isinstance(value, cst.Call) and _is_name(value.func, "getattr")
                and len(value.args) == 2 and _is_name(value.args[0].value, self_name)):
            return False
        name = string_value(value.args[1].value)
        return name in state.buffers if name is not None else state.computed_buffers

    def state_snapshot(self, state: ModuleState, value, self_name: Optional[str],
                       scope=None, depth: int = 0) -> bool:
        """Whether ``value`` is computed from the module's own parameters or buffers (``self.
        attention_biases[:, self.idxs]``, ``self.weight.t()``): a tensor on the device the
        module was on when it ran, which a later ``.to()`` does not follow. With the method's
        ``scope``, a local name every assignment of which is one counts too (``ab =
        self.attention_biases[:, self.idxs]; self.ab = ab``)."""
        if isinstance(value, cst.Name) and scope is not None and depth < 4:
            bindings = scope.bindings.get(value.value, ()) \
                if scope.resolve(value.value) is scope else ()
            return bool(bindings) and all(
                b.how == ASSIGN and not b.path and b.value is not None
                and self.state_snapshot(state, b.value, self_name, scope, depth + 1)
                for b in bindings)
        while True:
            if isinstance(value, cst.Subscript):
                value = value.value
            elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                    value.func.attr.value in api.SHAPE_KEEPING_METHODS:
                value = value.func.value
            else:
                break
        return isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and \
            value.value.value == self_name and \
            value.attr.value in (state.parameters | state.buffers)

    def cpu_inputs(self, info: ClassInfo) -> Set[object]:
        """The arguments of ``info``'s ``forward`` (positions after ``self`` and names) that it
        hands to a function wanting them on the CPU (``pack_padded_sequence(x, lengths)``,
        ``torch_api.CPU_ARGUMENTS``), itself or through a method of the class or a plain
        function of the file that does (``self._pack(x, lengths)``, ``pack(x, lengths)``;
        issue 28): a caller gives them on the CPU on purpose."""
        method = self.kinds.find_method(info, "forward")
        if method is None or method.scope is None:
            return set()
        params = [name for name in method.param_names if name != method.self_name]
        names = self._handed_to_cpu(info, method, 0)
        return {params.index(name) for name in names} | names

    def rnn_state_inputs(self, info: ClassInfo) -> Set[object]:
        """The arguments of ``info``'s ``forward`` (positions after ``self`` and names) that it
        hands, unchanged, to one of its recurrent submodules as that layer's state
        (``self.gru(embedded, hidden)``, ``self.lstm(x, (h, c))``): given on another device
        than the input, the layer raises its own error ("Input and hidden tensors are not at
        the same device"), the seq2seq tutorial's ``encoder(word, hidden)``."""
        method = self.kinds.find_method(info, "forward")
        if method is None or method.scope is None or method.self_name is None:
            return set()
        params = [name for name in method.param_names if name != method.self_name]
        state = self.state(info)
        found: Set[str] = set()
        for node in walk_code(method.node.body):
            func = node.func if isinstance(node, cst.Call) else None
            if not (isinstance(func, cst.Attribute) and _is_name(func.value, method.self_name)
                    and len(node.args) > 1 and node.args[1].keyword is None
                    and func.attr.value in state.submodules
                    and self.is_recurrent(state, func.attr.value)):
                continue
            given = node.args[1].value
            elements = [e.value for e in given.elements] \
                if isinstance(given, cst.Tuple) else [given]
            found.update(e.value for e in elements if isinstance(e, cst.Name) and e.value in params
                         and len(method.scope.bindings.get(e.value, ())) == 1)
        return {params.index(name) for name in found} | found

    def _handed_to_cpu(self, info: ClassInfo, func, depth: int) -> Set[str]:
        """The parameters of ``func`` (not a method's ``self``) that its body hands, unchanged
        or copied to the host, to a function wanting them on the CPU, or to a method of
        ``info`` or a plain function of the file that does (three calls deep)."""
        wanted: Set[str] = set()
        if func.scope is None:
            return wanted
        params = [name for name in func.param_names if name != func.self_name]
        for node in walk_code(func.node.body, into_functions=True):
            if not isinstance(node, cst.Call):
                continue
            where = api.CPU_ARGUMENTS.get(self.kinds.qualname(node.func, func.scope) or "")
            if where is not None:
                position, keyword = where
                given = [a.value for a in node.args if a.keyword is not None
                         and a.keyword.value == keyword]
                positional = [a for a in node.args if a.keyword is None]
                if not given and len(positional) > position and not any(
                        a.star for a in positional[:position + 1]):
                    given = [positional[position].value]
            else:
                owner = info
                callee = self._callee_of(info, func, node.func) if depth < 3 else None
                if callee is None and depth < 3:
                    # ``self.encoder(embedded, lengths)``: a submodule of a class of this file,
                    # whose ``forward`` packs them (pytext's DocModel over its BiLSTM)
                    kind = self.kinds.kind_of(node.func, func.scope)
                    if isinstance(kind, Instance) and kind.info is not info:
                        owner = kind.info
                        callee = self.kinds.find_method(owner, "forward")
                if callee is None or callee.scope is None or callee is func:
                    continue
                inner = self._handed_to_cpu(owner, callee, depth + 1)
                callee_params = [n for n in callee.param_names if n != callee.self_name]
                given = []
                for index, arg in enumerate(node.args):
                    if arg.star:
                        break
                    name = arg.keyword.value if arg.keyword is not None else (
                        callee_params[index] if index < len(callee_params) else None)
                    if name in inner:
                        given.append(arg.value)
            for value in given:
                # (or copied to the host on the way: ``pack_padded_sequence(x,
                # lengths.to('cpu'))``, bentrevett's sentiment notebooks)
                # (or cast: ``pack_padded_sequence(x, lengths.int())`` stays where it was)
                root, _ = host_copy_chain(value)
                name = root.value if isinstance(root, cst.Name) else None
                if name in params:
                    wanted.add(name)
        return wanted

    def _callee_of(self, info: ClassInfo, func, callee: cst.BaseExpression):
        """The function a call in ``func`` runs, when the file has it: a method of ``info``
        called through ``self`` (inherited ones too), or a plain function of the file."""
        if func.self_name is not None and isinstance(callee, cst.Attribute) \
                and isinstance(callee.value, cst.Name) and callee.value.value == func.self_name:
            return self.kinds.find_method(info, callee.attr.value)
        kind = self.kinds.kind_of(callee, func.scope)
        if isinstance(kind, FuncRef) and kind.info.cls is None:
            return kind.info
        return None

    def self_reads(self, info: ClassInfo) -> Dict[str, List[tuple]]:
        """``self.NAME`` read in the class's methods: NAME -> [(method, Attribute node)]
        (nested functions and lambdas included: their ``self`` is the method's)."""
        known = self._self_reads.get(id(info))
        if known is not None:
            return known
        reads: Dict[str, List[tuple]] = {}
        for method in info.methods.values():
            self_name = method.self_name
            if self_name is None:
                continue
            for node in walk_code(method.node.body, into_functions=True):
                if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                        and node.value.value == self_name:
                    reads.setdefault(node.attr.value, []).append((method, node))
        self._self_reads[id(info)] = reads
        return reads

    def on_module_device(self, state: ModuleState, method: FunctionInfo) -> "MethodDevices":
        """What ``method`` holds on the module's device once the module was moved, its
        parameters that every call of it on ``self`` gives such a tensor included
        (``_given_at_every_call``)."""
        known = self._methods.get(id(method))
        if known is not None:
            return known
        if id(method) in self._placing:
            # asked while its callers are worked out (a caller that hands it on, or methods
            # that call each other): what it holds by itself, without its callers' arguments
            return self.alone(state, method)
        self._placing.add(id(method))
        try:
            given = self._given_at_every_call(state, method)
        finally:
            self._placing.discard(id(method))
        known = self._methods[id(method)] = MethodDevices(self, state, method, given) \
            if given else self.alone(state, method)
        return known

    def state_only(self, state: ModuleState, method: FunctionInfo) -> "MethodDevices":
        """What ``method`` holds on the module's device from the module's own state alone:
        its parameters and buffers, what its submodules with weights return (``self.net(obs)``,
        ``self(obs)`` where ``forward`` returns such a value) and what is computed from those;
        not the method's own arguments, whose device its callers decide."""
        known = self._methods_state_only.get(id(method))
        if known is None:
            known = self._methods_state_only[id(method)] = MethodDevices(
                self, state, method, inputs=False)
        return known

    def alone(self, state: ModuleState, method: FunctionInfo) -> "MethodDevices":
        """What ``method`` holds on the module's device by itself, without what its callers
        give it (a finding that rests on its callers names one)."""
        known = self._methods_alone.get(id(method))
        if known is None:
            known = self._methods_alone[id(method)] = MethodDevices(self, state, method)
        return known

    def _given_at_every_call(self, state: ModuleState, method: FunctionInfo) -> FrozenSet[str]:
        """The parameters of ``method``, a helper of the class, that each of its calls on
        ``self`` in the class gives a tensor on the module's device, as the calling method
        holds it (issue 28: a VAE's ``self.reparameterize(mu, logvar)`` of ``h =
        self.enc(x)``, whose ``torch.randn(std.size())`` then meets ``std``). Empty for
        ``forward``, a method the class never calls, or one it reads other than as a call
        (handed on as a callback, its callers unknown)."""
        info = state.info
        if method.name == "forward" and info.methods.get(method.name) is method:
            return self._given_by_instance_calls(state, method)
        if method.name == "forward" or info.methods.get(method.name) is not method:
            return frozenset()
        # (a static method has no ``self`` to leave out)
        params = [name for name in method.param_names[0 if method.self_name is None else 1:]
                  if name != method.self_name]
        if not params:
            return frozenset()
        # (the calls of its name that the traversal recorded, by their callee)
        calls = {id(site.call.func): site.call
                 for site in self.collected.calls_by_name.get(method.name, ())}
        sites = []
        for caller, node in self.self_reads(info).get(method.name, ()):
            call = calls.get(id(node))
            if call is None:
                return frozenset()  # ``self.helper`` read, not called
            sites.append((caller, call))
        given = set(params)
        for caller, call in sites:
            if caller is method or not given:
                return frozenset()  # (recursion: its own calls say nothing new)
            devices = self.on_module_device(state, caller)
            given = {param for param in given
                     if (argument := argument_for_parameter(call, method, param, bound=True))
                     is not None and devices.carries(argument)}
        return frozenset(given) if sites else frozenset()

    def _given_by_instance_calls(self, state: ModuleState, method: FunctionInfo) -> FrozenSet[str]:
        """The parameters of ``forward`` that every call of an instance of the class in the
        file gives a tensor the placement shows on an accelerator (``diffusion(x0, t)`` with
        ``t = torch.randint(0, T, (n,), device=device)``: a diffusion model's ``self.sqrt_ac[t]``
        then indexes a CPU table with it). Empty when the file calls no instance, or calls
        one with ``*args``."""
        on_accelerator = self.on_accelerator() if self.on_accelerator is not None else None
        if on_accelerator is None or state.info.methods.get("__call__") is not None:
            return frozenset()
        sites = self.kinds.instance_call_sites(state.info)
        if not sites:
            return frozenset()
        given = {name for name in method.param_names[1:] if name != method.self_name}
        for site in sites:
            given = {param for param in given
                     if (argument := argument_for_parameter(site.call, method, param, bound=True))
                     is not None and on_accelerator(argument, site.ctx.scope)}
            if not given:
                break
        return frozenset(given)

    def returns_on_device(self, state: ModuleState, method: FunctionInfo,
                          given: FrozenSet[str], position: Optional[int] = None,
                          inputs: bool = True) -> bool:
        """Whether every ``return`` of ``method`` (a method of the class, called on ``self``)
        gives a tensor on the module's device when its parameters ``given`` are given such
        tensors (``pt = self._calc_pt(target, x, mask)`` of ``return (target * x).sum(-1)``,
        issue 28: a value computed by a helper method from the inputs). A method that also
        returns something else (a CPU tensor, a number, nothing) does not. With ``position``,
        the item there of the tuple every ``return`` gives. ``inputs=False``: only the
        parameters ``given`` count as on the device (a plain function of the file, whose other
        callers decide the rest), not the others it uses as tensors."""
        key = (id(method), given, position, inputs)
        known = self._device_returns.get(key)
        if known is not None:
            return known
        self._device_returns[key] = False  # (a method that calls itself: not while being worked out)
        devices = MethodDevices(self, state, method, given, inputs)
        returns = [node.value for node in walk_code(method.node.body) if isinstance(node, cst.Return)]
        if position is not None:
            returns = [value.elements[position].value if isinstance(value, cst.Tuple) and
                       position < len(value.elements) and not any(
                           isinstance(e, cst.StarredElement) for e in value.elements) else None
                       for value in returns]
        known = self._device_returns[key] = bool(returns) and all(
            value is not None and devices.carries(value) for value in returns)
        return known

    def parameter_is_tensor(self, state: ModuleState, method: FunctionInfo, name: str) -> bool:
        """Whether ``method`` uses its parameter ``name`` as a tensor (``x.view(...)``,
        ``torch.cat([x, y])``, given to a weighted submodule or to another such method)."""
        key = (id(method), name)
        known = self._tensor_params.get(key)
        if known is None:
            self._tensor_params[key] = False  # (methods that hand it to each other)
            known = self._tensor_params[key] = name in self.on_module_device(state, method).names
        return known

    # -- where a value meets the module's device -------------------------------------------

    def meeting(self, node, stays, devices: "MethodDevices") -> Optional[str]:
        """What ``node`` (an expression of ``devices.method``) does when it combines a value
        that ``stays(expr)`` says is off the module's device with a tensor on it
        (``devices.carries``): arithmetic, a comparison, a combining tensor method
        (``.masked_fill``, ``.matmul``), a torch function given both (not as an index), or an
        argument of a registered submodule with weights (or one given a device tensor too).
        The words for a message ("combines it with a tensor on the module's device"); None
        when ``node`` is no such meeting."""
        carries = devices.carries
        if isinstance(node, cst.Subscript):
            # ``self.alpha[targets]``: a CPU tensor indexed by a tensor on the device (the
            # other way round, a CPU index into a device tensor, works)
            if stays(node.value) and any(
                    isinstance(element.slice, cst.Index) and carries(element.slice.value)
                    for element in node.slice):
                return Meeting("indexes it with a tensor on the module's device", INDEX_ERROR)
        elif isinstance(node, cst.BinaryOperation) and \
                isinstance(node.operator, ARITHMETIC_OPERATORS):
            if (stays(node.left) and carries(node.right)) or (stays(node.right) and carries(node.left)):
                return Meeting("combines it with a tensor on the module's device")
        elif isinstance(node, cst.Comparison) and not any(  # (``states is not None``: no op)
                isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn))
                for c in node.comparisons):
            operands = [node.left] + [c.comparator for c in node.comparisons]
            if any(stays(o) for o in operands) and any(carries(o) for o in operands):
                return Meeting("compares it with a tensor on the module's device")
        elif isinstance(node, cst.Call):
            return self._call_meeting(node, stays, devices, carries)
        return None

    def _call_meeting(self, call: cst.Call, stays, devices: "MethodDevices",
                      carries) -> Optional[str]:
        state = devices.state
        func = call.func
        arguments = [a.value for a in call.args]
        spread = [e.value for arg in arguments if isinstance(arg, (cst.List, cst.Tuple))
                  for e in arg.elements]
        operands = arguments + spread
        if not any(stays(o) for o in operands) and not (
                isinstance(func, cst.Attribute) and stays(func.value)):
            return None
        qualified = self.kinds.qualname(func, devices.method.scope) or ""
        if isinstance(func, cst.Attribute) and not qualified:
            taking = func.attr.value.rstrip("_") \
                if not _is_name(func.value, devices.self_name) else ""
        else:
            taking = qualified.rpartition(".")[2] if api.is_tensor_function(qualified) else ""
        checked = checked_index_operands(call, taking, bool(qualified)) if taking else None
        if checked is not None:
            # ``self.fc(x).index_select(1, self.perm)``: the CPU index of a tensor on the
            # device, which these operations check (``x[self.perm]`` takes it)
            source, index, word = checked
            if carries(source) and stays(index):
                return Meeting(
                    f"passes it to `{qualified or '.' + func.attr.value}()` as the "
                    f"{word or 'index'} of a tensor on the module's device",
                    INDEX_ARGUMENT_ERROR.format(word=word, index_device="cpu", other="cuda:0")
                    if word else SAME_DEVICE_ERROR)
        if taking in _TAKES_INDICES:
            # ``self.alpha.gather(0, targets)``, ``torch.zeros(n, k).scatter_(1, labels, 1)``:
            # a CPU input given an index on the device (a CPU index into a device tensor: above)
            source = func.value if not qualified else arguments[0] if arguments else None
            if taking in _REFUSE_DEVICE_INDEX and source is not None and stays(source) and any(
                    carries(o) for o in operands if o is not source):
                return Meeting(f"passes it to `.{func.attr.value if not qualified else taking}()` "
                               "with an index on the module's device")
            return None
        if isinstance(func, cst.Attribute) and func.attr.value in _COMBINING and not qualified:
            # (a tensor method: ``torch.where(...)`` is a torch function, below)
            if (carries(func.value) and any(stays(o) for o in operands)) or \
                    (stays(func.value) and any(carries(o) for o in operands)):
                masked = func.attr.value in api.MASK_CHECKING_METHODS and arguments \
                    and (stays(arguments[0]) or carries(arguments[0]))
                return Meeting(
                    f"passes it to `.{func.attr.value}()` with a tensor on the module's device",
                    MASK_ERROR if masked else SAME_DEVICE_ERROR)
            return None
        self_name = devices.self_name
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.value.value == self_name and func.attr.value in state.submodules:
            if self.has_parameters(state, func.attr.value) or \
                    any(carries(o) for o in operands):
                words = f"passes it to the submodule `{self_name}.{func.attr.value}`"
                state_given = arguments[1] if len(arguments) > 1 else None
                if state_given is not None and self.is_recurrent(state, func.attr.value) and \
                        not stays(arguments[0]) and (stays(state_given) or (  # (h, c)
                            isinstance(state_given, cst.Tuple) and
                            any(stays(e.value) for e in state_given.elements))):
                    return Meeting(words + " as its state", RNN_STATE_ERROR)
                if arguments and stays(arguments[0]) and self.is_recurrent(state, func.attr.value):
                    return Meeting(words + " as its input", RNN_INPUT_ERROR)
                return Meeting(words)
            return None
        if api.is_tensor_function(qualified) and qualified.rpartition(".")[2] not in _TAKES_INDICES \
                and any(carries(o) for o in operands):
            return Meeting(f"passes it to `{qualified}` with a tensor on the module's device")
        meetings = self.meetings_in_call() if self.meetings_in_call is not None else None
        for first, second, operation, shown in (
                meetings(call, devices.method.scope) if meetings is not None else ()):
            # ``add_noise(h, noise)`` of ``def add_noise(x, noise): return x + noise``, a custom
            # autograd operation given the mask (``Op.apply(x, self.weight, self.mask)``)
            if isinstance(operation, cst.Subscript):
                if stays(first) and carries(second):
                    return Meeting(f"passes it to `{shown}()`, which indexes it there with a "
                                   f"tensor on the module's device (`{source_of(operation)}`)",
                                   INDEX_ERROR)
            elif (stays(first) and carries(second)) or (stays(second) and carries(first)):
                return Meeting(f"passes it to `{shown}()` with a tensor on the module's device, "
                               f"where the two meet (`{source_of(operation)}`)")
        if isinstance(func, cst.Name) and func.value == self_name and \
                any(carries(o) and not stays(o) for o in operands):
            # ``self(x, hidden)`` in a Lightning step: the module's own ``forward``
            return Meeting(
                f"passes it to the module itself (`{self_name}(...)`) with a tensor on its device")
        return None

    def is_recurrent(self, state: ModuleState, name: str) -> bool:
        """Whether every assignment of the submodule ``self.NAME`` builds a torch.nn RNN,
        LSTM or GRU (``nn.LSTM(d, h)``)."""
        bindings = state.info.attributes.get(name, ())
        return bool(bindings) and all(
            isinstance(b.value, cst.Call) and (self.kinds.qualname(b.value.func, b.ctx.scope)
                                               or "").startswith("torch.nn.")
            and last_name(b.value.func) in api.RECURRENT_MODULES for b in bindings)

    def has_parameters(self, state: ModuleState, name: str) -> bool:
        """Whether the registered submodule ``self.NAME`` certainly holds parameters (so its
        output, and what it is given, must be on the module's device): a torch.nn layer that
        has weights, or a class of this file that registers parameters or such submodules."""
        for binding in state.info.attributes.get(name, ()):
            value = binding.value
            if not isinstance(value, cst.Call):
                continue
            qualified = self.kinds.qualname(value.func, binding.ctx.scope) or ""
            if qualified.startswith("torch.nn.") and qualified.rpartition(".")[2] in _LAYERS_WITH_WEIGHTS:
                return True
            kind = self.kinds.kind_of(value.func, binding.ctx.scope)
            if isinstance(kind, ClassRef) and kind.info is not state.info:
                inner = self.state(kind.info)
                if inner.is_module and (inner.parameters or any(
                        self.has_parameters(inner, sub) for sub in inner.submodules)):
                    return True
        return False

    def is_torch_module(self, state: ModuleState, name: str) -> bool:
        """Whether every assignment of the submodule ``self.NAME`` is a ``torch.nn`` module
        class called (``nn.L1Loss()``, ``nn.Dropout(p)``): its ``forward`` takes tensors."""
        bindings = state.info.attributes.get(name, ())
        return bool(bindings) and all(
            isinstance(b.value, cst.Call) and (self.kinds.qualname(b.value.func, b.ctx.scope) or "")
            .startswith("torch.nn.") and self.kinds.kind_of(b.value, b.ctx.scope) is MODULE
            for b in bindings)

    def _registered_by_value(self, value, binding: Binding) -> Optional[str]:
        """``nn.Parameter(...)`` -> "parameters", ``nn.Buffer(...)`` -> "buffers", a module
        (``nn.Linear(...)``, ``nn.ModuleList(...)``, an instance of a module class) ->
        "submodules"."""
        if isinstance(value, cst.Call):
            # by the qualified name where the file imports it (``from torch.nn import
            # Parameter as Param``), else by the name itself
            callee = (self.kinds.qualname(value.func, binding.ctx.scope) or
                      last_name(value.func) or "").rpartition(".")[2]
            if callee in api.PARAMETER_CLASS_NAMES:
                return "parameters"
            if callee == "Buffer":
                return "buffers"
        if self.kinds.is_module(self.kinds.binding_kind(binding)):
            return "submodules"
        return None

    def _registrations(self, info: ClassInfo):
        """(name, kind) for ``self.register_buffer("NAME", ...)`` and its neighbours in the
        class's methods; (None, kind) for a name computed at run time
        (``self.register_buffer(f"w{i}", w)``)."""
        for method, kind in _REGISTERING_CALLS.items():
            for site in self.collected.calls_by_name.get(method, ()):
                func = site.ctx.func
                call = site.call
                if func is None or func.cls is not info or not isinstance(call.func, cst.Attribute):
                    continue
                owner = call.func.value
                if not (isinstance(owner, cst.Name) and func.param_names
                        and owner.value == func.param_names[0]):
                    continue  # registered on another module, not on self
                name = string_value(call.args[0].value) if call.args else None
                if name is not None or call.args:
                    yield name, kind

    def _holds_modules(self, binding: Binding) -> bool:
        elements = self._displayed(binding)
        return bool(elements) and all(
            self.kinds.is_module(self.kinds.kind_of(element, scope)) for element, scope in elements)

    def _displayed(self, binding: Binding) -> Optional[List[Tuple[cst.BaseExpression, Scope]]]:
        """(element, the scope it is read in) of a display or comprehension ``binding``
        assigns (a dict's values); None for anything else."""
        value = binding.value
        scope = binding.ctx.scope
        shape = _CONTAINER_NODES.get(type(value))
        if shape == "display":
            return [(e.value, scope) for e in value.elements
                    if not isinstance(e, cst.StarredElement)]
        if shape == "dict":
            return [(e.value, scope) for e in value.elements if isinstance(e, cst.DictElement)]
        if shape == "comprehension":
            inner = value.value if isinstance(value, cst.DictComp) else value.elt
            return [(inner, self._comprehension_scope(value) or scope)]
        return None

    def container_elements(self, binding: Binding
                           ) -> Optional[List[Tuple[cst.BaseExpression, Scope]]]:
        """What the container that ``self.NAME = <binding>`` builds holds, as (element, the
        scope it is read in): the items of a display or comprehension; for ``[]`` or ``{}``,
        what the same method then adds with ``self.NAME.append(v)`` / ``.extend([...])`` /
        ``self.NAME[k] = v`` (the ``buffer-list`` shape: ``self.anchors = []`` and a loop that
        appends ``torch.ones(4) * s``). None when the contents cannot be told (it is taken
        from, or added to in another method)."""
        elements = self._displayed(binding)
        if elements or binding.value is None or \
                _CONTAINER_NODES.get(type(binding.value)) not in ("display", "dict"):
            return elements
        func, target = binding.ctx.func, binding.node
        if func is None or not isinstance(target, cst.Attribute):
            return None
        name, self_name = target.attr.value, func.self_name

        def on_it(expr) -> bool:
            return isinstance(expr, cst.Attribute) and expr.attr.value == name and \
                _is_name(expr.value, self_name)

        found = []
        for node in walk_code(func.cls.node, into_functions=True):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and on_it(node.func.value):
                if not holds(func.node.body, node) or \
                        node.func.attr.value not in ("append", "extend"):
                    return None  # taken from, or filled elsewhere
                argument = node.args[0].value if len(node.args) == 1 else None
                if node.func.attr.value == "extend":
                    argument = argument if isinstance(argument, (cst.List, cst.Tuple)) else None
                    items = None if argument is None else [e.value for e in argument.elements]
                else:
                    items = None if argument is None else [argument]
                if items is None:
                    return None
                found.extend((item, binding.ctx.scope) for item in items)
            elif isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Subscript) \
                    and on_it(node.target.value):
                return None  # ``self.NAME[k] = v``: not followed
        return found

    def _comprehension_scope(self, comprehension: cst.CSTNode):
        """The scope the traversal made for ``comprehension`` (its names live there)."""
        return next((scope for scope in self.collected.scopes if scope.node is comprehension), None)

    def _called_on_moved_instances(self, info: ClassInfo) -> Set[str]:
        """The methods of ``info`` (not ``forward``, not dunders) that code outside the class
        calls on an instance that the same function (or the module's code) moved to a device
        before the call: ``model = VAE().to(device)`` or ``model.to(device)``, then
        ``model.sample(16)`` (issue 28: a VAE's ``sample`` or a GAN's ``generate`` makes its
        noise with ``torch.randn(n, k)`` and decodes it with the GPU weights)."""
        found: Set[str] = set()
        calls = self.collected.calls_by_name
        for name in info.methods:
            if name == "forward" or name.startswith("__") or name not in calls:
                continue
            for site in calls[name]:
                func = site.call.func
                if site.ctx.cls is not info and isinstance(func, cst.Attribute) and \
                        isinstance(func.value, cst.Name) and \
                        self._moved_instance_before(func.value.value, site, info):
                    found.add(name)
                    break
        return found

    def _moved_instance_before(self, name: str, site, info: ClassInfo) -> bool:
        """Whether ``name`` holds an instance of ``info`` (its every binding in the scope of
        ``site`` makes one) that the scope moved to a device before ``site``."""
        scope = site.ctx.scope
        bindings = scope.bindings.get(name, ())
        if self._move_ids is None:
            self._move_ids = {id(call) for call in self._device_moves()}
        moves = self._move_ids

        def makes_one(value) -> bool:
            while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                    value.func.attr.value in api.ACCELERATOR_MOVE_METHODS:
                value = value.func.value
            return isinstance(value, cst.Call) and last_name(value.func) == info.name

        if not bindings or not all(b.how == ASSIGN and not b.path and makes_one(b.value)
                                   for b in bindings):
            return False
        if any(b.order < site.order and id(b.value) in moves for b in bindings):
            return True  # ``model = VAE().to(device)``
        return any(move.order < site.order and move.ctx.scope is scope and id(move.call) in moves
                   and _is_name(move.call.func.value, name)
                   for method in api.ACCELERATOR_MOVE_METHODS
                   for move in self.collected.calls_by_name.get(method, ())
                   if isinstance(move.call.func, cst.Attribute))

    def _reached_from(self, info: ClassInfo, start: str) -> Set[str]:
        """The methods ``start`` calls on ``self``, and those they call, transitively."""
        reached: Set[str] = set()
        pending = [start] if start in info.methods else []
        while pending:
            name = pending.pop()
            if name in reached:
                continue
            reached.add(name)
            method = info.methods[name]
            self_name = method.param_names[0] if method.param_names else None
            if self_name is None:
                continue
            for node in walk_code(method.node.body):
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                        isinstance(node.func.value, cst.Name) and node.func.value.value == self_name \
                        and node.func.attr.value in info.methods:
                    pending.append(node.func.attr.value)
        return reached



_LAYERS_WITH_WEIGHTS = api.LAYERS_WITH_WEIGHTS
# Tensor methods (and attributes) that numpy arrays, lists and numbers do not have: a
# parameter used with one of them is a tensor.
_TENSOR_ONLY_METHODS = api.TENSOR_PARAMETER_METHODS
# Methods of a tensor that give something that is not a tensor on its device.
_OFF_DEVICE_METHODS = api.NON_TENSOR_TENSOR_METHODS | api.HOST_COPY_METHODS
# Tensor methods that give tensors on the receiver's device (to unpack).
_SPLITTING_METHODS = api.SPLITTING_METHODS | {"tensor_split"}


class MethodDevices(DeviceTrace):
    """Values that a method of a module holds on the module's device, once the module was
    moved there: its registered parameters and buffers, what its registered submodules with
    weights return, parameters the method uses as tensors (the inputs a caller of a moved
    model gives it), and what is computed from those. Flow-insensitive and conservative: a
    local name counts only when every assignment of it in the method gives such a value."""

    def __init__(self, classes: ModuleClasses, state: ModuleState, method: FunctionInfo,
                 given: FrozenSet[str] = frozenset(), inputs: bool = True) -> None:
        # (a proxy: ``classes`` caches this object, and a strong reference back would make a
        # cycle that keeps the file's tree alive until the collector runs)
        self.classes = weakref.proxy(classes)
        self.kinds = classes.kinds
        self.state = state
        self.method = method
        self.self_name = method.self_name
        self.given = given  # parameters a caller gives tensors on the module's device
        # False: the method's parameters count only as ``given`` (what the module's own state
        # makes, ``state_only``), not because the method uses them as tensors
        self.inputs = inputs
        self.names: Set[str] = set()
        self._solve()

    def _solve(self) -> None:
        scope = self.method.scope
        if scope is None:
            return
        params = [name for name in self.method.param_names if name != self.self_name]
        body = list(walk_code(self.method.node.body, into_functions=True))
        tensors = {name for name in params if name in self.given or (
            self.inputs and self._param_is_tensor(name, body))}
        if self.inputs:
            tensors |= self._input_in_arithmetic(params, body)
        if self.inputs and params and self.method.name in api.LIGHTNING_STEP_METHODS and \
                self.kinds.class_is_lightning(self.state.info):
            tensors.add(params[0])  # the batch, which the Trainer moves to the module's device
        assigned = {name: bindings for name, bindings in scope.bindings.items()
                    if name not in params and bindings}
        # The greatest fixed point: a name counts unless one of its assignments gives
        # something else, so that ``scores = scores.masked_fill(...)`` keeps ``scores``. A
        # number it starts from (``spec_loss, ssim_loss = 0, 0`` before the branches that
        # compute them, issue 28) gives nothing else, but one assignment must give a tensor.
        self.names = tensors | set(assigned)
        changed = True
        while changed:
            changed = False
            for name, bindings in assigned.items():
                if name in self.names and not (all(
                        (b.how == ASSIGN and ((self._part_carries(b) if b.path
                                               else self.carries(b.value)) or _number_bound(b)))
                        or (b.how == FOR and self._iterated_carries(b.value, b.path))
                        for b in bindings) and not all(_number_bound(b) for b in bindings)):
                    self.names.discard(name)
                    changed = True

    def _part_carries(self, binding) -> bool:
        """A name unpacked from a tuple is on the module's device: the whole value is a tensor
        there (its rows), or a method of the class returns a tuple whose item at the name's
        position is (``x_mag, x_phs = self.stft(x)`` of ``return x_stft.abs(),
        torch.angle(x_stft)``; auraloss's ``STFTLoss``, devreports2)."""
        if self.carries(binding.value):
            return True
        call = binding.value
        if len(binding.path) != 1 or not isinstance(call, cst.Call):
            return False
        name = self._self_attribute(call.func)
        callee = self.state.info.methods.get(name) if name is not None else None
        return callee is not None and self.classes.returns_on_device(
            self.state, callee, self._given(callee, call), binding.path[0])

    def _iterated_carries(self, iterated, path) -> bool:
        """What a ``for`` loop takes out of ``iterated`` at unpacking ``path`` is on the
        module's device: an item (a row, or a 0-dim element) of a tensor there, through
        ``zip(...)`` and ``enumerate(...)`` (TTS's ``for idx, (ilen, olen) in
        enumerate(zip(ilens, olens))`` of the GPU lengths; ``placement.loop_item_source``)."""
        rows = loop_item_source(iterated, path)
        return rows is not None and self.carries(rows)

    def _param_is_tensor(self, name: str, body) -> bool:
        scope = self.method.scope
        if any(self.kinds.binding_kind(b) is TENSOR for b in scope.bindings.get(name, ())):
            return True
        for node in body:
            if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                    and node.value.value == name and node.attr.value in api.DEVICE_ATTRIBUTES:
                return True
            if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) \
                    and node.value.value == name and _indexes_dimensions(node):
                return True  # ``x[:, None]``: an input indexed by dimensions (not a list)
            if not isinstance(node, cst.Call):
                continue
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                    and func.value.value == name and (
                        func.attr.value in _TENSOR_ONLY_METHODS
                        or (func.attr.value == "view" and node.args and all(
                            is_number(a.value) for a in node.args))):
                # ``x.size(1)``: numpy's ``size`` is not called; ``y.view(-1, 1)``: numpy's
                # ``view`` takes a dtype, not sizes
                return True
            if isinstance(func, cst.Attribute) and func.attr.value in api.TENSOR_INDEX_METHODS:
                index = next((a.value for a in node.args if a.keyword is not None
                              and a.keyword.value == "index"), None)
                if index is None and len(node.args) > 1 and node.args[1].keyword is None \
                        and not node.args[0].star:
                    index = node.args[1].value
                if isinstance(index, cst.Name) and index.value == name:
                    return True  # ``self.alpha.gather(0, target)``: the index is a tensor
            passed = any(isinstance(a.value, cst.Name) and a.value.value == name for a in node.args)
            if passed and (self._weighted_submodule(func) or self._torch_submodule(func)):
                return True  # (a torch.nn module, a loss among them, takes tensors)
            if passed and self._passed_to_tensor_parameter(func, node, name):
                return True  # ``x = self._process_preds(x)``, which calls ``x.view(...)``
            if passed and self._tensor_function(func):
                return True  # ``F.interpolate(x, ...)``, ``torch.cat([x, y])`` take tensors
            if self._tensor_function(func) and any(
                    isinstance(a.value, (cst.List, cst.Tuple)) and any(
                        isinstance(e.value, cst.Name) and e.value.value == name
                        for e in a.value.elements) for a in node.args):
                return True
        return False

    def _input_in_arithmetic(self, params: List[str], body) -> Set[str]:
        """``forward``'s input (its first parameter, without a default) as an operand of
        arithmetic (``(x - self.mean) / self.std``): what a moved module is called with, and
        arithmetic takes tensors or numbers, which nobody passes as a module's input (issue 28:
        a normalisation module with no weights of its own)."""
        if self.method.name != "forward" or not params:
            return set()
        first = params[0]
        parameters = self.method.node.params
        if any(p.name.value == first and (p.default is not None or p.annotation is not None)
               for p in parameters.params):
            return set()  # (an annotation says what it is: ``kinds`` reads it)
        operands = (o for node in body if isinstance(node, cst.BinaryOperation)
                    and isinstance(node.operator, ARITHMETIC_OPERATORS) for o in (node.left, node.right))
        return {first} if any(isinstance(o, cst.Name) and o.value == first for o in operands) \
            else set()

    def _tensor_function(self, func) -> bool:
        """A torch function that takes tensors (not a factory, which also takes numbers)."""
        scope = self.method.scope
        qualified = self.kinds.qualname(func, scope) if scope is not None else None
        if qualified is None or not api.is_tensor_function(qualified):
            return False
        tail = qualified.rpartition(".")[2]
        return tail not in api.FACTORIES and not tail.endswith("_like")

    def _passed_to_tensor_parameter(self, func, call: cst.Call, name: str) -> bool:
        """``self.helper(..., name, ...)``: a method of the class whose parameter receiving
        ``name`` is used there as a tensor."""
        method = self._self_attribute(func)
        if method is None or method not in self.state.info.methods or \
                method in self.state.submodules:
            return False
        callee = self.state.info.methods[method]
        return any(self.classes.parameter_is_tensor(self.state, callee, param)
                   for param in callee.param_names[1:]
                   if _is_name(argument_for_parameter(call, callee, param, bound=True), name))

    def _given(self, callee: FunctionInfo, call: cst.Call) -> FrozenSet[str]:
        """The parameters of ``callee`` (a method called on ``self``) that ``call`` gives a
        tensor on the module's device."""
        return frozenset(
            param for param in callee.param_names[1:]
            if (argument := argument_for_parameter(call, callee, param, bound=True)) is not None
            and self.carries(argument))

    def _self_attribute(self, expr) -> Optional[str]:
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
                and expr.value.value == self.self_name:
            return expr.attr.value
        return None

    def _torch_submodule(self, func) -> bool:
        """``self.criterion`` registered as a ``torch.nn`` module (``nn.L1Loss()``)."""
        name = self._self_attribute(func)
        return name is not None and name in self.state.submodules and \
            self.classes.is_torch_module(self.state, name)

    def _weighted_submodule(self, func) -> bool:
        name = self._self_attribute(func)
        return name is not None and name in self.state.submodules and \
            self.classes.has_parameters(self.state, name)

    def carries(self, expr) -> bool:
        """Whether ``expr``'s value is a tensor on the module's device (the placement
        engine's recursion, with what this method's names and ``self`` state hold)."""
        return bool(self.device_of(expr))

    def name_device(self, name: cst.Name) -> bool:
        return name.value in self.names

    def attribute_device(self, expr: cst.Attribute):
        attribute = self._self_attribute(expr)
        if attribute is None:
            return UNDECIDED
        return attribute in self.state.parameters or attribute in self.state.buffers

    def call_device(self, call: cst.Call) -> bool:
        func = call.func
        if self._weighted_submodule(func):
            return True
        if isinstance(func, cst.Name) and func.value == self.self_name:
            # ``self(x)`` (a Lightning step): the module's output, where its inputs are
            if not self.inputs:
                # (or where its own state puts what ``forward`` returns: ``q = self(obs)``)
                forward = self.state.info.methods.get("forward")
                return forward is not None and self.classes.returns_on_device(
                    self.state, forward, frozenset())
            return any(self.carries(a.value) for a in call.args)
        name = self._self_attribute(func)
        if name is None and isinstance(func, cst.Subscript):
            # ``self.blocks[i](x)``: an item of a registered container (``nn.ModuleList``)
            name = self._self_attribute(func.value)
            if name is not None and name not in self.state.submodules:
                name = None
        if name is not None and name in self.state.submodules:
            # a registered module (dropout, an activation) given a tensor on the device
            return any(self.carries(a.value) for a in call.args)
        if name is not None and name in self.state.info.methods:
            # a method of the class: what it returns from what it is given
            callee = self.state.info.methods[name]
            return self.classes.returns_on_device(self.state, callee, self._given(callee, call))
        scope = self.method.scope
        helper = plain_function_named(self.kinds, func, scope) if scope is not None else None
        if helper is not None and helper is not self.method:
            # ``scores = transport(scores, self.bin_score)``: a plain function of the file, where
            # what it returns is computed from the arguments given on the device (SuperGlue's
            # optimal transport in BasicPBC, devreports3)
            given = frozenset(
                param for param in helper.param_names
                if (argument := argument_for_parameter(call, helper, param)) is not None
                and self.carries(argument))
            return bool(given) and self.classes.returns_on_device(
                self.state, helper, given, inputs=False)
        if isinstance(func, cst.Call) and scope is not None and call.args and \
                (self.kinds.qualname(func.func, scope) or "").rpartition(".")[0] == "torch.nn":
            # ``nn.ReLU(inplace=True)(x)``: a torch.nn module built and called at once computes
            # where its input is (one with weights fails there: TDL007 reports it)
            return self.carries(call.args[0].value)
        qualified = self.kinds.qualname(func, scope) if scope is not None else None
        if qualified in api.DEVICE_KEEPING_FUNCTIONS:  # ``rearrange(x, "b n -> n b")``
            return bool(call.args) and self.carries(call.args[0].value)
        if qualified is not None:
            # (a factory creates where ``device=`` says, a ``*_like`` like another tensor)
            return self._tensor_function(func) and (
                any(self.carries(a.value) for a in call.args if a.keyword is None) or any(
                    isinstance(a.value, (cst.List, cst.Tuple)) and
                    any(self.carries(e.value) for e in a.value.elements) for a in call.args))
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in _OFF_DEVICE_METHODS or method in api.RETYPING_METHODS:
                return False
            if method.startswith("new_"):
                # ``x.new_zeros(n, k)``: made where its receiver is (litgpt's LoRA ``zero_pad``)
                return self.carries(func.value)
            return (method in api.TENSOR_METHODS or method in _SPLITTING_METHODS) \
                and self.carries(func.value)
        return False


# The containers an attribute may be assigned: displays, dicts and comprehensions.
_CONTAINER_NODES = {cst.List: "display", cst.Tuple: "display", cst.Set: "display",
                    cst.Dict: "dict", cst.ListComp: "comprehension", cst.SetComp: "comprehension",
                    cst.GeneratorExp: "comprehension", cst.DictComp: "comprehension"}


def _tensor_tuple(kind) -> bool:
    """A tuple of tensors (two or more), as an RNN's ``(h, c)`` state."""
    return isinstance(kind, TupleKind) and len(kind.items) > 1 and \
        all(item is TENSOR for item in kind.items)


def _is_name(expr, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def _super_move(call: cst.Call) -> bool:
    """``super().to(device)`` / ``super(Cls, self).cuda()``: the inherited move."""
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value in _MOVING_OVERRIDES and \
        isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Name) and \
        func.value.func.value == "super"


def _number_bound(binding: Binding) -> bool:
    """``x = 0``, or ``a, x = 0, 0``: the binding gives a literal number."""
    value = binding.value
    if binding.how != ASSIGN or value is None:
        return False
    if not binding.path:
        return is_number(value)
    if len(binding.path) == 1 and isinstance(value, (cst.Tuple, cst.List)) and \
            binding.path[0] < len(value.elements):
        element = value.elements[binding.path[0]]
        return not isinstance(element, cst.StarredElement) and is_number(element.value)
    return False


def _indexes_dimensions(subscript: cst.Subscript) -> bool:
    """``x[:, None]``, ``x[..., 0]``: an index of several dimensions with a slice, ``None``
    or ``...`` among them, which lists and numbers do not take (a tensor or an array does,
    and a module's method is given tensors)."""
    if len(subscript.slice) < 2:
        return False
    return any(isinstance(e.slice, cst.Slice) or (
        isinstance(e.slice, cst.Index) and (
            (isinstance(e.slice.value, cst.Name) and e.slice.value.value == "None")
            or isinstance(e.slice.value, cst.Ellipsis))) for e in subscript.slice)
