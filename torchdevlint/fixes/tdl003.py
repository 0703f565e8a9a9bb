"""TDL003 fix: pass ``map_location=``.

The location is a device variable in scope (``device``, ``*_device``; never one that may be
None) or else ``"cpu"``. Safe when the loaded object goes straight into ``load_state_dict()``,
which copies every tensor onto the device of the module's (or optimizer's) own parameters;
unsafe anywhere else, where the loaded tensors would now live on another device than the one
they were saved from.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchdevlint.analysis.model import CallSite
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext
from torchdevlint.fixes.model import Edit, Fix


def build(finding: Finding, ctx: FixContext) -> Optional[Fix]:
    site = finding.fix
    if not isinstance(site, CallSite):
        return None
    call = site.call
    if not call.args or any(arg.star for arg in call.args) or any(
            arg.keyword is not None and arg.keyword.value == "map_location" for arg in call.args):
        return None
    start, _ = ctx.span(call)
    location = ctx.device_variable(site.ctx.scope, start) or '"cpu"'
    end = ctx.span(call.args[-1].value)[1]
    return Fix(finding.code, _feeds_load_state_dict(call, ctx),
               f"load with `map_location={location}`",
               (Edit(end, end, f", map_location={location}"),))


def _feeds_load_state_dict(call: cst.Call, ctx: FixContext) -> bool:
    for site in ctx.analysis.collected.calls_by_name.get("load_state_dict", ()):
        args = site.call.args
        value = None
        if args and args[0].keyword is None and not args[0].star:
            value = args[0].value
        for arg in args:
            if arg.keyword is not None and arg.keyword.value == "state_dict":
                value = arg.value
        while isinstance(value, cst.Subscript):  # torch.load(f)["model"]
            value = value.value
        if value is call:
            return True
    return False
