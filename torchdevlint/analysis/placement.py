"""Placement: what a name holds at a given call, judged by the definitions that reach it
(flow-sensitive within the function that owns the name, with loops wrapping around).
"""

from __future__ import annotations

import libcst as cst

from torchdevlint.analysis.kinds import KindInference, combine
from torchdevlint.analysis.model import CallSite


class Placement:
    """Asked through ``Analysis.reaching_bindings`` / ``Analysis.kind_at``."""

    def __init__(self, kinds: KindInference) -> None:
        self.kinds = kinds

    def reaching_bindings(self, name: str, site: CallSite):
        """The bindings of ``name`` that can reach ``site``: in the function (or module) that
        owns the name and makes the call, the last assignment before the call, and earlier
        ones while that one is conditional (an ``if`` the call is not under), plus later ones
        in a loop around the call (the next iteration). Elsewhere, every binding."""
        scope = site.ctx.scope
        owner = scope.resolve(name)
        if owner is None:
            return []
        bindings = owner.bindings[name]
        if owner is not scope:
            return bindings
        earlier = [b for b in bindings if b.order < site.order]
        if not earlier:
            return bindings
        reaching = []
        site_chain = _chain_links(site.ctx.conditions)
        for binding in reversed(earlier):
            reaching.append(binding)
            if binding.ctx.conditions is None or id(binding.ctx.conditions) in site_chain:
                break  # it runs whenever the call runs: nothing earlier reaches past it
        loop = site.loop
        if loop is not None:
            reaching += [b for b in bindings if site.order < b.order < loop.end]
        return reaching

    def kind_at(self, expr: cst.BaseExpression, site: CallSite):
        """The kind of ``expr`` where ``site`` is: a name is judged by the definitions that
        reach the call, not by every assignment in its function."""
        if isinstance(expr, cst.Name):
            reaching = self.reaching_bindings(expr.value, site)
            if reaching:
                return combine(self.kinds.binding_kind(b) for b in reaching)
        return self.kinds.kind_of(expr, site.ctx.scope)

def _chain_links(conditions) -> set:
    """ids of every link of a condition chain (a context's tests, innermost first)."""
    links = set()
    while conditions is not None:
        links.add(id(conditions))
        conditions = conditions[1]
    return links
