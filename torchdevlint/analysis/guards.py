"""Guards: what makes code that needs CUDA safe to run (an availability check, a skip or an
early exit without CUDA, a test that expects the failure, a function only called under such a
check), and whether a whole file stops without CUDA.

Which device a check proves matters: ``torch.accelerator.is_available()`` is true on Apple
MPS and Intel XPU too, and ``torch.backends.mps.is_available()`` on a Mac, which has no CUDA.
Neither makes a hard-coded ``"cuda"`` safe; they make the device they name safe
(``torch.accelerator.current_accelerator()``, ``"mps"``), so they are recognised where a device
is chosen from them (``accelerator_checks``, ``is_accelerator_choice``), never as CUDA guards.

The other way round, a dereference of ``torch.accelerator.current_accelerator()`` (None
without an accelerator) is safe under any check that an accelerator is there: CUDA's (CUDA is
the accelerator of a CUDA build), these, or a test of the value itself (``acc is not None``,
``if acc:``). ``is_guarded(ctx, accelerator=True)`` asks for that wider set (TDL012).
"""

from __future__ import annotations

import functools
from typing import Callable, Dict, List, Optional, Set

import libcst as cst

from torchdevlint import torch_api as api
from torchdevlint import torch_version as versions
from torchdevlint.analysis.builder import (
    Collected, exit_condition, has_main_entry, iter_children, walk_code,
)
from torchdevlint.analysis.kinds import KindInference
from torchdevlint.analysis.model import (
    ASSIGN, EXPECTS_FAILURE, IMPORT, HANDLES_FAILURE, HANDLES_NONE_DEREFERENCE, AfterExit, CallSite, Ctx, DefaultOf, OrElse, FunctionInfo, Scope, last_name,
    string_value,
)
from torchdevlint.analysis.references import References
from torchdevlint.analysis.testcode import fixture_decorator, is_test_module


