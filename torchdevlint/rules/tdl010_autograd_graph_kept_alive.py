"""TDL010: a loop over a data loader accumulates, across its iterations, a tensor that carries
autograd history, with grad enabled and nothing that frees that history: every iteration's
graph, with the activations it saved, stays alive, and memory grows with every batch.

Reported: inside ``for ... in <loader>`` (a data loader, also through ``enumerate``, ``zip``,
``tqdm`` and the like), one of

- ``total += X`` or ``total = total + X`` (``-`` too), ``X`` possibly a ``sum(...)``;
- ``outs.append(X)``, ``outs.extend(X)``, ``outs.insert(i, X)``, ``outs += [X]``, also of a
  tuple, list or dict holding ``X``;

and inside any other loop (``for`` over ``range(n)``, a list of batches, an iterator;
``while``) that runs backward(), draws from a data loader or computes a loss (by provenance,
``Analysis.loss_evidence``), or else whose text names a loss, the sums of tensors (and, where
the loop runs backward() every step, the lists of them) (issue 28);
where ``total`` / ``outs`` (a name, ``self.NAME``, or an entry of one: ``totals[k]``) is
carried from one iteration to the next (the loop body binds it only by such accumulations;
``if k not in totals: totals[k] = 0`` starts an entry, it does not reset it), and ``X``
carries history made in this
iteration with grad enabled: a model's output (a module called, ``model(x)``,
``self.net(x)``, ``model.forward(x)``), a loss of such an output (``criterion(out, y)``,
``F.cross_entropy(out, y)``), and what tensor arithmetic, history-keeping tensor methods and
torch functions make of those. ``.item()``, ``.detach()``, ``.tolist()``, ``.numpy()``,
``.data``, ``float(...)``, integer results (``argmax``, comparisons) and calls the analysis
does not know carry none.

Silent (precision first) when:

- grad is off where the history would be made: ``torch.no_grad()`` / ``inference_mode()``
  (as a ``with`` or a decorator), ``set_grad_enabled(False)``; ``model.eval()`` does not turn
  grad off;
- the loop is in a function that sets no grad mode and neither calls backward() itself (which
  needs grad) nor is proven by the file to run with grad: every call of it in this file must
  itself be proven to run with grad (the module level, ``enable_grad``, or a function proven
  so in turn); a function never called here, passed around by name, decorated, or one that
  names a grad-mode switch it may apply conditionally (``set_grad_enabled(train)``) is its
  callers' business (callers in other files are not followed);
- the accumulated value is ``backward()``-ed later (gradient accumulation), or returned from
  the function to a caller that may run backward on it;
- the file freezes parameters (``requires_grad_(False)``, ``requires_grad = False``) or turns
  grad off for the whole program (``torch.set_grad_enabled(False)`` as a statement).

A loop whose body calls ``backward()`` (or anything named ``*backward*``, ``autograd.grad``,
or hands the value to a loss scaler or an optimiser step) is its own kind of finding
(``GRAPH_NODES_KEPT``, issue 28): backward frees the saved activations, but every step's graph
nodes stay reachable from the total. Measured under torch 2.13 on the CPU: 8 nodes and about
7 KiB of host memory a step for a two-layer MLP, 131 nodes and about 85 KiB a step for a
two-layer transformer encoder (``benchmarks/graph_nodes_memory.py``); ``.item()`` keeps neither.

Fix: append ``.detach()`` to the accumulated value (``total += loss.detach()``,
``outs.append(model(x).detach())``). Safe when the value is known to be a tensor (a loss, a
tensor operation); unsafe when it is a model's output as it is (a model may return a tuple or a
``ModelOutput``, which has no ``.detach()``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from torchdevlint.analysis import (
    GRAD_ON, GRAD_RUNTIME, K, Analysis, Ctx, FunctionInfo, OrderedWalk, Scope, api,
    argument_for_parameter, dotted_name, grad_mode_set_by, holds, is_elementwise_comparison,
    iter_children, last_name, reads_name, walk_code,
)
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext, call_on, call_on_text
from torchdevlint.fixes.model import Fix, FixPlan
from torchdevlint.positions import code_for_node
from torchdevlint.rules.base import Message, Rule, Violation, source_of
from torchdevlint.rules.prefilter import accumulating_loop_in, names_a_loss
from torchdevlint.textsearch import assigns_requires_grad_false

# Evidence that a value carries history: a tensor, or a model's output of unknown structure.
TENSOR = "tensor"
OUTPUT = "output"

# Tensor methods whose result keeps the receiver's history (and, for the binary ones, the
# argument's).
_KEEPING_METHODS = api.HISTORY_KEEPING_METHODS
# Methods that take other tensors whose history the result keeps as well.
_BINARY_METHODS = api.ARITHMETIC_METHODS  # (comparisons give bool tensors: no history)
# torch functions (by their last name) whose result keeps their tensor arguments' history.
_KEEPING_FUNCTIONS = api.HISTORY_KEEPING_FUNCTIONS
# torch.nn.functional functions whose result has no history (integer results).
_FUNCTIONAL_WITHOUT_HISTORY = frozenset("one_hot".split())
# Attributes of a value with history that hold tensors with that history.
_TENSOR_ATTRIBUTES = api.HISTORY_KEEPING_ATTRIBUTES | api.MODEL_OUTPUT_TENSORS | frozenset(
    "hidden_states attentions pred_boxes pred_logits loss_dict losses".split())
# Callees (by a lower-cased last name) a model's output is taken to be passed to for backward
# or an optimiser step: the loop may free the graph there.
_FREEING_WORDS = ("backward", "scaler", "step", "optimi")
_ACCUMULATING = (cst.AddAssign, cst.SubtractAssign)


@dataclass
class DetachFix(FixPlan):
    """The accumulated expressions that get ``.detach()``, and whether that is safe."""

    values: Tuple[cst.BaseExpression, ...]
    safe: bool

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        edits = [edit for value in self.values for edit in call_on(ctx, value, ".detach()")]
        texts = ", ".join(f"`{source_of(v)}`" for v in self.values)
        return Fix(finding.code, self.safe, f"accumulate {texts} detached from its graph",
                   tuple(edits))


class AutogradGraphKeptAlive(Rule):
    """
    ## What it does
    Reports a loop over a data loader (`for ... in loader`, also through `enumerate`, `zip`,
    `tqdm` and the like) that accumulates, from one iteration to the next, a tensor that carries
    autograd history, while grad is enabled and nothing frees that history:

    - `total += X`, `total -= X`, `total = total + X` (also `X` a `sum(...)`);
    - `outs.append(X)`, `outs.extend(X)`, `outs.insert(i, X)`, `outs += [X]`, also of a tuple,
      list or dict that holds `X`;
    - `meter.update(X, n)`, the call of a method of a class of the file that adds its argument
      into an attribute of its object (`def update(self, val, n=1): self.sum += val * n`, the
      `AverageMeter` of countless training scripts; issue 28): the accumulator is `meter.sum`;

    where `total` / `outs` (a name, `self.NAME`, or an entry of one: `totals[k] += loss`,
    `hist[k].append(loss)`, a `defaultdict` of totals) is carried over from the previous
    iteration (the loop body binds it only by such accumulations; `if k not in totals:
    totals[k] = 0.0` starts an entry, it does not reset it) and `X` carries history made in this
    iteration: a model's output (a module called: `model(x)`, `self.net(x)`, `model.forward(x)`),
    a loss of one (`criterion(out, y)`, `F.cross_entropy(out, y)`, `nn.MSELoss()(out, y)`), and
    what tensor arithmetic, history-keeping tensor methods (`.cpu()`, `.float()`, `.sum()`,
    `.softmax()`, ...) and torch functions (`torch.cat`, `F.*`) make of those, also through a
    dict of them (`for name, value in losses.items():`).

    Any other loop (issue 28) — one that counts its batches (`for _ in range(eval_iters):`
    drawing one each step, `trange(n)`, `tqdm(range(n))`), one over a list of batches or an
    iterator, a `while` loop — is judged the same way, for sums of tensors (`total += loss`),
    when what it does shows that it trains or evaluates, whatever its names: it runs
    backward(), draws its batches from a data loader (`next(batches)` of one), or computes a
    loss (by provenance: the call of a torch.nn loss module, also one a parameter is given by
    every call of its function in this file, of a `torch.nn.functional` loss, or of a
    function of this file that returns one); or, the weaker evidence, where its text names a
    loss (`loss`, `criterion`). The message says which. A list it fills is left alone (an
    unrolled decoder or RNN keeps its steps' outputs for the backward that follows) unless the
    loop runs backward every step.

    Grad is enabled where nothing turns it off: `torch.no_grad()` and `torch.inference_mode()`
    (as a `with` or as a decorator) and `torch.set_grad_enabled(False)` do; `model.eval()` does
    not. In a function that sets no grad mode itself, grad is its caller's: the rule reports
    when every call of the function in the file is proven to run with grad (at module level,
    under `enable_grad()`, or in a function proven so in turn), or when the function calls
    `backward()` itself, which needs grad (the message names that evidence).

    A loop that calls `backward()` every step (the PyTorch FAQ's own example, `total_loss +=
    loss` after `loss.backward()`) is reported as a finding of its own kind: backward frees the
    activations each step's graph saved, but not the graph's nodes, and the total links every
    step's nodes (see below).

    The finding is on the accumulated value.

    ## Why is this bad
    Every operation on a tensor that requires grad records a node of the autograd graph, and the
    nodes keep the tensors they need for backward: the activations of every layer the batch went
    through. Keeping the result keeps the whole graph. A loop that adds each batch's loss to a
    running total (or keeps each batch's output in a list) without `backward()` keeps every
    batch's graph, and with it every batch's activations, alive until the loop ends: memory grows
    with every batch until

    ```
    torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ...
    ```

    Measured on an H100: an evaluation loop that accumulated the loss and the outputs with grad
    enabled peaked at 110 MiB after 5 batches and at 186 MiB after 20. PyTorch's FAQ names it:
    "don't accumulate history across your training loop". The usual place is a validation loop
    written without `torch.no_grad()`, often with `model.eval()`, which does not turn grad off.

    In a training loop that calls `backward()` every step, backward frees the saved activations,
    but a total that adds up the loss tensors is itself a graph: an addition node per step,
    linked to that step's whole graph of nodes, all reachable from the total until it goes.
    Measured under torch 2.13 on the CPU (`python benchmarks/graph_nodes_memory.py`, 2,000
    steps; 6.3 to 6.8 KiB and 81 to 87 KiB in repeated runs): a two-layer MLP keeps 8 nodes and
    about 7 KiB of host memory a step, a two-layer transformer encoder 131 nodes and about 85 KiB
    a step (`.item()`: none, under 0.1 KiB); device
    memory does not grow (measured on an H100: 65.6 MiB peak after 10 steps and after 40). Over
    an epoch of 10,000 steps of the transformer that is 0.8 GB of host memory (public reports:
    "around 1-2MB of CPU memory are being leaked per batch", MultimediaTechLab/YOLO#83; "in 1000
    iterations it frozen a PC with 12Gb RAM", rballester/tntorch#19).

    ## Example
    ```python
    def evaluate(model, loader, criterion):
        model.eval()
        val_loss = 0.0
        for inputs, targets in loader:
            loss = criterion(model(inputs), targets)
            val_loss += loss
        return val_loss.item() / len(loader)


    val_loss = evaluate(model, val_loader, nn.CrossEntropyLoss())
    ```

    ## Use instead
    ```python
    def evaluate(model, loader, criterion):
        model.eval()
        val_loss = 0.0
        for inputs, targets in loader:
            loss = criterion(model(inputs), targets)
            val_loss += loss.detach()  # or loss.item()
        return val_loss.item() / len(loader)


    val_loss = evaluate(model, val_loader, nn.CrossEntropyLoss())
    ```

    or run the whole loop under `with torch.no_grad():` (or decorate the function with
    `@torch.no_grad()`), which also saves the memory of the graph of the current batch.

    ## Fix safety
    `--fix` appends `.detach()` to the accumulated value (`val_loss += loss.detach()`,
    `outs.append(model(x).detach())`; an operation is parenthesised first). A detached tensor has
    the same values and no history: what the loop computes does not change, and the rule stays
    silent wherever the accumulated value is `backward()`-ed later, so no gradient is lost.

    - **Safe** when the value is known to be a tensor: a loss, the result of tensor arithmetic, a
      tensor method or a torch function.
    - **Unsafe** (applied only with `--unsafe-fixes`) when it is a model's output as it is: a
      model may return a tuple, a dict or a `ModelOutput`, which have no `.detach()`.

    ## Known limits
    The rule stays silent when:

    - the total is `backward()`-ed later in the function (gradient accumulation), or returned
      from a function whose caller may run backward on it: a caller the file does not show, or
      one that returns the result on, binds it to a name that it (or a name computed from it)
      later runs backward on, or hands it to a call that may (issue 28: a training loop's
      `loss.backward()` beside `print(validate(model, val_loader))` is no backward of the
      validation loss). Not where the loop itself runs backward() on each value it adds
      (`loss.backward()`, then `epoch_sum_loss += loss`, Amphion's trainer): those graphs
      are freed, so no caller runs backward on the sum;
    - the accumulator is bound anew inside the loop (`total = 0` on some path): what it holds
      does not grow with the number of batches;
    - the function that holds the loop sets no grad mode, does not call `backward()` and the file
      does not prove that it runs with grad: it is never called in this file (a `validate(model,
      loader)` called from another module: the rule does not follow callers across files), it
      is used other than by calling it (passed as a callback), it is decorated, some caller wraps
      it in `torch.no_grad()`, or it switches grad in a way the analysis does not follow
      (`torch.set_grad_enabled(train)`, `ctx = torch.no_grad() if ... else nullcontext()`);
    - a loop over anything but a data loader that neither runs backward(), nor draws from a
      data loader, nor computes a loss, and whose text names none; or that fills a list without
      running backward every step;
    - the file freezes parameters (`requires_grad_(False)`, `p.requires_grad = False`) or turns
      grad off for the whole program (`torch.set_grad_enabled(False)` as a statement);
    - the value's history is not known: the result of a function or method the analysis does not
      know (a method, `model.generate(...)`, a function of another module; a plain function
      of this file, or a method of a plain class of it called on its object (`loss =
      self._train_step(batch)`), is followed into its `return`s, with its parameters holding
      what the call passes: `total += helper(loss)`), `.item()`, `.detach()`,
      `.tolist()`, `.numpy()`, `.data`, `float(...)`, integer results (`argmax`, comparisons,
      `torch.max(...)` with its indices), tensors made by factories (`torch.zeros`, `bincount`).

    A model is a callee known to be an `nn.Module` (also a parameter every call of its function
    in this file passes one) or a name such as `model`, `net`, `encoder`, `*_model`; a loss is,
    by provenance, a `torch.nn` loss module (a class of this file deriving from one or from
    `_Loss` too, and a parameter every call passes one), a `torch.nn.functional` loss
    function, and only where provenance says nothing, a name such as `criterion` or
    `loss_fn`. Metric objects (`meter.update(loss)`) are not followed.
    """

    # The kind of finding (its message, as data; the report fills the fields).
    GRAPH_KEPT = Message(
        "`{accumulator}` collects {values}, which carries autograd history, in every iteration "
        "of {loop} with grad enabled{evidence} and no backward() to free it: each "
        "iteration's graph stays alive, and with it every batch's activations, so memory grows "
        "with every batch; accumulate {detached} instead, or run the loop under "
        "`torch.no_grad()`")
    # issue 28: the PyTorch FAQ's own example (``total_loss += loss`` after ``loss.backward()``)
    GRAPH_NODES_KEPT = Message(
        "`{accumulator}` collects {values}, which carries autograd history, in every iteration "
        "of {loop}: backward() frees the activations each iteration's graph saved, but not the "
        "graph's nodes, which stay reachable from `{accumulator}`, so host memory grows with "
        "every iteration (measured: about 7 KiB an iteration for a two-layer MLP, 85 KiB for "
        "a two-layer transformer encoder); accumulate {detached} (or `.item()`) instead")

    code = "TDL010"
    name = "autograd-graph-kept-alive"
    summary = ("A loop over a data loader accumulates tensors with autograd history: every "
               "batch's graph and activations stay alive")
    fixable = True
    facts = frozenset(("kinds", "grad"))
    # A loop over a loader (every way the analysis knows one has "loader" in it) or one whose
    # text names a loss (``torch_api.LOSS_WORDS``) that accumulates with ``+`` (``+=``,
    # ``a = a + b``, ``outs += [...]``), ``-`` or a list method.
    required_text = (r"(?i)loader|loss|criterion", r"[+-]|\.\s*(append|extend|insert)\b")
    valid = (
        # .item(): a Python number, no history
        "import torch\n\n\ndef main(model, criterion, loader):\n    total = 0.0\n"
        "    for x, y in loader:\n        loss = criterion(model(x), y)\n"
        "        total += loss.item()\n    return total\n\n\nmain(None, None, None)\n",
        # under no_grad
        "import torch\n\n\n@torch.no_grad()\ndef main(model, loader):\n    outs = []\n"
        "    for x, y in loader:\n        outs.append(model(x))\n    return outs\n\n\n"
        "main(None, None)\n",
        # backward() every step, and the loss's value kept (the FAQ's fix)
        "import torch\n\n\ndef main(model, criterion, optimizer, loader):\n    total = 0\n"
        "    for x, y in loader:\n        loss = criterion(model(x), y)\n"
        "        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n"
        "        total += loss.item()\n\n\nmain(None, None, None, None)\n",
        # evaluate() is called under no_grad: the caller decides
        "import torch\n\n\ndef evaluate(model, loader):\n    outs = []\n"
        "    for x, y in loader:\n        outs.append(model(x))\n    return outs\n\n\n"
        "with torch.no_grad():\n    evaluate(None, None)\n",
    )
    invalid = (
        ("import torch\n\n\ndef main(model, criterion, loader):\n    total = 0\n"
         "    for x, y in loader:\n        loss = criterion(model(x), y)\n"
         "        total += loss\n    return total.item()\n\n\nmain(None, None, None)\n",
         ((8, 18),)),
        ("import torch\n\nmodel = torch.nn.Linear(2, 2)\nouts = []\n"
         "for x in loader:\n    outs.append(model(x))\n", ((6, 17),)),
        # backward() every step frees the activations, not the graph's nodes (issue 28)
        ("import torch\n\n\ndef main(model, criterion, optimizer, loader):\n    total = 0\n"
         "    for x, y in loader:\n        loss = criterion(model(x), y)\n"
         "        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n"
         "        total += loss\n", ((11, 18),)),
    )

    could_report_in = staticmethod(accumulating_loop_in)  # (in prefilter: no LibCST there)

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        self.analysis = analysis
        self.kinds = analysis.kinds
        self._accumulated: Dict[int, List[tuple]] = {}  # id(call) -> accumulated_arguments
        self._code: Dict[int, str] = {}
        # (loop, ctx, whether it iterates something other than a data loader: ``range(n)``,
        # a list of batches, an iterator, a ``while`` loop)
        loops = []
        for loop, ctx, _ in analysis.collected.for_loops:
            over_a_loader = bool(analysis.loader_paths(loop.iter, ctx.scope))  # (asked once)
            loops.append((loop, ctx, not over_a_loader))
        loops += [(loop, ctx, True) for loop, ctx in analysis.collected.while_loops]
        # (a loop over anything but a loader is judged by what it does: ``_LoopWalk.judged``)
        if not loops:
            return
        if ("requires_grad" in (analysis.source or "requires_grad")
                and _freezes_parameters(analysis)) or self._grad_off_for_program():
            return
        self._grad_memo: Dict[int, bool] = {}
        self._bodies: Dict[int, Tuple[bool, bool]] = {}
        self._returning: Set[int] = set()  # helpers whose returns are being traced
        reported: Set[int] = set()
        for loop, ctx, counting in loops:
            if self.analysis.grad_recording(ctx) is False:
                continue
            walker = _LoopWalk(self, loop, ctx, counting, self._grad_evidence(ctx))
            for finding in walker.run():
                if id(finding.node) not in reported:
                    reported.add(id(finding.node))
                    yield finding

    # -- loops over loaders --------------------------------------------------------------

    # -- grad mode -------------------------------------------------------------------------

    def _grad_off_for_program(self) -> bool:
        """``torch.set_grad_enabled(False)`` as a statement: grad off from there on."""
        for site in self.analysis.collected.calls_by_name.get("set_grad_enabled", ()):
            if site.statement is not None:
                return True
        return False

    def ctx_of_call(self, call: cst.Call) -> Optional[Ctx]:
        site = self.analysis.site_of(call)
        return None if site is None else site.ctx

    def _grad_evidence(self, ctx: Ctx) -> Optional[str]:
        """How the analysis knows the loop runs with grad: "" (a grad mode, or every caller in
        this file), the words of the message that name the evidence (the function calls
        backward() itself, issue 28), or None: not proven (a loop that calls backward() is
        judged all the same: backward() needs grad)."""
        if self._runs_with_grad(ctx):
            return ""
        func = ctx.func
        if func is not None and self.analysis.grad_recording(ctx) is None \
                and self.analysis.grad.callers_decide(ctx) and self._backwards_itself(func):
            return f" (`{func.name}` calls backward(), so it runs with grad)"
        return None

    def _backwards_itself(self, func: FunctionInfo) -> bool:
        """``func`` calls backward() and switches grad in no way the analysis does not follow."""
        calls_backward, switches_unseen = self._body_facts(func)
        return calls_backward and not switches_unseen

    def _body_facts(self, func: FunctionInfo) -> Tuple[bool, bool]:
        """(whether ``func``'s body calls backward(), whether it switches grad in a way the
        analysis does not follow), from one walk of the body, once per function: every loop
        asked both with a walk each (a third of the rule's cost on the editor benchmark's
        500-line script, whose 26 loops sit in 26 functions)."""
        key = id(func)
        known = self._bodies.get(key)
        if known is None:
            calls_backward = named = False
            for node in walk_code(func.node.body):
                if isinstance(node, cst.Call) and last_name(node.func) == "backward":
                    calls_backward = True
                elif isinstance(node, (cst.Name, cst.Attribute)) \
                        and last_name(node) in api.GRAD_MODE_SWITCHES:
                    named = True
            known = self._bodies[key] = (
                calls_backward, named and _switches_grad_unseen(func.node.body))
        return known

    def _runs_with_grad(self, ctx: Ctx, depth: int = 0) -> bool:
        recording = self.analysis.grad_recording(ctx)
        if recording is not None:
            return recording
        if not self.analysis.grad.callers_decide(ctx):
            return False  # ``set_grad_enabled(train)``: decided at run time, not proven on
        return self._called_with_grad(ctx.func, depth)

    def _called_with_grad(self, func: FunctionInfo, depth: int) -> bool:
        """Every call of ``func`` this file makes is proven to run with grad (and there is one,
        and the function is used in no other way)."""
        key = id(func)
        if key in self._grad_memo:
            return self._grad_memo[key]
        self._grad_memo[key] = False  # recursion: not proven
        result = depth < 4 and self._callers_record(func, depth)
        self._grad_memo[key] = result
        return result

    def _callers_record(self, func: FunctionInfo, depth: int) -> bool:
        node = func.node
        if any(last_name(d.decorator if not isinstance(d.decorator, cst.Call) else d.decorator.func)
               not in ("staticmethod", "classmethod") for d in node.decorators):
            return False  # a decorator may wrap it in anything
        if self._body_facts(func)[1]:
            return False  # it switches grad itself, in a way the analysis does not follow
        name = func.name
        sites = [s for s in self.analysis.collected.calls_by_name.get(name, ())
                 if last_name(s.call.func) == name]
        if not sites:
            return False
        # (the text's count spares the walk of the module where it already shows no other)
        if self.analysis.mentions(name) != len(sites) + 1 and \
                self.analysis.references.uses(name) != len(sites) + 1:
            return False  # passed around, or named elsewhere: callers this file does not show
        if func.cls is not None:
            # a method's own calls, where they can be told from the other calls of its name
            # (``ChexnetTrainer.train(...)`` beside ``model.train()``)
            own = self.analysis.kinds.method_call_sites(func, through_class=True)
            if own is not None:
                sites = own
        return bool(sites) and all(self._runs_with_grad(site.ctx, depth + 1) for site in sites)

    # -- what a value is -----------------------------------------------------------------------

    def is_model(self, func, scope: Scope) -> bool:
        if isinstance(func, cst.Call):
            return False
        kind = self.kinds.kind_of(func, scope)
        if self.kinds.is_module(kind):
            return True
        if kind is not K.UNKNOWN:
            return False
        name = last_name(func)
        return name is not None and api.is_model_name(name) and not api.is_criterion_name(name)

    def result_may_be_backwarded(self, func: FunctionInfo) -> bool:
        """Whether a caller may run backward on what ``func`` returns: a caller this file does
        not show, or one whose code calls backward."""
        module = self.analysis.module
        sites = [s for s in self.analysis.collected.calls_by_name.get(func.name, ())
                 if last_name(s.call.func) == func.name]
        if not sites:
            return True
        for site in sites:
            if site.ctx.func is not None:
                owner = site.ctx.func.node.body
                code = self.code_of(owner)
            else:
                owner = module
                code = "".join(self.code_of(statement) for statement in module.body
                               if not isinstance(statement, (cst.FunctionDef, cst.ClassDef)))
            if "backward" in code and self._result_may_reach_backward(site.call, owner):
                return True
        return False

    def _result_may_reach_backward(self, call: cst.Call, owner: cst.CSTNode) -> bool:
        """Whether what ``call`` returns may be ``backward()``-ed in the code ``owner`` that
        makes it (issue 28: ``print(validate(model, val_loader))`` after a training loop's
        ``loss.backward()`` is no backward of the validation loss): it is returned on, bound
        to a name that is then backward()-ed (or one computed from it), handed to a call that
        may run backward, or used where this does not look."""
        statement = next((node for node in walk_code(owner) if isinstance(node, _SMALL_STATEMENTS)
                          and holds(node, call, into_functions=True)), None)
        if statement is None or isinstance(statement, cst.Return):
            return True  # a header (``for ... in f()``) or returned on: its users decide
        if isinstance(statement, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            targets = [t.target for t in statement.targets] \
                if isinstance(statement, cst.Assign) else [statement.target]
            return _backwarded(owner, {n for t in targets for n in _bound_names(t)}, chained=True)
        return any(isinstance(node, cst.Call) and node is not call and any(
            word in (last_name(node.func) or "").lower() for word in _FREEING_WORDS)
            or (isinstance(node, cst.Call) and node is not call and self.frees_in_file(node.func))
            for node in walk_code(statement))

    def accumulated_arguments(self, call: cst.Call, scope: Scope) -> List[tuple]:
        """(attribute, argument) for each argument of ``call`` that the method it calls adds
        into an attribute of its object: ``meter.update(loss, n)`` of a class of the file
        whose ``update(self, val, n=1)`` does ``self.sum += val * n`` (issue 28: the
        ``AverageMeter`` of every research repository, handed the loss with its graph)."""
        known = self._accumulated.get(id(call))
        if known is None:
            known = self._accumulated[id(call)] = self._accumulated_arguments(call, scope)
        return known

    def _accumulated_arguments(self, call: cst.Call, scope: Scope) -> List[tuple]:
        func = call.func
        if not isinstance(func, cst.Attribute):
            return []
        kind = self.kinds.kind_of(func.value, scope)
        if not isinstance(kind, K.Instance) or self.kinds.is_module(kind):
            return []
        method = self.kinds.find_method(kind.info, func.attr.value)
        if method is None or method.self_name is None:
            return []
        found = []
        for node in walk_code(method.node.body):
            if not (isinstance(node, cst.AugAssign) and isinstance(node.operator, _ACCUMULATING)
                    and isinstance(node.target, cst.Attribute)
                    and isinstance(node.target.value, cst.Name)
                    and node.target.value.value == method.self_name):
                continue
            for param in method.param_names:
                if param != method.self_name and reads_name(node.value, param):
                    argument = argument_for_parameter(call, method, param, bound=True)
                    if argument is not None:
                        found.append((node.target.attr.value, argument))
        return found

    def frees_in_file(self, func) -> bool:
        """A function or method of this file (by name) whose body calls backward."""
        name = last_name(func)
        if name is None:
            return False
        for info in self.analysis.collected.functions:
            if info.name == name and "backward" in self.code_of(info.node.body):
                return True
        return False

    def code_of(self, node: cst.CSTNode) -> str:
        """A node's source text, generated once per check (loops ask for the same function's
        many times: 805 generations for a 5,000-line script, a fifth of its lint)."""
        code = self._code.get(id(node))
        if code is None:
            code = self._code[id(node)] = code_for_node(
                node, self.analysis.module.default_indent, self.analysis.module.default_newline)
        return code


class _LoopWalk(OrderedWalk):
    """One loop body in the order it runs: ``placed`` holds the names whose value carries
    history made in this iteration (evidence: TENSOR or OUTPUT); ``grad`` whether grad records
    at the point reached."""

    def __init__(self, rule: AutogradGraphKeptAlive, loop, ctx: Ctx,
                 counting: bool = False, grad_evidence: Optional[str] = "") -> None:
        super().__init__()
        self.rule = rule
        self.loop = loop
        # a loop over anything but a loader (``range(n)``, a list, an iterator, ``while``):
        # only sums of tensors (``total += loss``) count; a list of its steps' outputs is how
        # an unrolled model (a decoder, an RNN over time steps) builds what it later runs
        # backward through
        self.counting = counting
        # how grad is known to be on ("" or the message's words); None: not proven, and the
        # loop is judged only if it calls backward() itself
        self.grad_evidence = grad_evidence
        self.scope = ctx.scope
        self.func = ctx.func
        self.grad = True
        self.candidates: List[tuple] = []  # (node, accumulator text, values, safe, summed)
        self.augmented: Dict[int, cst.AugAssign] = {}
        self.bound: Set[str] = set()  # accumulator texts the body binds other than by accumulating
        # the body runs backward (or hands a value with history to what may): the activations
        # are freed, the graph's nodes are not (GRAPH_NODES_KEPT)
        self.frees = False
        self.backwards = False  # the body calls backward (or ``autograd.grad``)
        self.accumulates = False  # the body has an accumulation of any kind
        self.draws = False  # the body draws batches from a data loader (``next(loader)``)
        self.loss: Optional[str] = None  # how a loss it computes with history is known

    # -- the body, once, before walking ---------------------------------------------------

    def _survey(self) -> None:
        # ``if k not in totals: totals[k] = 0.0`` starts an entry once; it resets nothing
        conditional = {id(n) for node in walk_code(self.loop.body) if isinstance(node, cst.If)
                       for n in walk_code(node.body) if isinstance(n, cst.Assign)}
        for node in walk_code(self.loop.body):
            if isinstance(node, cst.AugAssign):
                self.augmented[id(node.value)] = node
                if not isinstance(node.operator, _ACCUMULATING):
                    self._bind(node.target)
                else:
                    self.accumulates = True
            elif isinstance(node, cst.Assign):
                for target in node.targets:
                    if isinstance(target.target, cst.Subscript) and id(node) in conditional:
                        continue
                    if not _self_accumulation(target.target, node.value):
                        self._bind(target.target)
                    else:
                        self.accumulates = True
            elif isinstance(node, cst.Call):
                name = last_name(node.func)
                if name in ("append", "extend", "insert"):
                    self.accumulates = True
                elif name == "backward" or (name == "grad" and "autograd" in (
                        dotted_name(node.func) or "")):
                    self.backwards = True  # (a call: a name such as ``_backward_hooks`` is none)
                elif name == "next" and isinstance(node.func, cst.Name) and node.args and \
                        self.rule.kinds.kind_of(node.args[0].value, self.scope) is K.LOADER:
                    self.draws = True
                elif self.rule.accumulated_arguments(node, self.scope):
                    self.accumulates = True  # ``meter.update(loss)`` sums into ``meter.sum``
            elif isinstance(node, cst.AnnAssign):
                self._bind(node.target)
            elif isinstance(node, (cst.For, cst.CompFor)):
                self._bind(node.target)
            elif isinstance(node, cst.WithItem) and node.asname is not None:
                self._bind(node.asname.name)
            elif isinstance(node, cst.NamedExpr):
                self._bind(node.target)
            elif isinstance(node, (cst.Name, cst.Attribute)):
                name = last_name(node) or ""
                if "backward" in name or (name == "grad" and isinstance(node, cst.Attribute)
                                          and last_name(node.value) == "autograd"):
                    self.frees = True

    def _bind(self, target) -> None:
        text = _accumulator_text(target)
        if text is not None:
            self.bound.add(text)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)

    def run(self) -> Iterator[Violation]:
        self._survey()
        if not self.accumulates:
            return
        if not self.frees and self.grad_evidence is None:
            return  # grad not proven on, and no backward() here that needs it
        self.walk(self.loop.body.body if isinstance(self.loop.body, cst.IndentedBlock) else [])
        if not self.candidates:
            return
        if isinstance(self.loop, cst.For):
            loop = f"this loop over `{source_of(self.loop.iter)}`"
        else:
            loop = "this `while` loop"
        if self.counting:
            judged = self.judged()
            if judged is None:
                return
            loop += f" ({judged})"
        for node, accumulator, values, safe, summed in self.candidates:
            # (a list of tensors kept in a loop that runs backward() every step is no unrolled
            # model's: its backward is done)
            if self.counting and not (safe and (summed or self.frees)):
                continue
            if self._freed_later(accumulator, summed, values):
                continue
            shown = ", ".join(f"`{source_of(v)}`" for v in values)
            detached = ", ".join(f"`{call_on_text(source_of(v), v, '.detach()')}`" for v in values)
            if self.frees:
                message = self.rule.GRAPH_NODES_KEPT(
                    accumulator=accumulator, values=shown, loop=loop, detached=detached)
            else:
                message = self.rule.GRAPH_KEPT(
                    accumulator=accumulator, values=shown, loop=loop,
                    evidence=self.grad_evidence, detached=detached)
            yield Violation(node, message, fix=DetachFix(tuple(values), safe))

    def judged(self) -> Optional[str]:
        """Why a loop over anything but a data loader (``range(n)``, a list of batches, an
        iterator, ``while``) is judged, in words for the message, or None: it is not. Loops
        that sum other things are everywhere in numeric code; a loop is judged by what it does
        (issue 28): it runs backward(), computes a loss (``Analysis.loss_evidence``) or draws
        its batches from a data loader; else, the weaker evidence, its text names one."""
        if self.backwards:
            return "it runs backward()"
        if self.loss is not None:
            return f"it computes a loss: {self.loss}"
        if self.draws:
            return "it draws its batches from a data loader"
        if names_a_loss(self.rule.code_of(self.loop)):
            return "its text names a loss"
        return None

    # -- grad mode inside the body ------------------------------------------------------------

    def walk(self, statements) -> None:
        for statement in statements:
            if isinstance(statement, cst.For):
                # ``for name, value in loss_dict.items():`` / ``.values()``: each value is
                # one of the dict's, with its history
                self.expression(statement.iter)
                self.unbind(statement.target)
                value = _dict_value_target(statement)
                if value is not None and self.device_of(statement.iter.func.value):
                    self.place(value.value, TENSOR)
                self._suite(statement.body)
                continue
            if isinstance(statement, cst.With):
                mode = _grad_set_by(statement)
                if mode is not None:
                    mode = mode == GRAD_ON  # (set at run time: not proven on)
                    for item in statement.items:
                        self.expression(item.item)
                    saved, self.grad = self.grad, mode
                    self._suite(statement.body)
                    self.grad = saved
                    continue
            super().walk([statement])

    # -- what carries history ------------------------------------------------------------------

    def device_of(self, expr):
        if not self.grad and not isinstance(expr, cst.Name):
            return None
        if isinstance(expr, (cst.Tuple, cst.List)):
            return None
        if is_elementwise_comparison(expr):
            # ``(pred >= 0.5).float() == y``: a bool tensor, which autograd does not record
            # whatever its operands carry (rasbt's ``is_correct.mean()`` accumulated per epoch,
            # judged FALSE in the fifth sealed set)
            return None
        if isinstance(expr, cst.Dict):
            # ``losses = {"ce": F.cross_entropy(out, y), ...}``: its entries carry history
            # (a dict has no ``.detach()``: OUTPUT)
            return OUTPUT if any(isinstance(e, cst.DictElement) and self.device_of(e.value)
                                 for e in expr.elements) else None
        return super().device_of(expr)

    def attribute_device(self, attribute: cst.Attribute):
        if attribute.attr.value in _TENSOR_ATTRIBUTES:
            return TENSOR if self.device_of(attribute.value) else None
        return None

    def call_device(self, call: cst.Call):
        func = call.func
        scope = self.scope
        arguments = [a.value for a in call.args if not a.star]
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method == "forward" and self.rule.is_model(func.value, scope):
                return OUTPUT
            if method in _KEEPING_METHODS:
                if self.device_of(func.value):
                    return TENSOR
                if method in _BINARY_METHODS and self._any_history(arguments):
                    return TENSOR
                return None
        loss = self.rule.analysis.loss_evidence(func, scope)
        if loss is not None:
            if not self._any_history(arguments):
                return None
            if self.loss is None:
                self.loss = loss
            return TENSOR
        if self.rule.is_model(func, scope):
            ctx = self.rule.ctx_of_call(call)
            if ctx is not None and self.rule.analysis.grad_recording(ctx) is False:
                return None
            return OUTPUT
        qualified = self.rule.analysis.qualname(func, scope) or ""
        if qualified.startswith("torch."):
            tail = qualified.rpartition(".")[2]
            keeps = tail in _KEEPING_FUNCTIONS or (
                qualified.startswith("torch.nn.functional.") and tail not in _FUNCTIONAL_WITHOUT_HISTORY)
            return TENSOR if keeps and self._any_history(arguments) else None
        if isinstance(func, cst.Name) and func.value == "sum" and scope.resolve("sum") is None \
                and arguments:
            return TENSOR if self._sums_history(arguments[0]) else None
        return self._returned(call)

    def _returned(self, call: cst.Call):
        """What a plain function (or a plain class's method) of this file returns when ``call``
        calls it (issue 28:
        ``total += helper(loss)``, ``l = compute(model, batch)``): its body walked with each
        parameter holding what the call passes, then its ``return`` values traced."""
        callee = self.rule.kinds.kind_of(call.func, self.scope)
        bound = False
        if isinstance(callee, K.FuncRef) and callee.info.cls is None:
            info = callee.info
        else:
            # or a method of a plain class of the file called on its object (``loss =
            # self._train_step(batch)`` of ``return self._forward_step(batch)``, Amphion's
            # trainer, issue 28; a module's methods are its forward's business)
            receiver = self.rule.kinds.kind_of(call.func.value, self.scope) \
                if isinstance(call.func, cst.Attribute) else None
            info = self.rule.kinds.find_method(receiver.info, call.func.attr.value) \
                if isinstance(receiver, K.Instance) else None
            if info is None or info.self_name is None or \
                    self.rule.kinds.class_is_module(info.cls) is not False:
                return None
            bound = True
        if info.opaque_return or not info.returns \
                or id(info) in self.rule._returning or len(self.rule._returning) > 2:
            return None
        walk = _ReturnWalk(self.rule, info, self.grad)
        for name in info.param_names:
            if bound and name == info.self_name:
                continue
            argument = argument_for_parameter(call, info, name, bound=bound)
            if argument is not None:
                walk.place(name, self.device_of(argument))
        self.rule._returning.add(id(info))
        try:
            returned = walk.returned()
        finally:
            self.rule._returning.discard(id(info))
        if walk.loss is not None and self.loss is None:
            self.loss = f"`{info.name}` returns one ({walk.loss})"
        return returned

    def _any_history(self, exprs) -> bool:
        for expr in exprs:
            if isinstance(expr, (cst.List, cst.Tuple)):
                if any(not isinstance(e, cst.StarredElement) and self.device_of(e.value)
                       for e in expr.elements):
                    return True
            elif self.device_of(expr):
                return True
        return False

    def _sums_history(self, expr) -> bool:
        if isinstance(expr, (cst.List, cst.Tuple)):
            return self._any_history([expr])
        if isinstance(expr, (cst.GeneratorExp, cst.ListComp)):
            comp = expr.for_in
            if comp.inner_for_in is not None or not isinstance(comp.target, cst.Name):
                return False
            source = comp.iter
            if isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) \
                    and source.func.attr.value == "values" and not source.args:
                source = source.func.value
            return bool(self.device_of(source)) and any(
                isinstance(n, cst.Name) and n.value == comp.target.value for n in walk_code(expr.elt))
        return bool(self.device_of(expr))

    def assign(self, target, value, statement) -> None:
        if _self_accumulation(target, value):
            self._accumulating_sum(target, value)
        if isinstance(target, (cst.Tuple, cst.List)):
            if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements):
                for t, v in zip(target.elements, value.elements):
                    self.assign(t.value, v.value, statement)
                return
            # ``out, attn_loss, ratio = model(data)``: what each element is, the analysis does
            # not know (a model may return Python numbers, indices, masks beside its outputs)
            for element in target.elements:
                inner = element.value
                if isinstance(inner, cst.Name):
                    self.place(inner.value, None)
            return
        super().assign(target, value, statement)

    # -- accumulations ----------------------------------------------------------------------

    def expression(self, expr) -> None:
        aug = self.augmented.get(id(expr))
        if aug is not None and isinstance(aug.operator, _ACCUMULATING):
            accumulator = _accumulator_text(aug.target)
            if accumulator is not None and not self._rebound(accumulator):
                if isinstance(expr, (cst.List, cst.Tuple)):
                    values = self._held(expr)
                else:
                    values = [expr] if self.device_of(expr) else []
                if values:
                    self._candidate(aug, accumulator, values,
                                    summed=not isinstance(expr, (cst.List, cst.Tuple)))
        self._passed_to_freeing(expr)

    def call_statement(self, call: cst.Call) -> None:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "backward" \
                and isinstance(func.value, cst.Name):
            # ``loss.backward()``: backward needs a graph, so ``loss`` has one, whatever made it
            # (``loss, preds = net.loss_(...)``, pyg-team/pytorch_geometric's DGCNN example)
            self.place(func.value.value, TENSOR)
            return
        for attribute, argument in self.rule.accumulated_arguments(call, self.scope):
            accumulator = f"{source_of(func.value)}.{attribute}"
            values = self._held(argument)
            if values and not self._rebound(accumulator):
                self._candidate(call, accumulator, values)
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("append", "extend", "insert"):
            return
        receiver = func.value
        while isinstance(receiver, cst.Subscript):
            receiver = receiver.value  # ``preds[k].append(out)``
        accumulator = _accumulator_text(receiver)
        if accumulator is None or self._rebound(accumulator):
            return
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        item = positional[-1] if positional and (func.attr.value != "insert" or len(positional) == 2) \
            else None
        if item is None:
            return
        values = self._held(item)
        if values:
            self._candidate(call, source_of(func.value), values, summed=False)

    def _rebound(self, accumulator: str) -> bool:
        """The body binds the accumulator (or, for an entry ``totals[k]``, the whole dict)
        other than by accumulating: what it holds does not grow."""
        return accumulator in self.bound or _base_of(accumulator) in self.bound

    def _held(self, item) -> List[cst.BaseExpression]:
        """The parts of ``item`` that carry history (itself, or elements of a display)."""
        if isinstance(item, (cst.Tuple, cst.List, cst.Set)):
            return [v for e in item.elements if not isinstance(e, cst.StarredElement)
                    for v in self._held(e.value)]
        if isinstance(item, cst.Dict):
            return [v for e in item.elements if isinstance(e, cst.DictElement)
                    for v in self._held(e.value)]
        return [item] if self.device_of(item) else []

    def _accumulating_sum(self, target, value) -> None:
        accumulator = _accumulator_text(target)
        if accumulator is None or self._rebound(accumulator):
            return
        operands = _sum_operands(value)
        values = [o for o in operands if not o.deep_equals(target) and self.device_of(o)]
        if values:
            self._candidate(value, accumulator, values)

    def _candidate(self, node, accumulator: str, values, summed: bool = True) -> None:
        safe = all(self.device_of(v) == TENSOR for v in values)
        self.candidates.append((values[0], accumulator, tuple(values), safe, summed))

    def _passed_to_freeing(self, expr) -> None:
        """A value with history handed to something that may run backward on it (a function
        of this file that calls backward, a loss scaler, an optimiser step): the loop may free
        its activations there, as backward() in the body does (GRAPH_NODES_KEPT)."""
        if self.frees:
            return
        for node in walk_code(expr):
            if isinstance(node, cst.Call) and self._any_history([a.value for a in node.args]):
                name = (last_name(node.func) or "").lower()
                if any(word in name for word in _FREEING_WORDS) or self.rule.frees_in_file(node.func):
                    self.frees = True
                    return

    def _freed_later(self, accumulator: str, summed: bool, values=()) -> bool:
        """The accumulated value is backward()-ed after all (gradient accumulation), returned,
        or handed to an outer scope's code this rule cannot follow. Not returned for a caller
        to backward where the loop runs backward() on each value it adds (``loss.backward()``
        then ``epoch_sum_loss += loss``, Amphion's trainer, issue 28): a second backward
        through those graphs fails, so no caller does it."""
        code = self.func.node if self.func is not None else self.rule.analysis.module
        accumulator = _base_of(accumulator)
        name = accumulator.rpartition(".")[2]
        # one hop: ``loss = total / n`` then ``loss.backward()``
        if _backwarded(code, {name}, chained=False):
            return True
        if summed and self.func is not None and any(
                isinstance(node, cst.Return) and node.value is not None
                and _keeps(node.value, accumulator) for node in walk_code(self.func.node.body)) \
                and not self._backwarded_each_pass(values) \
                and self.rule.result_may_be_backwarded(self.func):
            return True  # the caller may backward() the total (a full-batch loss)
        if accumulator.startswith(("self.", "cls.")) and any(
                _backward_of(node, {name}, attribute=True)
                for node in walk_code(self.rule.analysis.module, into_functions=True)):
            return True
        return False


    def _backwarded_each_pass(self, values) -> bool:
        """Every one of ``values`` is a name the loop's body runs backward() on, without
        ``retain_graph`` (its graph is freed there)."""
        names = {v.value for v in values if isinstance(v, cst.Name)}
        if not values or len(names) != len(values):
            return False
        calls = [node for node in walk_code(self.loop.body) if isinstance(node, cst.Call)
                 and last_name(node.func) == "backward"
                 and not any(a.keyword is not None and a.keyword.value == "retain_graph"
                             for a in node.args)]
        return all(any(_backward_of(call, {name}) for call in calls) for name in names)


class _ReturnWalk(_LoopWalk):
    """The body of a plain function of the file, walked for what it returns to a call in
    the loop (``_LoopWalk._returned``), its parameters placed as that call's arguments."""

    def __init__(self, rule: AutogradGraphKeptAlive, info: FunctionInfo, grad: bool) -> None:
        super().__init__(rule, info.node, Ctx(info.scope, None, info, info.cls))
        self.grad = grad
        self.info = info

    def returned(self):
        body = self.info.node.body
        self.walk(body.body if isinstance(body, cst.IndentedBlock) else [])
        found = [self.device_of(value) for value, _ in self.info.returns]
        if found and all(found):
            return OUTPUT if OUTPUT in found else TENSOR
        return None


_SMALL_STATEMENTS = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Expr)


def _backwarded(code: cst.CSTNode, names: Set[str], chained: bool) -> bool:
    """Whether ``code`` runs ``backward()`` on one of ``names`` or on a name assigned from
    one of them (one hop: ``loss = total / n``); ``chained``: also on a name assigned from
    such a name, in the order the walk meets the assignments."""
    related = set(names)
    for node in walk_code(code, into_functions=True):
        if isinstance(node, cst.Assign) and any(
                reads_name(node.value, n) for n in (related if chained else names)):
            related.update(n for t in node.targets for n in _bound_names(t.target))
    return any(_backward_of(node, related) for node in walk_code(code, into_functions=True))


def _freezes_parameters(analysis: Analysis) -> bool:
    """``p.requires_grad_(False)`` or ``p.requires_grad = False`` anywhere in the file. The
    calls are the traversal's; the assignments are looked for only in a file whose text has
    one (torch's sources name ``requires_grad`` everywhere: walking each whole module for
    it was a tenth of TDL010's cost on its ``testing`` and ``_dynamo``)."""
    for site in analysis.collected.calls_by_name.get("requires_grad_", ()):
        if site.call.args and _is_false(site.call.args[0].value):
            return True
    if analysis.source is not None and not assigns_requires_grad_false(analysis.source):
        return False
    for node in walk_code(analysis.module, into_functions=True):
        if isinstance(node, cst.Assign) and _is_false(node.value) and any(
                isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad"
                for t in node.targets):
            return True
    return False


def _is_false(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def _bound_names(target) -> List[str]:
    """The last name of each target an assignment binds (``loss``, ``self.loss``)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _bound_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _bound_names(target.value)
    name = last_name(target)
    return [name] if name is not None else []


def _backward_of(node, words: Set[str], attribute: bool = False) -> bool:
    """``node`` runs backward on a value computed from one named by ``words``:
    ``word.backward()``, ``word.mean().backward()``, ``scaler.scale(word).backward()``,
    ``backward(word)``, ``torch.autograd.backward([word])``; with ``attribute``, only through
    an attribute of that name (``self.word.backward()``)."""
    if not isinstance(node, cst.Call) or last_name(node.func) != "backward":
        return False
    if attribute:
        return isinstance(node.func, cst.Attribute) and any(
            isinstance(n, cst.Attribute) and n.attr.value in words
            for n in walk_code(node.func.value))
    parts = [arg.value for arg in node.args]
    if isinstance(node.func, cst.Attribute):
        parts.append(node.func.value)
    return any(isinstance(n, cst.Name) and n.value in words
               for part in parts for n in walk_code(part))


def _grad_set_by(statement: cst.With) -> Optional[str]:
    """The grad mode the first of ``statement``'s items that sets one sets."""
    return next((mode for mode in (grad_mode_set_by(item.item) for item in statement.items)
                 if mode is not None), None)


def _accumulator_text(target) -> Optional[str]:
    """``total``, ``self.total``, or an entry of one (``totals[k]``, ``self.losses["ce"]``,
    issue 28), as written."""
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
            and target.value.value in ("self", "cls"):
        return dotted_name(target)
    if isinstance(target, cst.Subscript) and _accumulator_text(target.value) is not None:
        return source_of(target)
    return None


def _base_of(accumulator: str) -> str:
    """``totals`` of ``totals[k]``: the name an entry belongs to."""
    return accumulator.partition("[")[0]


def _dict_value_target(loop: cst.For) -> Optional[cst.Name]:
    """The name a ``for`` over ``d.items()`` (``for k, v in ...``) or ``d.values()`` binds
    to each value; None for any other loop."""
    iterable = loop.iter
    if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute)
            and not iterable.args):
        return None
    method, target = iterable.func.attr.value, loop.target
    if method == "values" and isinstance(target, cst.Name):
        return target
    if method == "items" and isinstance(target, (cst.Tuple, cst.List)) \
            and len(target.elements) == 2 and isinstance(target.elements[1].value, cst.Name):
        return target.elements[1].value
    return None


def _sum_operands(value) -> List[cst.BaseExpression]:
    """``a + b - c`` -> [a, b, c]; anything else -> [value]."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Subtract)):
        return _sum_operands(value.left) + _sum_operands(value.right)
    return [value]


def _self_accumulation(target, value) -> bool:
    """``total = total + x`` (``x + total``, ``total + a - b``; also ``self.total``,
    ``totals[k]``)."""
    if _accumulator_text(target) is None:
        return False
    operands = _sum_operands(value)
    return len(operands) > 1 and any(o.deep_equals(target) for o in operands)


_DROPPING_METHODS = api.HISTORY_DROPPING_METHODS
_DROPPING_BUILTINS = api.HISTORY_DROPPING_BUILTINS


def _keeps(expr, accumulator: str) -> bool:
    """Whether ``expr`` hands on the accumulated value with its history (not ``.item()``)."""
    if isinstance(expr, (cst.Name, cst.Attribute)) and dotted_name(expr) == accumulator:
        return True
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in _DROPPING_METHODS:
            return False
        if isinstance(func, cst.Name) and func.value in _DROPPING_BUILTINS:
            return False
    return any(_keeps(child, accumulator) for child in iter_children(expr))


def _switches_grad_unseen(body) -> bool:
    """Whether ``body`` names a grad-mode switch other than as a ``with`` item that fixes the
    mode (``with torch.no_grad():``, which the analysis follows): ``set_grad_enabled(train)``,
    ``ctx = torch.no_grad() if ... else nullcontext()``, a switch called as a statement."""
    named = [node for node in walk_code(body) if isinstance(node, (cst.Name, cst.Attribute))
             and last_name(node) in api.GRAD_MODE_SWITCHES]
    if not named:
        return False  # (most functions: the walk for ``with`` items is spared)
    fixed = set()
    for node in walk_code(body):
        if isinstance(node, cst.With) and _grad_set_by(node) is not None and not any(
                grad_mode_set_by(item.item) == GRAD_RUNTIME for item in node.items):
            for item in node.items:
                fixed.update(id(n) for n in walk_code(item.item))
    return any(id(node) not in fixed for node in named)
