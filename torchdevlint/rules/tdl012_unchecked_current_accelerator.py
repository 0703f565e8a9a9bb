"""TDL012: ``torch.accelerator.current_accelerator()`` dereferenced with no check that there is
an accelerator.

``current_accelerator()`` returns None where torch has no accelerator (a CPU-only build; with
``check_available=True`` also where no device is present), so ``.type`` (any attribute or
method of its value, directly or through a name bound to it) raises ``AttributeError:
'NoneType' object has no attribute 'type'`` on every machine without one.

Silent where the analysis shows the dereference only runs with an accelerator
(``Analysis.needs_no_accelerator_check``): under ``torch.accelerator.is_available()`` or any
other availability check (an ``if``, a conditional expression, ``and``, an early exit, an
``assert``, a skip decorator, a function only called under one), under a test of the value
itself (``acc is not None``, ``if acc:``, the walrus), inside a small ``try`` that catches
``AttributeError``, under ``pytest.raises``/``assertRaises``, and in files that stop without
CUDA. ``(current_accelerator() or torch.device("cpu")).type`` and ``getattr(..., "type",
"cpu")`` dereference no None.

Fix: the dereferenced value ``V`` becomes ``(V or torch.device("cpu"))``: safe, since it
changes nothing where ``V`` is a device and gives the CPU's device where it raised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional, Tuple

import libcst as cst

from torchdevlint.analysis import ASSIGN, Analysis, Ctx, Scope, api
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext, file_quote
from torchdevlint.fixes.model import Edit, Fix, FixPlan
from torchdevlint.rules.base import Message, Rule, Violation, source_of
from torchdevlint.rules.prefilter import current_accelerator_read_in


@dataclass(frozen=True)
class NoneDereference:
    """What a finding says: the dereference, the call whose None it dereferences, the name
    that holds it (if any), and what to write instead."""

    dereference: str  # ``torch.accelerator.current_accelerator().type``
    attribute: str  # ``type``
    call: str  # ``torch.accelerator.current_accelerator()``
    name: Optional[str]  # ``acc`` in ``acc.type``
    checks_device: bool  # ``check_available=True``
    instead: str  # ``(torch.accelerator.current_accelerator() or torch.device("cpu")).type``

    def fields(self) -> dict:
        """The fields of the rule's message."""
        holder = f"`{self.call}`" if self.name is None else \
            f"`{self.name}`, which holds `{self.call}`,"
        where = "no accelerator is available" if self.checks_device \
            else "torch has no accelerator (a CPU-only build)"
        return dict(dereference=self.dereference, holder=holder, where=where,
                    attribute=self.attribute, instead=self.instead)


def fallback(value: str, torch: str, quote: str) -> str:
    """``value``, or the CPU's device where it is None (what the fix writes)."""
    return f"({value} or {torch}.device({quote}cpu{quote}))"


@dataclass
class CpuFallback(FixPlan):
    """The dereferenced value (a ``current_accelerator()`` call, a walrus of one, or a name
    bound to one) and the scope it is read in."""

    value: cst.BaseExpression
    scope: Scope

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        start, end = ctx.span(self.value)
        torch = ctx.torch_reference(self.scope, start)
        if torch is None:
            return None
        alias, needs_import = torch
        edits = (Edit(start, end, fallback(ctx.text(self.value), alias, file_quote(ctx.module))),)
        if needs_import:
            edits = (ctx.import_torch_edit(),) + edits
        return Fix(finding.code, True, "fall back to the CPU where there is no accelerator", edits)