class Guards:
    """Asked through ``Analysis.is_guarded`` and its neighbours; built on first use."""

    def __init__(self, module: cst.Module, collected: Collected, kinds: KindInference,
                 torch_version: versions.Version = versions.DEFAULT, project=None,
                 may_define=lambda qualified: True, mentions=lambda name: None,
                 references=None, project_of_calls=lambda: None,
                 test_module: Optional[Callable[[], bool]] = None) -> None:
        self.module = module
        # (``Analysis.is_test_module``, which knows the file's path)
        self._test_module = test_module or (lambda: is_test_module(collected))
        self._mentions = mentions  # (``Analysis.mentions``: how often the text names a name)
        # (``Analysis.references``: where the module names each name, one walk per file; a
        # Guards made without it builds its own once)
        self._module_references = references or functools.cache(lambda: References(module))
        # What gives the project's other files (``project_index.ProjectView``, or None), asked
        # only when an imported name is tested: a flag imported from a module of the project
        # that tests CUDA availability is a guard here too. (Asked up front, it built the
        # index of every directory whose files reach the analysis, most of them for nothing.)
        self._project = project
        # The project's view for its calls of this file's functions, only in a project (a
        # root with a marker: ``Analysis._project_of_calls``). Asked of torch's installed
        # sources for every public default, it built the index of their directories: +17%
        # of the time on torch's nn and _dynamo (farm-bench, 98459ab against 4f4c489).
        self._project_of_calls = project_of_calls
        self._may_define = may_define  # (project_index.may_define for this file)
        self.collected = collected
        self.kinds = kinds
        # The torch the project targets: from 2.6 on, ``hasattr(torch, "accelerator")`` holds.
        self.torch_version = torch_version
        self._guard_memo: dict = {}
        # (id(condition chain), id(scope)) -> (verdict, chain): chains share their tails, so
        # each link is judged once instead of once per node below it (quadratic in long
        # blocks of asserts and early exits). The chain is kept so that its id stays unique.
        self._chain_memo: dict = {}
        self._requires_cuda: Optional[bool] = None
        self._cuda_tied: Optional[Set[str]] = None  # (``_tied_to_cuda``)
        self._spawned: Optional[set] = None
        self._program: Optional[bool] = None  # (``_runs_its_functions``)

    @property
    def project(self):
        if callable(self._project):
            self._project = self._project()
        return self._project

    def qualname(self, expr: cst.BaseExpression, scope: Scope) -> Optional[str]:
        return self.kinds.qualname(expr, scope)

    def is_guarded(self, ctx: Ctx, strict: bool = False, accelerator: bool = False) -> bool:
        """Whether code in ``ctx`` only runs when CUDA was checked for or asked for.

        ``strict``: an early exit counts only where going on proves the guard test (``if not
        torch.cuda.is_available(): return``), not where the exit's test merely mentions CUDA
        (``if args.cuda and not available: raise`` lets a CPU run go on). Used when a guard
        is carried from the callers of a function into its body.

        ``accelerator``: whether the code only runs where *an* accelerator is there, which
        these CUDA guards prove and so do the checks of ``is_accelerator_test`` and a small
        ``try`` that catches ``AttributeError`` (see the module's docstring)."""
        scope = ctx.scope
        unknown = []  # links whose verdict is the one found further down the chain
        link = ctx.conditions
        verdict = False
        while link is not None:
            known = self._chain_memo.get((id(link), id(scope), strict, accelerator))
            if known is not None:
                verdict = known[0]
                break
            condition = link[0]
            if isinstance(condition, str):
                guarded = condition in (EXPECTS_FAILURE, HANDLES_FAILURE) or _mentions_cuda(condition) \
                    or condition in self.spawned_per_gpu() \
                    or self.only_called_guarded(condition, accelerator) \
                    or (accelerator and (condition == HANDLES_NONE_DEREFERENCE or
                                         self.fixture_only_requested_guarded(condition)))
                # (def test_cuda_..., class CUDATests, def to_gpu, assertRaises, try/except, a
                # worker started once per GPU, a helper only called under a guard, a pytest
                # fixture only GPU tests request)
            elif isinstance(condition, DefaultOf):
                guarded = self.default_always_overridden(condition.name, condition.func)
            elif isinstance(condition, AfterExit):
                test = condition.requirement if strict else condition.test
                guarded = test is not None and self._guards(test, scope, accelerator)
            elif isinstance(condition, OrElse):
                # (the ``else`` of ``if use_gpu:`` is the CPU path: a ``.cuda()`` there fails)
                guarded = self._guards(condition.test, scope, accelerator) and \
                    not self._asks_for_cuda(condition.test, scope)
            else:
                guarded = self._guards(condition, scope, accelerator) or \
                    self._tied_to_cuda(condition)
            if guarded:
                verdict = True
                unknown.append(link)
                break
            unknown.append(link)
            link = link[1]
        for link in unknown:
            self._chain_memo[(id(link), id(scope), strict, accelerator)] = (verdict, link)
        return verdict

    def _tied_to_cuda(self, test) -> bool:
        """Whether the file itself ties ``test`` to CUDA: somewhere an ``if`` with the same test
        stops the program unless CUDA is available (SamLynnEvans/Transformer's ``if
        opt.device == 0: assert torch.cuda.is_available()`` in main, then ``if opt.device ==
        0: model = model.cuda()`` in get_model). Only the test's own branch is guarded: the
        ``else`` of such a test proves nothing."""
        if not isinstance(test, cst.BaseExpression):
            return False
        if self._cuda_tied is None:
            self._cuda_tied = self._collect_cuda_tied_tests()
        return bool(self._cuda_tied) and _test_text(self.module, test) in self._cuda_tied

    def _collect_cuda_tied_tests(self) -> Set[str]:
        """The texts of the ``if`` tests whose block stops the program unless CUDA is there."""
        calls = self.collected.calls_by_name
        if not (calls.get("is_available") or calls.get("device_count")):
            return set()
        tied: Set[str] = set()
        bodies = [(self.module.body, self.collected.module_scope)] + [
            (info.node.body.body, info.scope) for info in self.collected.functions
            if isinstance(info.node.body, cst.IndentedBlock)]
        for statements, scope in bodies:
            for node in _if_statements(statements):
                if not isinstance(node.body, cst.IndentedBlock):
                    continue
                for statement in node.body.body:
                    requirement = _stopping_requirement(statement)
                    if requirement is not None and self._requires_availability(requirement, scope):
                        tied.add(_test_text(self.module, node.test))
                        break
        return tied

    def runs_only_with_cuda(self, ctx: Ctx) -> bool:
        """Whether code in ``ctx`` runs only where CUDA is there, or where the program asked
        for it (and so fails without it before reaching this code): in the branch of an
        ``if`` (or a conditional expression) whose test holds only then, after an early exit
        that proves such a test, or in a function this file starts once per GPU and never
        calls otherwise. Narrower than ``is_guarded``, which also takes the ``else`` of such
        a test, any test that names a device (``device == "cpu"``) or distributed training,
        and a ``try``: where CUDA's absence makes a difference to what the code *does*
        (TDL003: a GPU checkpoint loads where CUDA is), only the branch that has CUDA counts.

        The tests: ``torch.cuda.is_available()`` and ``device_count() > 0`` (also through a
        name, and in an ``and``), and a flag that asks for CUDA (``if use_cuda:``, ``if
        args.cuda:``; a user without CUDA must turn it off, as the program's own ``.cuda()``
        calls under it fail otherwise). Not ``if args.gpu is None`` or ``if not args.cuda``."""
        scope = ctx.scope
        link = ctx.conditions
        while link is not None:
            condition = link[0]
            if isinstance(condition, str):
                if self._only_spawned_per_gpu(condition) or self.called_only_where(
                        condition, self.runs_only_with_cuda, "cuda"):
                    return True  # (a worker started per GPU, a helper only called so)
            elif isinstance(condition, AfterExit):
                if condition.requirement is not None and \
                        self._asks_for_cuda(condition.requirement, scope):
                    return True
            elif isinstance(condition, cst.CSTNode) and self._asks_for_cuda(condition, scope):
                return True
            link = link[1]
        return False

    def after_cuda_use(self, node: cst.CSTNode, ctx: Ctx) -> Optional[cst.CSTNode]:
        """The statement before ``node`` that every run reaching ``node`` has run and that
        fails without CUDA, or None: an unconditional ``model.cuda()`` (also at the end of a
        chain, ``RGAT(...).cuda()``), ``x.to("cuda")``, ``torch.cuda.set_device(i)``,
        ``torch.set_default_tensor_type("torch.cuda.FloatTensor")``, earlier in ``node``'s
        block or in a block around it in the same function (or module, or notebook). No
        machine without CUDA reaches ``node`` (TDL003: a load there meets CUDA; the hard-coded
        CUDA is TDL002's finding). A ``.cuda()`` inside a condition, an argument or a
        conditional expression proves nothing."""
        body = ctx.func.node.body if ctx.func is not None else self.module
        statements = body.body if isinstance(body, (cst.IndentedBlock, cst.Module)) else ()
        scope = ctx.scope
        for _ in range(64):  # (down the blocks that hold ``node``)
            inner = None
            for statement in statements:
                if _holds(statement, node):
                    inner = statement
                    break
                if self._uses_cuda(statement, scope):
                    return statement
            if inner is None or isinstance(inner, (cst.FunctionDef, cst.ClassDef)):
                return None
            statements = next((block.body for block in _blocks_holding(inner, node)), None)
            if statements is None:
                return None
        return None

    def reached_after_cuda_use(self, node: cst.CSTNode, ctx: Ctx, depth: int = 0) -> bool:
        """Whether every run that reaches ``node`` has run a statement that fails without
        CUDA: ``after_cuda_use`` in its own function, or, for a top-level function, before
        every call of it that can reach ``node``: in this file (followed from caller to
        caller) and in the project's other files (their summaries' ``after``,
        ``project_index.Summary["calls"]``). A call that passes None for a parameter that
        ``node`` runs only when it is not None (``if G is not None:``) does not reach it:
        BigGAN's ``load_weights(G, D, ...)`` loads G's weights only for callers that moved G
        with ``.cuda()``, while ``sample.py`` passes ``None, None`` to read its counters.
        A function nothing calls proves nothing, nor does a public function of files
        outside a project (anyone may call it)."""
        if self.after_cuda_use(node, ctx) is not None:
            return True
        func = ctx.func
        if func is None or func.cls is not None or depth > 3 or \
                func.node not in self.module.body:
            return False
        key = ("after-cuda", id(node))
        if key in self._guard_memo:
            return self._guard_memo[key]
        self._guard_memo[key] = False  # (a recursive call proves nothing)
        name = func.name
        sites = self.collected.calls_by_name.get(name, ())
        project = self._project_of_calls()
        verdict = False
        if self._runs_only_where_called(name, sites) and \
                (project is not None or self.expects_no_other_callers(name, sites)):
            skipped = _skipped_when_none(ctx, func)
            reached = 0
            verdict = True
            for site in sites:
                if _passes_none(site.call, skipped) or not isinstance(site.call.func, cst.Name):
                    continue  # (``torch.load(path)`` inside darts' ``def load(model, path)``
                    # calls torch's ``load``, not this function)
                if not self.reached_after_cuda_use(site.call, site.ctx, depth + 1):
                    verdict = False
                    break
                reached += 1
            for _where, positional, keywords, after in (
                    project.calls_of(name) if verdict and project is not None else ()):
                if any(keywords.get(param) == "none" or (
                        positional is not None and 0 <= index < len(positional)
                        and positional[index] == "none") for param, index in skipped.items()):
                    continue
                if not after:
                    verdict = False
                    break
                reached += 1
            verdict = verdict and reached > 0
        self._guard_memo[key] = verdict
        return verdict

    def _uses_cuda(self, statement: cst.CSTNode, scope: Scope) -> bool:
        """``statement`` is one line that fails without CUDA when it runs (``after_cuda_use``):
        also Lightning's ``Fabric`` / ``Trainer`` made with ``accelerator="cuda"``."""
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
            while isinstance(value, cst.Call):
                func = value.func
                qualified = self.kinds.qualname(func, scope)
                if qualified in api.CUDA_REQUIRING_CALLS:
                    return True
                if qualified in api.ACCELERATOR_LAUNCHERS and any(
                        arg.keyword is not None and arg.keyword.value == "accelerator" and
                        string_value(arg.value) in _CUDA_WORDS
                        for arg in value.args):
                    return True  # ``fabric = L.Fabric(accelerator="cuda", ...)`` (lit-llama)
                if qualified == "torch.set_default_tensor_type" and value.args and \
                        "cuda" in (string_value(value.args[0].value) or ""):
                    return True
                if not isinstance(func, cst.Attribute) or qualified is not None:
                    break
                if func.attr.value == "cuda":
                    return True
                if func.attr.value == "to" and any(
                        self._names_cuda(arg.value, scope)
                        for arg in value.args if arg.keyword is None
                        or arg.keyword.value == "device"):
                    return True
                value = func.value
        return False

    def _names_cuda(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> bool:
        """``"cuda"`` (``"cuda:0"``), ``torch.device("cuda")``, or a name every binding of
        which is one (stylegan2's ``device = "cuda"`` before ``Generator(...).to(device)``):
        a move there fails without CUDA. A name also bound to anything else (``"cpu"`` in
        an ``else``, an option) proves nothing."""
        if (string_value(expr) or "").startswith("cuda"):
            return True
        if isinstance(expr, cst.Call) and len(expr.args) == 1 and \
                self.kinds.qualname(expr.func, scope) == "torch.device":
            return (string_value(expr.args[0].value) or "").startswith("cuda")
        if isinstance(expr, cst.Name) and depth < 3:
            bindings = scope.lookup(expr.value)
            return bool(bindings) and all(
                b.how == ASSIGN and not b.path and isinstance(b.value, cst.BaseExpression)
                and self._names_cuda(b.value, b.ctx.scope, depth + 1) for b in bindings)
        return False

    def runs_only_without_cuda(self, ctx: Ctx) -> bool:
        """Whether code in ``ctx`` runs only where CUDA is not there (nor asked for): in the
        ``else`` of a test that ``runs_only_with_cuda`` takes (``x.cpu().numpy() if
        train_on_gpu else x.numpy()``), or under its negation (``x.numpy() if not
        train_on_gpu else ...``, ``if not use_cuda:``). What the program moves to CUDA under
        such a test is on the CPU there (issue 28: the CPU branch of a course notebook's
        accuracy cell)."""
        scope = ctx.scope
        link = ctx.conditions
        while link is not None:
            condition = link[0]
            if isinstance(condition, OrElse):
                if self._asks_for_cuda(condition.test, scope):
                    return True
            elif isinstance(condition, cst.UnaryOperation) and \
                    isinstance(condition.operator, cst.Not) and \
                    self._asks_for_cuda(condition.expression, scope):
                return True
            link = link[1]
        return False

    def _asks_for_cuda(self, test: cst.CSTNode, scope: Scope, depth: int = 0) -> bool:
        """A test that holds only where CUDA is available or asked for (see
        ``runs_only_with_cuda``)."""
        if isinstance(test, cst.BooleanOperation):
            if isinstance(test.operator, cst.And):
                return self._asks_for_cuda(test.left, scope, depth) or \
                    self._asks_for_cuda(test.right, scope, depth)
            return self._asks_for_cuda(test.left, scope, depth) and \
                self._asks_for_cuda(test.right, scope, depth)
        if isinstance(test, (cst.Name, cst.Attribute, cst.Subscript)):
            name = _flag_name(test)
            if name is None:
                return False
            if _mentions_cuda(name) and not any(word in name.lower() for word in _OPT_OUT_WORDS):
                return True  # ``use_cuda``, ``args.cuda``, ``self.on_gpu`` (not ``no_cuda``),
                # ``conf["use_gpu"]``
            if depth < 3 and not isinstance(test, cst.Subscript):
                # a flag set from one of those (``self.dp = conf["use_gpu"]``): every binding
                bindings = self._flag_bindings(test, scope)
                return bool(bindings) and all(
                    self._asks_for_cuda(value, value_scope, depth + 1)
                    for value, value_scope in bindings)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
                isinstance(test.comparisons[0].operator, (cst.Equal, cst.In)) and \
                string_value(test.comparisons[0].comparator) is not None and \
                string_value(test.comparisons[0].comparator).startswith("cuda") and \
                not isinstance(test.left, (cst.SimpleString, cst.ConcatenatedString)):
            return True  # ``device.type == "cuda"`` (not ``"cuda" in str(d)``: a substring)
        return self._requires_availability(test, scope)

    def _flag_bindings(self, flag, scope: Scope) -> list:
        """(value, scope) of each assignment of a name, or of an attribute of an object of a
        class of this file; [] when one is no plain assignment."""
        bindings = scope.lookup(flag.value) if isinstance(flag, cst.Name) else \
            self.kinds.attribute_assignments(flag, scope)
        if any(b.how != ASSIGN or b.path or not isinstance(b.value, cst.BaseExpression)
               for b in bindings):
            return []
        return [(b.value, b.ctx.scope) for b in bindings]

    def _only_spawned_per_gpu(self, name: str) -> bool:
        """``mp.spawn(main_worker, nprocs=torch.cuda.device_count())`` and no other reference
        to ``main_worker`` (pytorch/examples' ImageNet script also calls it directly, on the
        CPU too)."""
        if name not in self.spawned_per_gpu():
            return False
        defs = [info for info in self.collected.functions if info.name == name]
        spawned = [arg.value for site in self.collected.calls_by_name.get("spawn", ())
                   for arg in site.call.args
                   if isinstance(arg.value, cst.Name) and arg.value.value == name]
        return bool(defs) and self._only_referenced_at(name, defs, spawned)

    def _guards(self, test: cst.CSTNode, scope: Scope, accelerator: bool) -> bool:
        return self.is_guard_test(test, scope) or \
            (accelerator and self.is_accelerator_test(test, scope))

    def is_accelerator_test(self, expr: cst.CSTNode, scope: Scope, depth: int = 0) -> bool:
        """A test that an accelerator is there: an availability check of one other than CUDA
        (``torch.accelerator.is_available()``, ``torch.backends.mps.is_available()``, see
        ``accelerator_checks``), a test of ``torch.accelerator.current_accelerator()`` itself
        (``is not None``, truthiness, ``or`` a default), or a name bound to one of these
        (``acc = torch.accelerator.current_accelerator()`` ... ``if acc:``)."""
        key = ("accelerator", id(expr))
        if key in self._guard_memo:
            return self._guard_memo[key]
        self._guard_memo[key] = False
        verdict = False
        for node in walk_code(expr):
            if isinstance(node, cst.Call):
                qualified = self.qualname(node.func, scope)
                if qualified in NON_CUDA_CHECKS or qualified == api.CURRENT_ACCELERATOR:
                    verdict = True
                    break
            elif isinstance(node, cst.Name) and depth < 3:
                if any(b.how == ASSIGN and isinstance(b.value, cst.BaseExpression)
                       and self.is_accelerator_test(b.value, b.ctx.scope, depth + 1)
                       for b in scope.lookup(node.value)):
                    verdict = True
                    break
        self._guard_memo[key] = verdict
        return verdict

    def live_branches(self, value: cst.IfExp, scope: Scope) -> tuple:
        """The branches of a conditional expression that can run with the torch the project
        targets: both, except where the test asks whether torch has the accelerator API
        (``X if hasattr(torch, "accelerator") else "cuda"``) and every torch the project
        allows has it (``torch-version`` 2.6 or later): the fallback is dead code there."""
        test, negated = value.test, False
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, negated = test.expression, True
        if has_accelerator_api_test(test, scope, self.qualname) and \
                versions.has_accelerator_api(self.torch_version):
            return (value.orelse,) if negated else (value.body,)
        return (value.body, value.orelse)

    def only_called_guarded(self, name: str, accelerator: bool = False) -> bool:
        """Whether function ``name`` of this file runs only under a guard: every reference
        to it is a call, every call is guarded, and no other file is expected to call it (it
        is private, ``_setup_ddp``, or the file is a script). MobileSAM's trainer calls
        ``self._setup_ddp(world_size)`` only under ``if world_size > 1``, with the world size
        counted from ``torch.cuda.device_count()``."""
        return self.called_only_where(
            name, lambda ctx: self.is_guarded(ctx, strict=True, accelerator=accelerator),
            ("guarded", accelerator))

    def only_call_sites(self, name: str) -> Optional[List[CallSite]]:
        """The calls of this file's function ``name`` when they are the only way it runs:
        every reference to it is a call, and no other file is expected to call it (it is
        private, or the file is a script, a test module, or runs the function from its own
        module body). None otherwise. What holds at every one of them holds in the function
        (issue 28: a guard, a test, an expected failure around the call of a helper)."""
        sites = self.collected.calls_by_name.get(name, ())
        if not sites or not self._runs_only_where_called(name, sites):
            return None
        return list(sites) if self.expects_no_other_callers(name, sites) else None

    def _runs_only_where_called(self, name: str, sites) -> bool:
        """This file defines ``name`` and refers to it only to call it at ``sites`` (no
        callback, no store, no string that names it, no call hidden from the analysis)."""
        if name in self.collected.unseen_call_names:
            return False
        defs = [info for info in self.collected.functions if info.name == name]
        return bool(defs) and self._only_called(name, defs, sites)

    def expects_no_other_callers(self, name: str, sites) -> bool:
        """Whether no other file is expected to call this file's function (or class)
        ``name``, whose calls here are ``sites``: it is private (``_helper``), or the file is
        a script (its entry point decides), a test module (nothing imports one), or a program
        whose own top-level code calls its functions (a notebook, a script without a
        ``__main__`` test). A public function of a library may be called from anywhere."""
        private = name.startswith("_") and not name.startswith("__")
        return private or self.is_script() or self._test_module() or \
            self._runs_its_functions()

    def _runs_its_functions(self) -> bool:
        """The module's top-level code calls a function the module defines."""
        if self._program is None:
            defined = {info.name for info in self.collected.functions if info.cls is None}
            self._program = any(
                site.ctx.func is None and site.ctx.cls is None
                and isinstance(site.call.func, cst.Name)
                for name in defined for site in self.collected.calls_by_name.get(name, ()))
        return self._program

    def called_only_where(self, name: str, holds: Callable[[Ctx], bool], what) -> bool:
        """Whether ``holds`` is true of the context of every call of this file's function
        ``name`` (``only_call_sites``), memoised under ``what``; a recursive call proves
        nothing."""
        key = ("called", name, what)
        if key in self._guard_memo:
            return self._guard_memo[key]
        self._guard_memo[key] = False
        sites = self.only_call_sites(name)
        verdict = sites is not None and all(holds(site.ctx) for site in sites)
        self._guard_memo[key] = verdict
        return verdict

    def fixture_only_requested_guarded(self, name: str) -> bool:
        """Whether ``name`` is a pytest fixture of this file (not ``autouse``) that no test
        shown here requests unguarded: it runs only for the tests that request it, and every
        one here is guarded (``@requires_gpu``, a CUDA skip) or none is (a ``conftest.py``
        fixture, requested from other files this file cannot show). compressed-tensors'
        ``onload_device`` fixture is requested only by ``@requires_gpu`` tests."""
        key = ("fixture", name)
        if key in self._guard_memo:
            return self._guard_memo[key]
        self._guard_memo[key] = False  # a fixture requesting itself proves nothing
        fixtures = [info for info in self.collected.functions
                    if info.name == name and fixture_decorator(info.node) is not None]
        verdict = bool(fixtures) and not any(
            _autouse(fixture_decorator(info.node)) for info in fixtures) and all(
            self._requester_guarded(info) for info in self.collected.functions
            if name in info.param_names and info not in fixtures)
        self._guard_memo[key] = verdict
        return verdict

    def _requester_guarded(self, info: FunctionInfo) -> bool:
        """A function that requests a fixture runs only under a guard: its name or a decorator
        says it needs a GPU or an accelerator, or the code around its definition is guarded."""
        scope = info.ctx.scope
        return _mentions_cuda(info.name) or any(
            self._guards(decorator.decorator, scope, True) for decorator in info.node.decorators) \
            or self.is_guarded(info.ctx, strict=True, accelerator=True)

    def _only_called(self, name: str, defs, sites) -> bool:
        """No reference to ``name`` but its definitions and its calls (not passed as a
        callback, not stored, not exported by name)."""
        return self._only_referenced_at(name, defs, [
            site.call.func.attr if isinstance(site.call.func, cst.Attribute) else site.call.func
            for site in sites])

    def _only_referenced_at(self, name: str, defs, nodes) -> bool:
        """No reference to ``name`` but its definitions and ``nodes`` (its calls, or the
        argument that hands it to ``mp.spawn``), and no string that names it."""
        allowed = {id(info.node.name) for info in defs} | {id(node) for node in nodes}
        if self._mentions(name) == len(allowed):
            return True  # the text names it nowhere else: no other reference, no string
        references = self._module_references()
        if name in references.strings:
            return False  # __all__, getattr(self, "name")
        return all(node in allowed for node in references.names.get(name, ()))

    def spawned_per_gpu(self) -> set:
        """Names of this file's functions started once per GPU: ``mp.spawn(main_worker,
        nprocs=torch.cuda.device_count())`` (also through a name bound only to the count, as
        in ResNeSt's and pytorch/examples' ImageNet scripts). Without a GPU they never run:
        ``spawn`` with ``nprocs=0`` starts nothing."""
        if self._spawned is None:
            self._spawned = set()
            for site in self.collected.calls_by_name.get("spawn", ()):
                call = site.call
                positional = [a.value for a in call.args if a.keyword is None and not a.star]
                keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
                worker = keywords.get("fn", positional[0] if positional else None)
                count = keywords.get("nprocs", positional[2] if len(positional) > 2 else None)
                if isinstance(worker, cst.Name) and count is not None \
                        and self._counts_gpus(count, site.ctx.scope):
                    self._spawned.add(worker.value)
        return self._spawned

    def _counts_gpus(self, expr, scope: Scope) -> bool:
        """``torch.cuda.device_count()``, or a name every assignment of which is that call."""
        if isinstance(expr, cst.Call):
            return self.kinds.qualname(expr.func, scope) == "torch.cuda.device_count"
        if isinstance(expr, cst.Name):
            owner = scope.resolve(expr.value)
            bindings = owner.bindings.get(expr.value, ()) if owner is not None else ()
            return bool(bindings) and all(
                b.how == ASSIGN and not b.path and isinstance(b.value, cst.Call)
                and self._counts_gpus(b.value, b.ctx.scope) for b in bindings)
        return False

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
                if _mentions_cuda(node.value) or _mentions_distributed(node.value) \
                        or _cpu_flag(node.value):
                    return True
                if depth < 4 and self._name_holds_guard(node.value, scope, depth):
                    return True
            elif isinstance(node, cst.Attribute):
                if _mentions_cuda(node.attr.value) or _mentions_distributed(node.attr.value) \
                        or node.attr.value in api.ACCELERATOR_ONLY_TESTS \
                        or _cpu_flag(node.attr.value):
                    return True
                if depth < 4 and self._attribute_holds_guard(node, scope, depth):
                    return True  # ``self.dp`` of ``self.dp = conf["use_gpu"]``
                stack.append(node.value)  # ``args.model``: the attribute is no variable
                continue
            elif isinstance(node, cst.Call) and \
                    self.qualname(node.func, scope) in api.CUDA_AVAILABILITY_CHECKS:
                return True  # (``from torch.cuda import is_available``: ``is_available()``)
            elif isinstance(node, cst.Call) and self._project_guard_call(node, scope):
                return True  # ``distributed.is_enabled()`` (dinov2: ``dist.is_initialized()``)
            elif isinstance(node, cst.Arg):
                # ``@RunIf(min_cuda_gpus=1)``, ``skipif(..., requires_gpu=True)``
                if node.keyword is not None and _mentions_cuda(node.keyword.value):
                    return True
            elif isinstance(node, cst.Comparison) and _is_none_test(node):
                # ``if device is None: device = "cuda"`` picks a default; it checks nothing
                # about CUDA. Only what the test names itself counts (``args.gpu is not None``).
                if any(_mentions_cuda(n.value) for n in _names_and_attributes(node.left)):
                    return True
                continue
            elif isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
                # A test that mentions a device by name checks which device is in use:
                # device.type == "cuda", device.startswith("cuda"), "cuda" in str(device),
                # provider in ("CUDAExecutionProvider",), torch.device("cuda") in devices.
                value = string_value(node)
                if value is not None and (_mentions_cuda(value) or value in api.GUARD_DEVICE_STRINGS
                                          or value in api.CUDA_ONLY_BACKENDS):
                    return True
                continue
            if isinstance(node, (cst.Lambda, cst.FunctionDef)):
                continue
            stack.extend(iter_children(node))
        return False

    def accelerator_checks(self, expr: cst.CSTNode, scope: Scope) -> Optional[str]:
        """The availability check of a device other than CUDA that ``expr`` makes, by its
        qualified name (``torch.accelerator.is_available``, ``torch.backends.mps.is_available``),
        or None. Such a check says that *an* accelerator, or MPS, is there: not CUDA."""
        for node in walk_code(expr):
            if isinstance(node, cst.Call):
                qualified = self.qualname(node.func, scope)
                if qualified in NON_CUDA_CHECKS:
                    return qualified
        return None

    def is_accelerator_choice(self, value: cst.CSTNode, scope: Scope) -> bool:
        """``torch.accelerator.current_accelerator().type if torch.accelerator.is_available()
        else "cpu"`` (PyTorch's tutorials), also with the device itself or inside
        ``torch.device()``: a device chosen at runtime that is CUDA wherever CUDA is (CUDA is
        the accelerator of a CUDA build), and never a hard-coded one."""
        return isinstance(value, cst.IfExp) and \
            self.accelerator_checks(value.test, scope) == ACCELERATOR_AVAILABLE and \
            any(isinstance(node, cst.Call) and
                self.qualname(node.func, scope) == "torch.accelerator.current_accelerator"
                for node in walk_code(value.body))

    def _attribute_holds_guard(self, node: cst.Attribute, scope: Scope, depth: int) -> bool:
        """An attribute of an object of a class of this file that some assignment sets from
        a guard test (DIG's GraphAF: ``self.dp = model_conf_dict["use_gpu"]``, tested as ``if
        self.dp:`` before each ``.cuda()``), as ``_name_holds_guard`` reads a name."""
        return any(binding.how == ASSIGN and isinstance(binding.value, cst.BaseExpression)
                   and not binding.path
                   and self.is_guard_test(binding.value, binding.ctx.scope, depth + 1)
                   for binding in self.kinds.attribute_assignments(node, scope))

    def _project_guard_call(self, call: cst.Call, scope: Scope) -> bool:
        """A call of a function of another module of the project that tests CUDA availability
        or distributed training (its summary's ``names``: dinov2's ``distributed.is_enabled()``,
        which returns ``dist.is_available() and dist.is_initialized()``), as the test itself
        would be in this file."""
        if not isinstance(call.func, (cst.Name, cst.Attribute)):
            return False
        qualified = self.qualname(call.func, scope)
        if qualified is None or not self._may_define(qualified):
            return False
        # (only in a project: asked of torch's installed sources, ``self.project`` built the
        # index of each directory of _dynamo for a call of its own modules, +24% of the time
        # on torch's nn and _dynamo, farm-bench against 203f6a1)
        project = self._project_of_calls()
        return project is not None and project.guard(qualified) is not None

    def _name_holds_guard(self, name: str, scope: Scope, depth: int) -> bool:
        for binding in scope.lookup(name):
            value = binding.value
            if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)) or (
                    isinstance(value, cst.Call) and last_name(value.func) in api.DEVICE_MAKING_CALLS):
                continue  # a device (``"cuda"``, ``torch.device(...)``, ``x.to(d)``) is no test
            if binding.how == ASSIGN and isinstance(binding.value, cst.BaseExpression):
                if self.is_guard_test(binding.value, binding.ctx.scope, depth + 1):
                    return True
            elif binding.how == IMPORT and isinstance(binding.value, str) and \
                    self._may_define(binding.value) and self.project is not None and \
                    self.project.guard(binding.value):
                return True  # ``from config.flags import USE_FUSED`` (a test there)
        return False

    def is_script(self) -> bool:
        """The file has an ``if __name__ == "__main__":`` entry point."""
        return has_main_entry(self.module)

    def read_only_where_guarded(self, name: str, ctx: Ctx) -> bool:
        """Whether every read of ``name`` in the function (or module body) of ``ctx`` is in
        a call that runs only under a guard: ``device = "cuda"`` followed by ``if not
        torch.cuda.is_available(): return`` and then ``model.to(device)`` (issue 28). Some
        read outside such a call (returned, stored, passed on unguarded), or none: False."""
        owner = ctx.func.node if ctx.func is not None else self.module
        guarded_reads: Set[int] = set()
        for sites in self.collected.calls_by_name.values():
            for site in sites:
                if site.ctx.func is ctx.func and site.ctx.scope is ctx.scope and \
                        self.is_guarded(site.ctx):
                    guarded_reads.update(id(n) for n in walk_code(site.call)
                                         if isinstance(n, cst.Name) and n.value == name)
        bound: Set[int] = set()
        reads = 0
        for node in walk_code(owner.body if ctx.func is not None else owner):
            if isinstance(node, cst.AssignTarget) or isinstance(node, (cst.AugAssign,
                                                                      cst.AnnAssign)):
                target = node.target
                bound.update(id(n) for n in walk_code(target) if isinstance(n, cst.Name))
            elif isinstance(node, cst.Name) and node.value == name and id(node) not in bound:
                if id(node) not in guarded_reads:
                    return False
                reads += 1
        return reads > 0

    def falls_back_to_cpu(self, name: str, func: Optional[FunctionInfo]) -> bool:
        """Whether the function checks the device ``name`` holds and gives the CPU instead:
        ``if not available: device = "cpu"`` (open_clip's ``init_distributed_device_so``), or
        an ``if`` whose test reads ``name`` and asks about CUDA and whose body returns the
        CPU (stable-baselines3's ``get_device``: ``if device.type == "cuda" and not
        th.cuda.is_available(): return th.device("cpu")``). A CUDA first choice there is only
        a first choice."""
        if func is None:
            return False
        scope = func.scope or func.ctx.scope
        for node in walk_code(func.node.body):
            if isinstance(node, cst.Assign) and self._names_cpu(node.value, scope) and any(
                    isinstance(t.target, cst.Name) and t.target.value == name
                    for t in node.targets):
                return True
            if isinstance(node, cst.If) and any(
                    isinstance(n, cst.Name) and n.value == name for n in walk_code(node.test)) \
                    and self.is_guard_test(node.test, scope) and any(
                        isinstance(small, cst.Return) and small.value is not None
                        and self._names_cpu(small.value, scope)
                        for statement in node.body.body
                        if isinstance(statement, cst.SimpleStatementLine)
                        for small in statement.body):
                return True
        return False

    def _names_cpu(self, expr, scope: Scope) -> bool:
        """``"cpu"`` or ``torch.device("cpu")``."""
        if string_value(expr) == "cpu":
            return True
        return isinstance(expr, cst.Call) and bool(expr.args) and \
            self.kinds.qualname(expr.func, scope) == "torch.device" and \
            string_value(expr.args[0].value) == "cpu"

    def default_always_overridden(self, name: str, func: FunctionInfo) -> bool:
        """Whether parameter ``name``'s default of ``func`` can be left unused: some call of
        ``func`` is known, and every call passes the argument (or ``**kwargs`` that may):
        those of this file, and, for a top-level function or class, those of the project's
        other files (the project index, also ``Model(**cfg, device=device)``), where no YAML
        configuration names the class (``instantiate_from_config`` may build it with the
        default). With no call anywhere, nothing is known, except for a function of a script
        (its entry point decides how it is run: ``mp.spawn(main_worker, ...)``)."""
        key = ("default", id(func), name)
        if key in self._guard_memo:
            return self._guard_memo[key]
        owner_name = func.cls.name if func.cls is not None and func.name == "__init__" else func.name
        params = func.node.params
        positional = [p.name.value for p in list(params.posonly_params) + list(params.params)]
        index = positional.index(name) if name in positional else None
        if index is not None and func.self_name is not None:
            index -= 1  # obj.method(...), Class(...), super().__init__(...) bind self
        calls = 0
        verdict = True
        for site in self._calls_of(func, owner_name):
            calls += 1
            arguments = site.call.args
            if any(a.star == "**" or (a.keyword is not None and a.keyword.value == name)
                   for a in arguments):
                continue
            passed = [a for a in arguments if a.keyword is None]
            if index is not None and (len(passed) > index or any(a.star == "*" for a in passed)):
                continue
            verdict = False
            break
        if verdict:
            project = self._project_of_calls()
            top_level = (func.cls is None or func.name == "__init__") and (
                func.node in self.module.body if func.cls is None
                else func.cls.node in self.module.body)
            others = (0, None)
            if project is None and not self.expects_no_other_callers(
                    owner_name, self._calls_of(func, owner_name)):
                others = None  # a public function of files outside a project: any caller
            elif project is not None and top_level:
                # audiocraft's ``NoiseSchedule(**cfg, device=self.device)``, coqui's tortoise
                # helpers: every call of the project passes it
                others = project.passed_by_every_caller(
                    owner_name, name, -1 if index is None else index, None)
                if others is not None and func.cls is not None and \
                        project.named_in_configs(owner_name):
                    others = None
            if others is None:
                verdict = False  # a call elsewhere leaves it out, or a configuration may
            elif calls + others[0] == 0:
                verdict = func.cls is None and self.is_script()
        self._guard_memo[key] = verdict
        return verdict

    def _calls_of(self, func: FunctionInfo, owner_name: str):
        calls = self.collected.calls_by_name
        if func.name == "__init__" and func.cls is not None:
            for site in calls.get(owner_name, ()):
                yield site
            for site in calls.get("__init__", ()):
                cls = site.ctx.cls
                if cls is None or any(last_name(base.value) == owner_name
                                      for base in cls.node.bases):
                    yield site  # super().__init__(...) of a subclass (not of another class)
        else:
            yield from calls.get(func.name, ())

    def requires_cuda_throughout(self) -> bool:
        """Whether the file says itself that it needs CUDA: a statement at the top level of
        the module or of a function stops the program unless CUDA is available
        (``assert torch.cuda.is_available()``, ``if not torch.cuda.is_available(): raise``,
        dino's ``if ...: elif torch.cuda.is_available(): ... else: sys.exit(1)``). Such a file
        is GPU-only by design, and its hard-coded CUDA is no portability bug. A skip stops one
        test, not the program, and guards only that test."""
        if self._requires_cuda is None:
            self._requires_cuda = False
            if any(name == "triton" or name.startswith("triton.")
                   for name in self.collected.imported_as) or \
                    "triton" in self.collected.module_scope.bindings:
                # A Triton kernel module: its kernels only run on a GPU.
                self._requires_cuda = True
                return True
            # ``init_process_group("nccl")`` / ``(backend="nccl")``: NCCL runs on NVIDIA GPUs
            # only, so a program that sets it up is a multi-GPU program.
            for site in self.collected.calls_by_name.get("init_process_group", ()):
                if any(string_value(arg.value) == "nccl" for arg in site.call.args
                       if arg.keyword is None or arg.keyword.value == "backend"):
                    self._requires_cuda = True
                    return True
            module_scope = self.collected.module_scope
            if any(last_name(call.func) == "load_ext" for call in _top_calls(self.module.body)):
                # ``ext_module = ext_loader.load_ext("_ext", [...])`` (mmcv's ops): the
                # module's work is done by a compiled CUDA extension's kernels.
                self._requires_cuda = True
                return True
            bodies = [(self.module.body, module_scope)] + [
                (info.node.body.body, info.scope) for info in self.collected.functions
                if isinstance(info.node.body, cst.IndentedBlock)]
            for statements, scope in bodies:
                for statement in statements:
                    requirement = _stopping_requirement(statement)
                    if requirement is not None and self._requires_availability(requirement, scope):
                        self._requires_cuda = True
                        return True
        return self._requires_cuda

    def _requires_availability(self, test: cst.CSTNode, scope: Scope) -> bool:
        """Whether going on past ``test`` means CUDA is available: the test is the
        availability check itself (``torch.cuda.is_available()``, ``device_count() > 0``, a
        name bound to one), or an ``or`` of such chains (dino's launch branches). Not
        ``not args.cuda or torch.cuda.is_available()``: a user who asks for no CUDA goes on."""
        if isinstance(test, cst.BooleanOperation):
            if isinstance(test.operator, cst.And):
                return self._requires_availability(test.left, scope) or \
                    self._requires_availability(test.right, scope)
            return self._requires_availability(test.right, scope)  # the else-exit's last branch
        if isinstance(test, cst.Comparison):
            return len(test.comparisons) == 1 and \
                isinstance(test.comparisons[0].operator, (cst.GreaterThan, cst.GreaterThanEqual,
                                                          cst.NotEqual)) and \
                self._checks_availability(test.left, scope)
        if isinstance(test, (cst.Call, cst.Name, cst.Attribute)):
            return self._checks_availability(test, scope)
        return False

    def _checks_availability(self, expr: cst.CSTNode, scope: Scope, depth: int = 0) -> bool:
        """A test that asks whether CUDA is there (``torch.cuda.is_available()``,
        ``torch.cuda.device_count() > 0``, directly or through a variable), as opposed to one
        about a value (``assert out.is_cuda`` in a test checks a result)."""
        for node in walk_code(expr):
            if isinstance(node, cst.Call) and \
                    self.qualname(node.func, scope) in api.CUDA_AVAILABILITY_CHECKS:
                return True
            elif isinstance(node, cst.Name) and depth < 2:
                for binding in scope.lookup(node.value):
                    if binding.how == ASSIGN and isinstance(binding.value, cst.BaseExpression) \
                            and self._checks_availability(binding.value, binding.ctx.scope, depth + 1):
                        return True
        return False


