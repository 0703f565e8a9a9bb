"""TDL003: torch.load (and friends) without map_location."""

from __future__ import annotations

from typing import Iterator


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
            if self._saves_in_same_function(analysis, site):
                continue
            short = qualified.replace("torch.serialization.", "torch.")
            yield Violation(
                call,
                f"`{short}()` without `map_location`: a checkpoint saved on a GPU fails to load on "
                f"a machine without CUDA (RuntimeError: Attempting to deserialize object on a CUDA "
                f"device); pass `map_location=` (for example \"cpu\" or the target device)",
                fix=site,  # --fix adds map_location= (torchdevlint.fixes.tdl003)
            )

    @staticmethod
    def _saves_in_same_function(analysis: Analysis, load_site) -> bool:
        """A round trip: the function that loads also ``torch.save``s (a test, a serialization
        helper), so it reads what this very process wrote, on the devices it has."""
        for save_site in analysis.call_sites(("save",), api.SAVE_FUNCTIONS):
            if save_site.ctx.func is load_site.ctx.func and \
                    analysis.qualname(save_site.call.func, save_site.ctx.scope) in api.SAVE_FUNCTIONS:
                return True
        return False
