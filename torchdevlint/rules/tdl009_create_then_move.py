"""TDL009 (opt-in, performance): a torch factory creates a tensor on the CPU and the very next
call copies it to a device: ``torch.zeros(3, 4).to(device)``, ``torch.arange(n).cuda()``.
``torch.zeros(3, 4, device=device)`` allocates and fills on the device instead: no CPU tensor,
no host-to-device copy.

Reported: ``.to(D)`` / ``.to(D, dtype)`` / ``.to(device=D, dtype=T)`` (plus ``non_blocking``,
``copy``, ``memory_format``) and ``.cuda(...)`` called directly on a factory that generates its
values (``zeros ones empty full eye arange linspace logspace rand randn randint randperm``,
see ``rules/factories.py``) without ``device=``, or on a local name bound once to such a
factory's result under the same tests whose only use is the move (issue 28; reported on the
factory). ``D`` must name a device: a string, an int,
``torch.device(...)``, ``x.device``, a device-named variable (``device``, ``self.device``,
``args.device``), ``device=``, or a value the analysis knows is a device; and
``analysis.placement.device_of_move`` must call it a move (not a dtype, not the CPU, not another
tensor). Silent: a factory with ``device=``, ``generator=`` (a CPU generator),
``pin_memory=`` or ``out=``; ``pin_memory()`` chains; ``*_like`` / ``torch.tensor`` and the
other data factories (see ``rules/factories.py`` for why).

Fix: move the device (and the dtype given to ``.to``) into the factory's arguments:
``torch.zeros(3, 4, device=device)``; ``.cuda()`` gives ``device="cuda"`` (a device without an
index is the current CUDA device, as for ``.cuda()``). Safe when the result is the very same
tensor: ``.to()`` got only a device (and a dtype), and the factory's values cannot depend on the
device or dtype that computes them (``zeros ones empty eye``, ``full`` without a dtype,
``arange(n)``), and ``requires_grad=`` is not given. Unsafe otherwise: random factories draw
from the device's generator (other numbers for the same seed), ``linspace`` / ``logspace`` /
``arange(a, b, step)`` may round differently, ``non_blocking=`` / ``copy=`` are dropped,
``requires_grad=True`` makes the result a leaf, ``.cuda(i)`` becomes ``device=i``. No fix for
``memory_format=``, for a dtype given both to the factory and to ``.to``, or where a comment
sits in the removed text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional, Tuple

import libcst as cst

from torchdevlint.analysis import (
    ASSIGN, K, Analysis, CallSite, Scope, api, holds, is_device_name, keyword_value, string_value,
    walk_code,
)
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext
from torchdevlint.fixes.model import Fix, FixPlan
from torchdevlint.rules import factories
from torchdevlint.rules.base import TOKEN_GAP, Message, Rule, Violation, method_call_text, source_of
from torchdevlint.rules.prefilter import created_then_moved_in

_DROPPABLE = frozenset(("non_blocking", "copy"))


@dataclass
class CreateOnDevice(FixPlan):
    """The factory call, the move on its result, and what goes into the factory."""

    factory: cst.Call
    move: cst.Call
    device: Optional[cst.BaseExpression]  # None: ``.cuda()``
    dtype: Optional[cst.BaseExpression]
    safe: bool
    # the name the factory's result is bound to, when the move is made on it (issue 28)
    stored: Optional[cst.Name] = None

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        device = '"cuda"' if self.device is None else ctx.text(self.device)
        arguments: Tuple[Tuple[str, str], ...] = (("device", device),)
        if self.dtype is not None:
            arguments += (("dtype", ctx.text(self.dtype)),)
        edits = factories.into_factory(ctx, self.factory, self.move, arguments, self.stored)
        if edits is None:
            return None
        return Fix(finding.code, self.safe,
                   f"create the tensor on the device: `{', '.join(f'{n}={t}' for n, t in arguments)}`",
                   edits)


class CreateThenMove(Rule):
    """
    **Off by default** (performance advice, not a bug). Turn it on with `--extend-select TDL009`,
    or `extend-select = ["TDL009"]` in `[tool.torchdevlint]`, or `flake8 --extend-select TDL009`.
    Prefix selectors (`TDL`, `TDL0`, `ALL`) leave it off: only its exact code turns it on.

    ## What it does
    Reports a torch factory call whose tensor is created on the CPU and copied to a device by the
    very next call, or through a name whose only use is that copy:

    ```python
    torch.zeros(batch, hidden).to(device)
    torch.arange(n).cuda()
    torch.ones(3, 3).to(device=device, dtype=torch.float16)
    staged = torch.zeros(batch, hidden)
    h = staged.to(device)
    ```

    The factory is one that generates its values (`zeros`, `ones`, `empty`, `full`, `eye`,
    `arange`, `linspace`, `logspace`, `rand`, `randn`, `randint`, `randperm`) and has no `device=`.
    The move is `.cuda(...)` or a `.to(...)` whose device is provably a device, not a dtype, not the
    CPU and not another tensor: a string (`"cuda"`, `f"cuda:{rank}"`), an int, `torch.device(...)`,
    `x.device`, a device-named variable (`device`, `self.device`, `args.device`, `*_device`), or
    `device=` / a device followed by a dtype. The finding is on `.to` / `.cuda`; through a name, on the factory.

    What counts as a true finding (the definition the precision review applies): the code creates
    a tensor on the CPU that is copied to an accelerator at once, where the factory could have
    created it on that device in one call. Where and how often it runs (once at start-up, or in
    every step) does not change the verdict, only how much it costs.

    Silent:
    - a factory with `device=` (already there), `generator=` (a CPU generator: creating on the
      device would fail or draw other numbers), `pin_memory=` or `out=`;
    - `.to(dtype)` alone, `.to(other_tensor)` (or any argument not provably a device), `.to("cpu")`
      (a no-op: `.to()` returns the CPU tensor itself), `.to(*args)`;
    - `pin_memory()` chains (`torch.zeros(n).pin_memory().to(device, non_blocking=True)` is a
      deliberate staging buffer), and any call between the factory and the move
      (`torch.zeros(n).float().to(device)`);
    - `torch.tensor`, `torch.as_tensor`, `torch.asarray`, `torch.from_numpy` and the legacy
      constructors: their data is on the host anyway. `torch.tensor(data, device="cuda")` itself
      builds a CPU tensor and moves it with `.to` (torch's NOTE "[torch.tensor, lift_fresh, and
      device movement]" in `torch/csrc/utils/tensor_new.h`), so `device=` saves nothing provable;
    - `*_like` factories and `x.new_*`: they create on their input's device, which the analysis
      does not know (on the device already, `.to(device)` is free).

    ## Why is this bad
    `torch.zeros(n).to(device)` allocates and fills `n` elements in host memory, allocates them
    again on the device, copies them over (a synchronous host-to-device transfer from pageable
    memory) and frees the host copy. `torch.zeros(n, device=device)` allocates and fills on the
    device and nothing else. PyTorch's performance tuning guide says it: "create tensors directly
    on the target device". In a training step or `forward` the waste repeats every iteration.

    On the `meta` device, which plays the accelerator in this project's runtime tests, torch's
    dispatcher shows the difference: the flagged code runs `aten.zeros` on `cpu` then
    `aten._to_copy` to `meta`; the fixed code runs `aten.zeros` on `meta` only.

    ## Example
    ```python
    def init_hidden(batch, hidden, device):
        h = torch.zeros(batch, hidden).to(device)
        positions = torch.arange(seq_len).cuda()
        return h, positions
    ```

    ## Use instead
    ```python
    def init_hidden(batch, hidden, device):
        h = torch.zeros(batch, hidden, device=device)
        positions = torch.arange(seq_len, device="cuda")
        return h, positions
    ```

    ## Fix safety
    `--fix` moves the device, and a dtype given to `.to()`, into the factory's arguments and
    removes the move: `torch.zeros(3, 4).to(device)` becomes `torch.zeros(3, 4, device=device)`,
    `torch.ones(3).to(device, torch.float16)` and `.to(device=d, dtype=torch.float16)` become
    `torch.ones(3, device=d, dtype=torch.float16)`, and `.cuda()` becomes `device="cuda"` (a device
    without an index is the current CUDA device, exactly the one `.cuda()` uses: "If the device
    ordinal is not present, this object will always represent the current device for the device
    type", torch.device's documentation).

    The fix is **safe** when the result is the very same tensor: `.to()` got only a device (and a
    dtype), the factory's values cannot depend on the device or dtype that computes them
    (`zeros`, `ones`, `empty`, `eye` in any dtype; `full` without a dtype; `arange(n)` with one
    argument), and the factory has no `requires_grad=`. The runtime tests
    (`tests/runtime/test_create_then_move_runtime.py`) run every fixture and its fixed version and check
    equal tensors (values, dtype, device, shape, requires_grad) and that the fixed code creates no
    CPU tensor and copies nothing.

    It is **unsafe** when:
    - the factory is random (`rand`, `randn`, `randint`, `randperm`): the device's own generator
      draws other numbers for the same seed;
    - it is `linspace`, `logspace` or `arange` with several arguments, or `full` with a dtype from
      `.to()`: the device's kernels, or the other dtype, may round differently;
    - `.to()` also had `non_blocking=` or `copy=` (dropped: a new tensor on the device needs
      neither);
    - the factory has `requires_grad=True`: the moved tensor was a non-leaf whose gradient went to
      the CPU tensor; created on the device it is a leaf;
    - `.cuda(i)` becomes `device=i`.

    There is no fix when `.to()` has `memory_format=`, when both the factory and `.to()` give a
    dtype, or when a comment sits between the factory and the move.

    TDL002's fix for an unguarded `torch.zeros(3).cuda()` writes
    `torch.zeros(3, device=device)` (a device chosen at runtime) wherever the fix above would be
    safe, and `.to(device)` otherwise.

    ## Known limits
    - A tensor created in one statement and moved in another is reported only where the move
      is the one use of a name bound once to the factory's result, under the same tests (`tmp
      = torch.zeros(n)` then `h = tmp.to(device)`, issue 28: the finding is then on the factory,
      and the fix writes `tmp = torch.zeros(n, device=device)` and `h = tmp`); a name read
      elsewhere too, bound twice (`h = torch.zeros(n)` ... `h = h.to(device)`), a module's
      name, or a move under a test the factory is not under (`.cuda()` behind
      `is_available()`) is left alone: there the fix could change what other code sees.
    - A device held in a variable that is not named like one (`.to(dev)`, `.to(rank)`) is not
      recognised: `.to(x)` may be another tensor.
    - A variable named like a device that holds the CPU at runtime makes `.to()` a no-op; the
      finding then costs nothing to fix but saves nothing either.
    """

    # The kinds of finding (their messages, as data; the report fills the fields): what the
    # move does besides moving (nothing; a dtype the factory gets; a cast after its own dtype).
    _CREATED = ("`{callee}(...)` creates the tensor on the CPU and `.{method}({move})` then copies "
                "it to {where}: create it there, `{callee}(..., device={device}")
    CREATE_THEN_MOVE = Message(_CREATED + ")`")
    CREATE_THEN_MOVE_WITH_DTYPE = Message(_CREATED + ", dtype={dtype})`")
    CREATE_THEN_MOVE_AND_CAST = Message(_CREATED + ").to({dtype})`")
    # issue 28: the factory's result bound to a name whose only use is the move
    _STORED = ("`{callee}(...)` creates the tensor on the CPU and its only use, `{name}.{method}"
               "({move})`, copies it to {where}: create it there, `{name} = {callee}(..., "
               "device={device}")
    STORED_THEN_MOVED = Message(_STORED + ")`, and use `{name}`")
    STORED_WITH_DTYPE = Message(_STORED + ", dtype={dtype})`, and use `{name}`")
    STORED_THEN_CAST = Message(_STORED + ")`, and use `{name}.to({dtype})`")

    code = "TDL009"
    name = "create-then-move"
    summary = "A tensor created on the CPU and copied to a device at once (create it there)"
    default_enabled = False
    fixable = True
    facts = frozenset(("kinds", "placement", "devices"))
    # ``.to(`` or ``.cuda(`` right after a closing parenthesis (the factory call's, or the
    # parentheses around it) or a name (one bound to a factory's result), and a torch factory
    # (reached through a name of torch).
    required_text = (rf"[\w)]{TOKEN_GAP}{method_call_text('to', 'cuda')}", r"\btorch\b",
                     # a factory it could be made by (also where imported under another name)
                     r"\b(?:" + "|".join(sorted(api.GENERATING_FACTORIES)) + r")\b")
    required_calls = tuple(sorted(api.ACCELERATOR_MOVE_METHODS))
    could_report_in = staticmethod(created_then_moved_in)  # (in prefilter: no LibCST there)
    valid = (
        "import torch\n\n\ndef f(device):\n    return torch.zeros(3, device=device).to(device)\n",
        "import torch\nx = torch.zeros(3).to(torch.float16)\n",
        "import torch\n\n\ndef f(ref):\n    return torch.zeros(3).to(ref)\n",
        # (a pinned staging buffer, ``.pin_memory().to(...)``, and host data,
        # ``torch.tensor(data).to(device)``, never reach the rule: see the negative fixtures)
        "import torch\n\n\ndef f(n, device):\n"
        "    return torch.zeros(n, pin_memory=True).to(device, non_blocking=True)\n",
        "import torch\nx = torch.zeros(3).to('cpu')\n",
    )
    invalid = (
        ("import torch\n\n\ndef f(device):\n    return torch.zeros(3, 4).to(device)\n", ((5, 30),)),
        ("import torch\nx = torch.arange(8).cuda()\n", ((2, 21),)),
    )

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        self.analysis = analysis
        sites = analysis.collected.calls_by_name
        for site in [*sites.get("to", ()), *sites.get("cuda", ())]:
            violation = self._check_site(site)
            if violation is not None:
                yield violation

    def _check_site(self, site: CallSite) -> Optional[Violation]:
        move, scope = site.call, site.ctx.scope
        func = move.func
        if not isinstance(func, cst.Attribute):
            return None
        factory, stored = func.value, None
        if isinstance(factory, cst.Name):
            stored, factory = factory, self._stored_factory(factory, site)
        if not isinstance(factory, cst.Call):
            return None
        tail = factories.factory_name(factory, self.analysis.qualname(factory.func, scope))
        if tail is None or any(a.star for a in move.args):
            return None
        moved, _ = self.analysis.placement.device_of_move(move, scope)
        if not moved:
            return None
        parsed = self._arguments(move, scope)
        if parsed is None:
            return None
        device, dtype, others = parsed
        method = func.attr.value
        where = "the GPU" if method == "cuda" else "the device"
        shown_device = '"cuda"' if device is None else source_of(device)
        callee = source_of(factory.func)
        shown_move = ", ".join((f"{a.keyword.value}=" if a.keyword is not None else "")
                               + source_of(a.value, 30) for a in move.args)
        has_dtype = keyword_value(factory, "dtype") is not None
        if stored is None:
            kind = self.CREATE_THEN_MOVE if dtype is None else \
                self.CREATE_THEN_MOVE_AND_CAST if has_dtype else self.CREATE_THEN_MOVE_WITH_DTYPE
        else:
            kind = self.STORED_THEN_MOVED if dtype is None else \
                self.STORED_THEN_CAST if has_dtype else self.STORED_WITH_DTYPE
        # (a factory's own dtype first, int64 for exact ranges, then the conversion)
        message = kind(callee=callee, method=method, move=shown_move, where=where,
                       device=shown_device, dtype=source_of(dtype, 30) if dtype is not None else None,
                       name=stored.value if stored is not None else None)
        plan = None
        if "memory_format" not in others and not (dtype is not None and has_dtype) \
                and others <= _DROPPABLE:
            safe = not others and factories.same_tensor(tail, factory, dtype is not None) \
                and not (method == "cuda" and device is not None)
            plan = CreateOnDevice(factory, move, device, dtype, safe, stored)
        return Violation(func.attr if stored is None else factory, message, plan)

    def _stored_factory(self, name: cst.Name, site: CallSite) -> Optional[cst.Call]:
        """The call ``name`` holds when the move is the only use of a local name bound once,
        before the move and under the same tests, to a call's result (``tmp = torch.zeros(3)`` then ``x =
        tmp.to(device)``, issue 28): the same waste as the chained form, and the same fix is
        safe, for nothing else sees the CPU tensor. None otherwise."""
        scope = site.ctx.scope
        if site.statement is not None or scope.resolve(name.value) is not scope:
            return None  # (``tmp.cuda()`` as a statement moves nothing: TDL001's)
        bindings = scope.bindings.get(name.value, ())
        if len(bindings) != 1 or bindings[0].how != ASSIGN or bindings[0].path \
                or not isinstance(bindings[0].value, cst.Call) or bindings[0].order > site.order \
                or bindings[0].ctx.conditions is not site.ctx.conditions:
            return None  # (a move under a test the factory is not under: ``device=`` would
            # create on the device where the move never ran)
        code = scope.func.node if scope.func is not None else self.analysis.module
        uses, fields = 0, set()  # (``torch.zeros``'s ``zeros``, ``dtype=``: no use of a name)
        for node in walk_code(code, into_functions=True):
            if isinstance(node, cst.Attribute):
                fields.add(id(node.attr))
            elif isinstance(node, cst.Arg) and node.keyword is not None:
                fields.add(id(node.keyword))
            elif isinstance(node, cst.Name) and node.value == name.value and id(node) not in fields:
                uses += 1
        if uses != 2:  # (its binding and the move)
            return None
        for device_call, ctx, body in self.analysis.collected.devices.default_device_blocks:
            if holds(body, bindings[0].value) and \
                    self.analysis.qualname(device_call.func, ctx.scope) == "torch.device":
                return None  # made in ``with torch.device("cpu"):``: where, chosen on purpose
        return bindings[0].value

    def _arguments(self, move: cst.Call, scope: Scope):
        """(device, dtype, names of the other arguments) of the move; device None for a bare
        ``.cuda()``. None when the device is not provably one."""
        positional = [a.value for a in move.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in move.args if a.keyword is not None}
        others = set(keywords) - api.MOVE_KEYWORDS
        if move.func.attr.value == "cuda":
            device = keywords.get("device", positional[0] if positional else None)
            if len(positional) > 1:
                others.add("non_blocking")
            if device is not None and not self._names_a_device(device, scope, "device" in keywords):
                return None
            return device, None, others
        if "device" in keywords:
            if positional:
                return None
            device = keywords["device"]
        elif positional:
            device = positional[0]
        else:
            return None
        dtype = keywords.get("dtype")
        if len(positional) > 1:
            if dtype is not None:
                return None
            dtype = positional[1]
        if len(positional) > 2:
            others.update(("non_blocking", "copy")[: len(positional) - 2])
        if not self._names_a_device(device, scope, "device" in keywords or dtype is not None):
            return None
        return device, dtype, others

    def _names_a_device(self, expr: cst.BaseExpression, scope: Scope, certain: bool) -> bool:
        """Whether ``expr`` is a device, not another tensor (``.to(other)``) nor a dtype held in
        a variable. ``certain``: the signature says so (``device=``, or a dtype follows)."""
        if isinstance(expr, cst.Name) and expr.value == "None":
            return False
        if certain:
            return True
        if string_value(expr) is not None or isinstance(
                expr, (cst.Integer, cst.FormattedString, cst.ConcatenatedString)):
            return True
        if isinstance(expr, cst.Call):
            return self.analysis.qualname(expr.func, scope) == "torch.device"
        if isinstance(expr, cst.Attribute):
            return expr.attr.value == "device" or is_device_name(expr.attr.value)
        if isinstance(expr, cst.Name):
            return is_device_name(expr.value) or self.analysis.kind_of(expr, scope) is K.DEVICE
        return False