_CUDA_WORDS = ("cuda", "gpu")
# A flag that names CUDA to turn it off (``no_cuda``, ``disable_gpu``, ``cpu_only_not_gpu``).
_OPT_OUT_WORDS = ("no_", "not", "disable", "without", "cpu", "skip")
ACCELERATOR_AVAILABLE = "torch.accelerator.is_available"
# Availability checks of devices other than CUDA (see the module's docstring).
NON_CUDA_CHECKS = frozenset((
    ACCELERATOR_AVAILABLE, "torch.accelerator.device_count",
    "torch.backends.mps.is_available", "torch.backends.mps.is_built", "torch.mps.device_count",
    "torch.xpu.is_available", "torch.xpu.device_count"))
# Distributed code that runs only once (NCCL) multi-process training is initialised:
# ``if not dist.is_initialized(): return``, ``if is_dist_avail_and_initialized():``.
_DISTRIBUTED_WORDS = ("is_initialized", "and_initialized", "dist_initialized", "is_distributed",
                      "world_size")


def _autouse(decorator: Optional[cst.BaseExpression]) -> bool:
    """``@pytest.fixture(autouse=True)``: the fixture runs for every test in its reach."""
    return isinstance(decorator, cst.Call) and any(
        arg.keyword is not None and arg.keyword.value == "autouse"
        and not (isinstance(arg.value, cst.Name) and arg.value.value == "False")
        for arg in decorator.args)


