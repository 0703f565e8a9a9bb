"""torch factories that generate their values, and the edit that creates one on a device
instead of moving it there afterwards: what TDL009 reports and fixes, what TDL002's
``.cuda()`` fix writes for ``torch.zeros(3).cuda()``, and how TDL011's fix moves a factory
operand (``torch.randn(2, 3, device=device)``, not a ``.to(device)`` that TDL009 reports).

Only factories that compute their values belong here: with ``device=`` they allocate and fill
on the device, without a CPU tensor and without a host-to-device copy. ``torch.tensor`` /
``torch.as_tensor`` / ``torch.asarray`` copy Python or NumPy data that lives on the host
anyway; torch's own ``torch.tensor(data, device="cuda")`` builds a CPU tensor and moves it with
``.to`` (NOTE [torch.tensor, lift_fresh, and device movement] in
torch/csrc/utils/tensor_new.h), so ``device=`` saves nothing there. ``*_like`` factories and
``x.new_*`` create on their input's device, which the analysis does not know.
"""

from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from torchdevlint.analysis import api, keyword_value
from torchdevlint.fixes.context import FixContext
from torchdevlint.fixes.model import Edit

from torchdevlint.rules.prefilter import GENERATING  # noqa: F401 (the prefilter needs it too)

# Their values do not depend on the device that computes them: exact in any dtype (``full``
# only in its own dtype: ``torch.full(s, 0.1).to(torch.float64)`` rounds 0.1 to float32 first).
_EXACT = api.EXACT_FACTORIES
_EXACT_WITHOUT_DTYPE = _EXACT | {"full"}
RANDOM = api.RANDOM_FACTORIES
# Keywords that make the CPU creation deliberate (a CPU generator, a pinned staging buffer, an
# output tensor): no finding, and no rewrite.
_DELIBERATE = api.DELIBERATE_CPU_KEYWORDS


def factory_name(call: cst.BaseExpression, qualname: Optional[str]) -> Optional[str]:
    """``zeros`` for ``torch.zeros(3, 4)`` (``qualname``: what its callee resolves to), when
    the call creates on the CPU and could create on a device: no ``device=`` (nor a generator,
    ``pin_memory=``, ``out=``) and no ``*args`` / ``**kwargs`` that might hold one."""
    if not isinstance(call, cst.Call) or qualname is None:
        return None
    head, _, tail = qualname.rpartition(".")
    if head != "torch" or tail not in GENERATING:
        return None
    if any(a.star for a in call.args):
        return None
    if any(a.keyword is not None and a.keyword.value in _DELIBERATE for a in call.args):
        return None
    return tail


def same_tensor(tail: str, factory: cst.Call, with_dtype: bool) -> bool:
    """Whether ``factory`` created with ``device=`` (and the moved-to dtype, ``with_dtype``)
    gives the very tensor that creating it on the CPU and moving it gave: the same values,
    dtype, device, and a leaf where it was one (``requires_grad=True`` on the CPU tensor makes
    the moved one a non-leaf whose gradient goes to the CPU tensor)."""
    if keyword_value(factory, "requires_grad") is not None:
        return False
    if with_dtype:
        return tail in _EXACT and keyword_value(factory, "dtype") is None
    if tail in _EXACT_WITHOUT_DTYPE:
        return True
    # ``torch.arange(n)``: the integers 0..n-1, exact on every device and in every dtype
    # arange gives for one argument; more arguments may be floats, whose accumulation differs
    # between the CPU and CUDA kernels (as may linspace's and logspace's). Random factories
    # draw from another generator on another device.
    positional = [a for a in factory.args if a.keyword is None]
    return tail == "arange" and len(positional) == 1 and len(factory.args) == 1


def into_factory(ctx: FixContext, factory: cst.Call, move: cst.Call,
                 arguments: Tuple[Tuple[str, str], ...],
                 receiver: Optional[cst.BaseExpression] = None) -> Optional[Tuple[Edit, ...]]:
    """Edits that add ``name=text`` for each of ``arguments`` to ``factory``'s arguments and
    remove the ``.to(...)`` / ``.cuda()`` call ``move`` made on its result (or on
    ``receiver``, a name the result was bound to: ``tmp = torch.zeros(3)`` ...
    ``tmp.to(d)``); None where that would lose a comment."""
    factory_end = ctx.span(factory)[1]
    removed_from = factory_end if receiver is None else ctx.span(receiver)[1]
    move_end = ctx.span(move)[1]
    # ``(torch.zeros(3).to(d))``: the move's own parentheses stay
    move_end -= sum(len(ctx.text(paren)) for paren in move.rpar)
    removed = ctx.source[removed_from:move_end]
    if "#" in removed or not removed.lstrip().startswith("."):
        return None
    added = with_arguments(ctx, factory, arguments)
    if added is None:
        return None
    return (added, Edit(removed_from, move_end, ""))


def with_arguments(ctx: FixContext, factory: cst.Call,
                   arguments: Tuple[Tuple[str, str], ...]) -> Optional[Edit]:
    """The edit that adds ``name=text`` for each of ``arguments`` after ``factory``'s last
    argument; None where its closing parenthesis is not where it should be."""
    factory_end = ctx.span(factory)[1]
    closing = factory_end - sum(len(ctx.text(paren)) for paren in factory.rpar) - 1
    if ctx.source[closing] != ")":
        return None
    added = ", ".join(f"{name}={text}" for name, text in arguments)
    if factory.args:
        insert = ctx.span(factory.args[-1].value)[1]
        text = ", " + added
    else:
        insert, text = closing, added
    # exclusive: two rules fixing one move (TDL002 and TDL009 on ``torch.zeros(3).cuda()``)
    # must not both add a ``device=`` in one pass
    return Edit(insert, insert, text, exclusive=True)
