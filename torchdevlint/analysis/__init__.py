"""The shared analysis every rule asks: what a value is, what a name refers to, what guards it."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchdevlint.analysis import torch_api as api
from torchdevlint.analysis.builder import Builder, Collected, iter_children
from torchdevlint.analysis.kinds import KindInference
from torchdevlint.analysis.model import (
    ASSIGN, EXPECTS_FAILURE, HANDLES_FAILURE, Ctx, Scope, string_value,
)


class Analysis:
    """One parsed file, traversed once; rules query it."""

    def __init__(self, module: cst.Module, collected: Optional[Collected] = None) -> None:
        self.module = module
        self.collected: Collected = collected if collected is not None else Builder().build(module)
        self.kinds = KindInference()
        self._guard_memo: dict = {}
        # (id(condition chain), id(scope)) -> (verdict, chain): chains share their tails, so
        # each link is judged once instead of once per node below it (quadratic in long
        # blocks of asserts and early exits). The chain is kept so that its id stays unique.
        self._chain_memo: dict = {}

    @classmethod
    def of_fragment(cls, module: cst.Module, node: cst.CSTNode, ctx: Ctx,
                    outer: "Analysis") -> "Analysis":
        """The analysis of ``node`` (an expression of ``module``, a fragment parsed on its own)
        as if it stood where ``ctx`` is in ``outer``'s module: names resolve in that module."""
        builder = Builder()
        builder.out.module_scope = outer.collected.module_scope
        builder.out.imported_as = outer.collected.imported_as
        builder.walk(node, ctx)
        return cls(module, builder.out)

    def release(self) -> None:
        """Break the analysis's reference cycles (scopes and their bindings, functions and
        their scopes, classes and their methods), so that dropping the last reference frees
        it and the tree it points into at once, without waiting for (and paying for) the
        cyclic garbage collector. The analysis cannot be used afterwards."""
        collected = self.collected
        for scope in collected.scopes:
            scope.bindings = {}
            scope.func = None
        for info in collected.functions:
            info.scope = None
            info.returns = []
        for info in collected.classes:
            info.scope = None
            info.methods = {}
            info.attributes = {}

    # Shorthands the rules use.
    def qualname(self, expr: cst.BaseExpression, scope: Scope) -> Optional[str]:
        return self.kinds.qualname(expr, scope)

    def kind_of(self, expr: cst.BaseExpression, scope: Scope):
        return self.kinds.kind_of(expr, scope)

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

    # -- CUDA availability guards (TDL002) ----------------------------------------------

    def is_guarded(self, ctx: Ctx) -> bool:
        """Whether code in ``ctx`` only runs when CUDA was checked for or asked for."""
        scope = ctx.scope
        unknown = []  # links whose verdict is the one found further down the chain
        link = ctx.conditions
        verdict = False
        while link is not None:
            known = self._chain_memo.get((id(link), id(scope)))
            if known is not None:
                verdict = known[0]
                break
            condition = link[0]
            if isinstance(condition, str):
                guarded = condition in (EXPECTS_FAILURE, HANDLES_FAILURE) or _mentions_cuda(condition)
                # (def test_cuda_..., class CUDATests, def to_gpu, assertRaises, try/except)
            else:
                guarded = self.is_guard_test(condition, scope)
            if guarded:
                verdict = True
                unknown.append(link)
                break
            unknown.append(link)
            link = link[1]
        for link in unknown:
            self._chain_memo[(id(link), id(scope))] = (verdict, link)
        return verdict

    def is_guard_test(self, expr: cst.CSTNode, scope: Scope, depth: int = 0) -> bool:
        """A test that involves CUDA availability or a choice of device.

        ``torch.cuda.is_available()``, ``x.is_cuda``, ``args.cuda``, ``use_gpu``,
        ``device.type == "cuda"``, ``"cuda" in str(device)``, or a variable computed from
        one of these (``use_cuda = not args.no_cuda and torch.cuda.is_available()``).
        """
        key = id(expr)
        if key in self._guard_memo:
            return self._guard_memo[key]
        self._guard_memo[key] = False
        verdict = self._guard_test(expr, scope, depth)
        self._guard_memo[key] = verdict
        return verdict

    def _guard_test(self, expr: cst.CSTNode, scope: Scope, depth: int) -> bool:
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Name):
                if _mentions_cuda(node.value):
                    return True
                if depth < 4 and self._name_holds_guard(node.value, scope, depth):
                    return True
            elif isinstance(node, cst.Attribute):
                if _mentions_cuda(node.attr.value):
                    return True
            elif isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
                # A test that mentions a device by name checks which device is in use:
                # device.type == "cuda", device.startswith("cuda"), "cuda" in str(device),
                # provider in ("CUDAExecutionProvider",), torch.device("cuda") in devices.
                value = string_value(node)
                if value is not None and (_mentions_cuda(value) or value in ("cpu", "mps", "xpu")):
                    return True
                continue
            if isinstance(node, (cst.Lambda, cst.FunctionDef)):
                continue
            stack.extend(iter_children(node))
        return False

    def _name_holds_guard(self, name: str, scope: Scope, depth: int) -> bool:
        for binding in scope.lookup(name):
            if binding.how == ASSIGN and isinstance(binding.value, cst.BaseExpression):
                if self.is_guard_test(binding.value, binding.ctx.scope, depth + 1):
                    return True
        return False

    # -- devices ------------------------------------------------------------------------

    def is_cpu_device(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> bool:
        """``"cpu"``, ``torch.device("cpu")`` or a name bound only to such a value."""
        value = string_value(expr)
        if value is not None:
            return value == "cpu"
        if isinstance(expr, cst.Call) and expr.args and self.qualname(expr.func, scope) == "torch.device":
            return self.is_cpu_device(expr.args[0].value, scope, depth + 1)
        if isinstance(expr, cst.Name) and depth < 4:
            bindings = scope.lookup(expr.value)
            return bool(bindings) and all(
                b.how == ASSIGN and not b.path and self.is_cpu_device(b.value, b.ctx.scope, depth + 1)
                for b in bindings)
        return False

    def is_dtype(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        qualified = self.qualname(expr, scope)
        return qualified is not None and qualified.startswith("torch.") and \
            qualified.rpartition(".")[2] in api.DTYPE_NAMES


_CUDA_WORDS = ("cuda", "gpu")


def _mentions_cuda(identifier: str) -> bool:
    lowered = identifier.lower()
    return any(word in lowered for word in _CUDA_WORDS)