def has_accelerator_api_test(test: cst.CSTNode, scope: Scope, qualname) -> bool:
    """``hasattr(torch, "accelerator")`` or ``hasattr(torch.accelerator, name)``: whether the
    running torch has the accelerator API (2.6 and later). ``qualname(expr, scope)`` names
    what an expression refers to."""
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name)
            and test.func.value == "hasattr" and len(test.args) == 2):
        return False
    owner, attribute = test.args[0].value, string_value(test.args[1].value)
    qualified = qualname(owner, scope)
    package, _, module = api.ACCELERATOR_MODULE.rpartition(".")
    return (qualified == package and attribute == module) or \
        (qualified == api.ACCELERATOR_MODULE and attribute is not None)


def _mentions_distributed(identifier: str) -> bool:
    lowered = identifier.lower()
    return any(word in lowered for word in _DISTRIBUTED_WORDS)




def _is_none_test(node: cst.Comparison) -> bool:
    return len(node.comparisons) == 1 and \
        isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot)) and \
        isinstance(node.comparisons[0].comparator, cst.Name) and \
        node.comparisons[0].comparator.value == "None"


def _names_and_attributes(expr: cst.CSTNode):
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            yield node
        elif isinstance(node, cst.Attribute):
            yield node.attr
            stack.append(node.value)


