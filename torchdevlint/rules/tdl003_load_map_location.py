"""TDL003: torch.load (and friends) without map_location."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchdevlint.analysis import Analysis
from torchdevlint.analysis import torch_api as api
from torchdevlint.rules.base import Rule, Violation

_LOAD_NAMES = ("load", "load_state_dict_from_url", "load_url")


class LoadWithoutMapLocation(Rule):
    code = "TDL003"
    name = "load-without-map-location"
    summary = "torch.load() without map_location fails on a CPU-only machine for GPU checkpoints"
    # The loader is named in the file (torch.load, `from torch.hub import load_url as f`) and
    # qualified names come from an import of torch.
    required_text = (r"\bload(?:_url|_state_dict_from_url)?\b", r"\btorch\b")

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        for site in analysis.call_sites(_LOAD_NAMES, api.MAP_LOCATION_FUNCTIONS):
            call = site.call
            qualified = analysis.qualname(call.func, site.ctx.scope)
            if qualified not in api.MAP_LOCATION_FUNCTIONS:
                continue
            if any(arg.star for arg in call.args):
                continue  # *args / **kwargs may carry map_location: unknown
            if any(arg.keyword is not None and arg.keyword.value == "map_location"
                   for arg in call.args):
                continue
            positional = [a for a in call.args if a.keyword is None]
            if len(positional) > api.MAP_LOCATION_FUNCTIONS[qualified]:
                continue  # map_location passed positionally
            if positional and self._saved_in_same_function(analysis, site, positional[0].value):
                continue
            short = qualified.replace("torch.serialization.", "torch.")
            yield Violation(
                call,
                f"`{short}()` without `map_location`: a checkpoint saved on a GPU fails to load on "
                f"a machine without CUDA (RuntimeError: Attempting to deserialize object on a CUDA "
                f"device); pass `map_location=` (for example \"cpu\" or the target device)",
            )

    @staticmethod
    def _saved_in_same_function(analysis: Analysis, load_site, source: cst.BaseExpression) -> bool:
        """A round trip: ``torch.save(obj, f)`` then ``torch.load(f)`` in the same function
        loads what this very process saved, on the devices it has."""
        for save_site in analysis.collected.calls_by_name.get("save", ()):
            if save_site.ctx.func is not load_site.ctx.func:
                continue
            if analysis.qualname(save_site.call.func, save_site.ctx.scope) not in api.SAVE_FUNCTIONS:
                continue
            args = save_site.call.args
            target = None
            for arg in args:
                if arg.keyword is not None and arg.keyword.value == "f":
                    target = arg.value
            positional = [a.value for a in args if a.keyword is None and not a.star]
            if target is None and len(positional) >= 2:
                target = positional[1]
            if target is not None and target.deep_equals(source):
                return True
        return False