class UncheckedCurrentAccelerator(Rule):
    """
    ## What it does
    Reports a dereference of `torch.accelerator.current_accelerator()` (torch 2.6+) that no check
    for an accelerator protects: an attribute or method of its value, taken right there
    (`torch.accelerator.current_accelerator().type`, also through a walrus,
    `(acc := torch.accelerator.current_accelerator()).type`) or through a name every binding of
    which is that call (`acc = torch.accelerator.current_accelerator()` ... `acc.type`). The
    message names the dereference, the call (and the name that holds it) and says that no
    `torch.accelerator.is_available()` check covers it.

    Most often it is the idiom of example folders of popular libraries:

    ```python
    device = torch.accelerator.current_accelerator().type if hasattr(torch, "accelerator") else "cuda"
    ```

    `hasattr(torch, "accelerator")` asks whether *torch* has the accelerator API (2.6 and later),
    not whether the *machine* has an accelerator.

    Code is protected, and not reported, where it only runs with an accelerator or where the
    None is handled:

    - under a check that an accelerator is there, in an `if` block, a conditional expression, the
      right side of `and`, after an early exit or an `assert`, in a function or class whose
      decorator makes the check (`@pytest.mark.skipif(not torch.accelerator.is_available(), ...)`),
      or in a private function (or any function of a script) only called under one. The checks:
      `torch.accelerator.is_available()`, `torch.accelerator.device_count()`, the MPS and XPU
      checks, a name computed from one (`use_accelerator = hasattr(torch, "accelerator") and
      torch.accelerator.is_available()`), and every CUDA guard that TDL002 accepts (CUDA is the
      accelerator of a CUDA build, so `torch.cuda.is_available()` proves there is one);
    - under a test of the value itself: `if acc is not None:`, `if acc:`, `acc.type if acc else
      "cpu"`, `acc and acc.index`, `if (acc := torch.accelerator.current_accelerator()) is not
      None:`, after `if acc is None: return ...`;
    - where a name is rebound before the read (`acc = acc or torch.device("cpu")`): then not every
      binding is the call;
    - in a pytest fixture (not `autouse`) that only guarded tests of the file request
      (`@requires_gpu`, a skip without CUDA or an accelerator), or that no test of the file
      requests (a `conftest.py` fixture: the tests that request it are in files this one cannot
      show);
    - inside a small `try` whose handler catches `AttributeError` (or any exception TDL002's
      `try` guard accepts), and under `pytest.raises` / `assertRaises` (a test that expects the
      failure);
    - in a file that stops without CUDA (TDL002's "GPU-only by design": a top-level `assert
      torch.cuda.is_available()`, an NCCL process group, a Triton import).

    `(torch.accelerator.current_accelerator() or torch.device("cpu")).type` and
    `getattr(torch.accelerator.current_accelerator(), "type", "cpu")` dereference no None and are
    never reported. `current_accelerator()` of an object that is not `torch.accelerator`
    (`state.current_accelerator()`) is not this call.

    ## Why is this bad
    `current_accelerator()` returns None where torch has no accelerator: on every CPU-only build
    of PyTorch (laptops, CPU-only CI runners, the `+cpu` wheels), and with
    `check_available=True` also where the build has one but no device is present. The
    dereference then raises, on every such machine:

    ```
    AttributeError: 'NoneType' object has no attribute 'type'
    ```

    The runtime suite runs each flagged fixture on a CPU-only torch and sees that error at the
    flagged line, and runs its fixed version to the end.

    ## Example
    ```python
    device = torch.accelerator.current_accelerator().type if hasattr(torch, "accelerator") else "cuda"

    accelerator = torch.accelerator.current_accelerator()
    with torch.autocast(device_type=accelerator.type):
        ...
    ```

    ## Use instead
    ```python
    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

    accelerator = torch.accelerator.current_accelerator() or torch.device("cpu")
    with torch.autocast(device_type=accelerator.type):
        ...
    ```

    ## Fix safety
    `--fix` replaces the dereferenced value `V` with `(V or torch.device("cpu"))`:

    ```python
    device = (torch.accelerator.current_accelerator() or torch.device("cpu")).type
    with torch.autocast(device_type=(accelerator or torch.device("cpu")).type):
    ```

    **Safe**: where `V` is a device (every machine where the code ran) it is unchanged, and the
    CPU's device takes the place of the None that raised. It is the smallest change that keeps
    that promise for any attribute (`.type` is `"cpu"`, `.index` None, as for the CPU's device)
    and for a name as well as a call. PyTorch's tutorial idiom, `V.type if
    torch.accelerator.is_available() else "cpu"`, is not what the fix writes: with the default
    `check_available=False` it would also change the value on a build with an accelerator but no
    device (where `V` names the accelerator, and code that only reads the type, such as
    `torch.autocast(device_type=...)`, ran). The quote is the file's (the one most of its
    one-line strings use); `torch` is the file's name for it (`import torch` is added where the
    file has none).

    The `"cuda"` fallback of `... if hasattr(torch, "accelerator") else "cuda"` is TDL002's
    (see its page): it runs only on a torch older than 2.6.

    ## Known limits
    Not reported, though they may fail: a value kept in an attribute (`self.device =
    torch.accelerator.current_accelerator()` ... `self.device.type`), in a tuple, or read in a
    function defined before the module-level assignment of the name; `getattr(acc, "type")`
    without a default; `torch.device(torch.accelerator.current_accelerator())`. Reported, though
    it may never run without an accelerator: a public helper whose callers are in other files
    (a `conftest.py` assertion helper that only GPU tests call); at module level of a test file
    the dereference runs when pytest collects the file, and is reported. A check is read
    without its polarity, as TDL002 reads it: a dereference in the `else` of `if
    torch.cuda.is_available():` (or of `if acc is not None:`) counts as guarded, although it runs
    exactly where the value is None.
    """

    # The kind of finding (its message, as data; the report fills the fields).
    UNCHECKED = Message(
        "`{dereference}` dereferences {holder} without a `torch.accelerator.is_available()` "
        "check: it is None where {where}, so this raises " + api.NONE_DEREFERENCE_ERROR + ": "
        "'NoneType' object has no attribute '{attribute}'; use `{instead}`")

    code = "TDL012"
    name = "unchecked-current-accelerator"
    summary = "torch.accelerator.current_accelerator() dereferenced without an is_available() check"
    fixable = True
    facts = frozenset(("kinds", "guards"))
    required_text = r"\bcurrent_accelerator\b"
    required_calls = ("current_accelerator",)
    could_report_in = staticmethod(current_accelerator_read_in)  # (in prefilter)
    valid = (
        # PyTorch's tutorials: the accelerator only where there is one
        "import torch\ndevice = torch.accelerator.current_accelerator().type "
        "if torch.accelerator.is_available() else 'cpu'\n",
        "import torch\nif torch.accelerator.is_available():\n"
        "    name = torch.accelerator.current_accelerator().type\n",
        "import torch\nacc = torch.accelerator.current_accelerator()\n"
        "if acc is not None:\n    print(acc.type)\n",
        "import torch\nif (acc := torch.accelerator.current_accelerator(check_available=True)):\n"
        "    print(acc.type)\n",
        "import torch\ndevice = (torch.accelerator.current_accelerator() or torch.device('cpu')).type\n",
        "import torch\ndevice = getattr(torch.accelerator.current_accelerator(), 'type', 'cpu')\n",
        "import torch\ntry:\n    device = torch.accelerator.current_accelerator().type\n"
        "except AttributeError:\n    device = 'cpu'\n",
        "import pytest\nimport torch\n\n\ndef test_no_accelerator():\n"
        "    with pytest.raises(AttributeError):\n"
        "        torch.accelerator.current_accelerator().type\n",
        # CUDA's check proves an accelerator: CUDA is a CUDA build's accelerator
        "import torch\ndevice = torch.accelerator.current_accelerator().type "
        "if torch.cuda.is_available() else 'cpu'\n",
        # a helper only called under the check
        "import torch\n\n\ndef _name():\n    return torch.accelerator.current_accelerator().type\n\n\n"
        "if __name__ == '__main__':\n    if torch.accelerator.is_available():\n        print(_name())\n",
        # rebound to a device before the dereference
        "import torch\nacc = torch.accelerator.current_accelerator()\n"
        "acc = acc or torch.device('cpu')\nprint(acc.type)\n",
        # another object's current_accelerator()
        "def run(state):\n    return state.current_accelerator().type\n",
    )
    invalid = (
        ("import torch\ndevice = torch.accelerator.current_accelerator().type\n", ((2, 50),)),
        # the hasattr test asks whether torch has the API, not whether there is an accelerator
        ('import torch\ndevice = torch.accelerator.current_accelerator().type '
         'if hasattr(torch, "accelerator") else "cpu"\n', ((2, 50),)),
        ("import torch\nacc = torch.accelerator.current_accelerator()\n"
         "with torch.autocast(device_type=acc.type):\n    pass\n", ((3, 37),)),
        ("from torch.accelerator import current_accelerator\n"
         "print((acc := current_accelerator(check_available=True)).type)\n", ((2, 58),)),
    )

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        if analysis.requires_cuda_throughout():
            return  # the file stops without CUDA: GPU-only by design, as it says itself
        quote = None
        for attribute, ctx in analysis.collected.devices.accelerator_reads:
            evidence = self._none_value(analysis, attribute.value, ctx.scope)
            if evidence is None:
                continue
            call, name, bound = evidence
            if any(analysis.needs_no_accelerator_check(each) for each in (ctx,) + bound):
                continue
            if quote is None:
                quote = file_quote(analysis.module)
            torch = analysis.torch_alias_at(ctx.scope)
            value = source_of(attribute.value, limit=80)
            found = NoneDereference(
                dereference=source_of(attribute, limit=80), attribute=attribute.attr.value,
                call=source_of(call, limit=80), name=name,
                checks_device=_checks_device(call),
                instead=f"{fallback(value, torch, quote)}.{attribute.attr.value}")
            yield Violation(attribute.attr, self.UNCHECKED(**found.fields()),
                            CpuFallback(attribute.value, ctx.scope))

    @staticmethod
    def _none_value(analysis: Analysis, value: cst.BaseExpression, scope: Scope
                    ) -> Optional[Tuple[cst.Call, Optional[str], Tuple[Ctx, ...]]]:
        """(the ``current_accelerator()`` call whose value ``value`` is, the name holding it,
        the contexts of that name's bindings), or None where ``value`` may be something else."""
        if isinstance(value, cst.NamedExpr):
            value = value.value
        if isinstance(value, cst.Call):
            if analysis.qualname(value.func, scope) == api.CURRENT_ACCELERATOR:
                return value, None, ()
            return None
        if not isinstance(value, cst.Name):
            return None
        owner = scope.resolve(value.value)
        bindings = owner.bindings.get(value.value, ()) if owner is not None else ()
        # every binding of the name is the call: a rebinding (``acc = acc or cpu``) may
        # replace the None before the read
        if not bindings or not all(
                b.how == ASSIGN and not b.path and isinstance(b.value, cst.Call)
                and analysis.qualname(b.value.func, b.ctx.scope) == api.CURRENT_ACCELERATOR
                for b in bindings):
            return None
        return bindings[0].value, value.value, tuple(b.ctx for b in bindings)


def _checks_device(call: cst.Call) -> bool:
    """``current_accelerator(check_available=True)``: None also where no device is present."""
    return any(arg.keyword is not None and arg.keyword.value == "check_available"
               and isinstance(arg.value, cst.Name) and arg.value.value == "True"
               for arg in call.args) or \
        any(arg.keyword is None and isinstance(arg.value, cst.Name) and arg.value.value == "True"
            for arg in call.args[:1])