def _top_calls(statements):
    """The calls that statements run as a whole: ``f(...)`` and ``x = f(...)`` (the module's
    ``ext_module = ext_loader.load_ext(...)``)."""
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
                if isinstance(value, cst.Call):
                    yield value


def _if_statements(statements):
    """The ``if`` statements among ``statements`` and the blocks inside them, not inside the
    functions and classes they define (those are walked as functions of their own)."""
    stack = list(statements)
    while stack:
        statement = stack.pop()
        if isinstance(statement, cst.If):
            yield statement
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef, cst.SimpleStatementLine)):
            continue
        body = getattr(statement, "body", None)
        if isinstance(body, cst.BaseSuite):
            stack.extend(body.body)
        for attribute in ("orelse", "finalbody"):
            extra = getattr(statement, attribute, None)
            if isinstance(extra, cst.BaseSuite):
                stack.extend(extra.body)
            elif isinstance(extra, (cst.If, cst.Else, cst.Finally)):
                stack.append(extra)
        for handler in getattr(statement, "handlers", ()):
            stack.extend(handler.body.body)


def _test_text(module: cst.Module, test: cst.BaseExpression) -> str:
    return " ".join(module.code_for_node(test).split())


def _stopping_requirement(statement) -> "cst.CSTNode | None":
    """The test a function's top-level statement requires to go on, when failing it stops
    the program: ``assert t``, ``if not t: raise/sys.exit()``, ``if ...: ... else: exit``."""
    after = exit_condition(statement, stops_program=True)
    return after.requirement if after is not None else None


def _flag_name(flag) -> Optional[str]:
    """The name a flag goes by: ``use_cuda``, ``cuda`` of ``args.cuda``, ``use_gpu`` of
    ``conf["use_gpu"]``; None for a subscript by anything but one string."""
    if isinstance(flag, cst.Name):
        return flag.value
    if isinstance(flag, cst.Attribute):
        return flag.attr.value
    if len(flag.slice) == 1 and isinstance(flag.slice[0].slice, cst.Index):
        return string_value(flag.slice[0].slice.value)
    return None


def _cpu_flag(identifier: str) -> bool:
    """A flag that chooses the CPU (``use_cpu``, ``args.cpu``, ``force_cpu``, ``cpu_only``):
    the code under ``if not args.use_cpu:`` runs only where the user chose the GPU, as under
    ``if args.cuda:``. Not a count of CPU cores (``num_cpus``, ``cpu_count``)."""
    words = identifier.lower().split("_")
    return "cpu" in words and not any(word in _CPU_COUNT_WORDS for word in words)


_CPU_COUNT_WORDS = frozenset(("num", "count", "cores", "workers", "threads", "n", "per"))


def _mentions_cuda(identifier: str) -> bool:
    lowered = identifier.lower()
    return any(word in lowered for word in _CUDA_WORDS)


def _holds(statement: cst.CSTNode, node: cst.CSTNode) -> bool:
    """``node`` is ``statement`` or under it."""
    return any(inner is node for inner in walk_code(statement, into_functions=True))


def _blocks_holding(statement: cst.CSTNode, node: cst.CSTNode):
    """The blocks of the compound ``statement`` (its body, an ``else``, a handler, a
    ``finally``) that hold ``node``: the one ``node``'s statement runs in."""
    for child in iter_children(statement):
        if isinstance(child, cst.IndentedBlock):
            if _holds(child, node):
                yield child
        elif isinstance(child, cst.CSTNode) and not isinstance(child, cst.BaseExpression):
            yield from _blocks_holding(child, node)


def _skipped_when_none(ctx: Ctx, func: FunctionInfo) -> Dict[str, int]:
    """The parameters of ``func`` that code in ``ctx`` runs only when they are not None (an
    ``if P is not None:`` or ``if P:`` around it, also in an ``and``), with their position
    (-1: keyword-only)."""
    params = func.node.params
    positional = [p.name.value for p in list(params.posonly_params) + list(params.params)]
    keyword_only = {p.name.value for p in params.kwonly_params}
    found: Dict[str, int] = {}

    def note(test) -> None:
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            note(test.left)
            note(test.right)
            return
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
                isinstance(test.comparisons[0].operator, cst.IsNot) and \
                isinstance(test.comparisons[0].comparator, cst.Name) and \
                test.comparisons[0].comparator.value == "None":
            test = test.left
        if isinstance(test, cst.Name):
            if test.value in positional:
                found[test.value] = positional.index(test.value)
            elif test.value in keyword_only:
                found[test.value] = -1

    link = ctx.conditions
    while link is not None and not isinstance(link[0], str):  # (up to the function's own)
        if isinstance(link[0], cst.CSTNode):
            note(link[0])
        link = link[1]
    return found


def _passes_none(call: cst.Call, skipped: Dict[str, int]) -> bool:
    """``call`` passes a literal None for one of the ``skipped`` parameters."""
    position = 0
    for arg in call.args:
        if arg.star:
            return False  # (positions after ``*args`` are unknown)
        none = isinstance(arg.value, cst.Name) and arg.value.value == "None"
        if arg.keyword is not None:
            if none and arg.keyword.value in skipped:
                return True
        else:
            if none and position in skipped.values() and position >= 0:
                return True
            position += 1
    return False
