"""TDL001: the result of a tensor move is thrown away.

Fix: ``x.to(d)`` -> ``x = x.to(d)``: safe when ``x`` is a plain name bound in the scope of the
statement. A name from an enclosing function or the module gets no fix: assigning it would make
it local to the function (UnboundLocalError on the read). ``self.buf.to(d)`` ->
``self.buf = self.buf.to(d)`` is unsafe: assigning a plain tensor over an ``nn.Parameter``
attribute raises TypeError. ``batch["input"].cuda()`` in a loop that uses the batch ->
``batch["input"] = batch["input"].cuda()`` is unsafe too: a tuple batch has no item
assignment. Any other receiver (``loss.detach().cpu()``) gets no fix.
"""

from __future__ import annotations

from dataclasses import dataclass

from typing import Iterator, Optional

import libcst as cst

from torchdevlint.analysis import (
    K, Analysis, CallSite, api, argument_for_parameter, dotted_name, root_name, string_value,
    walk_code,
)
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext
from torchdevlint.fixes.model import Edit, Fix, FixPlan
from torchdevlint.rules.base import Message, Rule, Violation, method_call_text, source_of
from torchdevlint.rules.prefilter import MOVE_METHODS, move_statement_in


@dataclass
class DiscardedMove(FixPlan):
    """The discarded move, and whether its receiver is an item of a batch
    (``batch["input"]``), which the fix may assign like a name. ``receiver``: the name a
    discarded call of a function that returns a move of it leaves in place
    (``normalize(x, device)``), else None (the move's own receiver)."""

    site: CallSite
    batch_item: bool
    receiver: Optional[cst.BaseExpression] = None

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        """``x.to(d)`` -> ``x = x.to(d)`` (see the module docstring for its safety)."""
        site = self.site
        func = site.call.func
        if self.receiver is not None:
            receiver = self.receiver
        elif isinstance(func, cst.Attribute):
            receiver = func.value
        else:
            return None
        if site.statement is None:
            return None
        scope = site.ctx.scope
        if isinstance(receiver, cst.Name):
            name = receiver.value
            if not _bound_here(name, scope):
                return None
            safe = True
        elif isinstance(receiver, cst.Attribute):
            name = dotted_name(receiver)
            if name is None:
                return None
            safe = False
        elif isinstance(receiver, cst.Subscript) and self.batch_item:
            name = ctx.text(receiver)
            safe = False  # a tuple batch has no item assignment
        else:
            return None
        if isinstance(site.statement, cst.Expr) and isinstance(site.statement.value, cst.Tuple):
            # ``x.to(d), y.to(d)`` -> ``x, y = x.to(d), y.to(d)``: every element a move of a
            # local name (each finding's fix is this one edit; the first applied is enough)
            together = _tuple_of_local_moves(site)
            if together is None:
                return None
            names, moves = together
            start = ctx.span(moves)[0]
            return Fix(finding.code, safe, f"assign the moved tensors back to `{names}`",
                       (Edit(start, start, f"{names} = "),))
        start = ctx.span(site.call)[0]
        return Fix(finding.code, safe, f"assign the moved tensor back to `{name}`",
                   (Edit(start, start, f"{name} = "),))


def _tuple_of_local_moves(site: CallSite):
    """("x, y", the tuple) when the statement of ``site`` is a tuple every element of which is
    a move of a distinct plain name of its scope (``x.to(d), y.to(d)``), else None."""
    statement = site.statement
    if not isinstance(statement, cst.Expr) or not isinstance(statement.value, cst.Tuple):
        return None
    names = [_moved_local(element.value, site.ctx.scope) for element in statement.value.elements]
    if any(name is None for name in names) or len(set(names)) != len(names):
        return None
    return ", ".join(names), statement.value


def _moved_local(expr, scope) -> Optional[str]:
    """``x`` of ``x.to(d)`` / ``x.cuda()`` / ``x.cpu()`` when ``x`` is a plain name of
    ``scope`` itself, else None."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and \
            expr.func.attr.value in api.MOVE_METHODS and \
            isinstance(expr.func.value, cst.Name):
        name = expr.func.value.value
        if _bound_here(name, scope):
            return name
    return None


def _bound_here(name: str, scope) -> bool:
    """``name`` is a variable of ``scope`` itself (not global, nonlocal or an outer one's):
    assigning the moved tensor back to it rebinds what the statement's receiver was."""
    return scope.resolve(name) is scope and name not in scope.global_names \
        and name not in scope.nonlocal_names


class DiscardedTensorMove(Rule):
    """
    ## What it does
    Reports an expression statement whose value is `R.to(...)`, `R.cuda(...)` or `R.cpu()` (or a
    tuple of such: `x.to(device), y.to(device)`, issue 28) when
    `R` is known to be a `torch.Tensor`: bound from a torch function that returns a tensor
    (`torch.tensor`, `torch.randn`, `torch.from_numpy`, `torch.cat`, `torch.nn.functional.*`, ...),
    from a tensor method (`unsqueeze`, `view`, `float`, `detach`, ...) or arithmetic on tensors,
    the output of a module or a loss, a value unpacked from iterating a data loader, a parameter
    annotated `torch.Tensor`, a `self` attribute the class assigns a tensor (including
    `register_buffer`), the return value of a function or method in the same file (also through
    tuple unpacking; a name it returns is judged by the assignments that reach the `return`:
    `x = np.asarray(x); x = torch.from_numpy(x); return x` returns a tensor, and so does `if x
    is not None: x = torch.from_numpy(x)` before `return x`, as `Optional[Tensor]` would, since
    `.to()` of None fails anyway; coqui-ai/TTS's `id_to_torch`, issue 28), or a closure variable
    bound to a tensor.

    It also reports a call, as a statement, of a plain function of the same file whose every
    `return` is a move of one of its parameters (`def to_device(t, device): return
    t.to(device)`, also `return batch["x"].cuda()`), when the argument is such a tensor: the
    moved copy is thrown away just the same (issue 28; the message names the function and the
    move it returns, and `--fix` assigns the result back to a plain name).

    It also reports `batch["input"].cuda()` and `batch.x.to(device)` (a string key or an attribute
    of a data-loader batch) inside the loop over that loader, when the loop feeds the batch or
    parts of it to a module, or moves other parts of it and keeps the result.

    ## Why is this bad
    `Tensor.to()`, `Tensor.cuda()` and `Tensor.cpu()` return a **new** tensor and leave the
    receiver where it was. A bare `x.to(device)` does nothing; the next operation that mixes `x`
    with tensors on the device fails:

    ```
    RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
    ```

    or, from a matrix product such as `nn.Linear`'s, naming the argument that is elsewhere:

    ```
    RuntimeError: Expected all tensors to be on the same device, but got mat1 is on cpu, different from other tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm)
    ```

    On the `meta` device, which plays the GPU in this project's runtime tests, the same bug reads:

    ```
    RuntimeError: Tensor on device meta is not on the expected device cpu!
    ```

    (`nn.Module.to()` is different: it moves the module's parameters in place, so a bare
    `model.to(device)` is correct and is never reported.)

    ## Example
    ```python
    images = torch.randn(8, 3, 32, 32)
    images.to(device)
    logits = model(images)
    ```

    ## Use instead
    ```python
    images = torch.randn(8, 3, 32, 32)
    images = images.to(device)
    logits = model(images)
    ```

    ## Fix safety
    `--fix` assigns the moved tensor back to the receiver: `x.to(device)` becomes
    `x = x.to(device)` (likewise `.cuda()` and `.cpu()`). A tuple statement of moves of local
    names becomes one assignment, `x, y = x.to(device), y.to(device)`; a tuple with anything
    else in it gets no fix.

    - **Safe** when the receiver is a plain name bound in the same scope as the statement (a
      local variable or parameter of that function, or a module-level name moved at module level).
    - **Unsafe** (applied only with `--unsafe-fixes`) when the receiver is an attribute:
      `self.buf.to(device)` becomes `self.buf = self.buf.to(device)`. That is right for a plain
      tensor attribute, but if the attribute is an `nn.Parameter`, assigning a plain tensor over it
      raises `TypeError`, and a registered buffer is better moved with the module. Likewise an
      item of a batch: `batch["input"].cuda()` becomes `batch["input"] = batch["input"].cuda()`,
      right for a dict or a `BatchEncoding`, a `TypeError` for a tuple.
    - **No fix** when the name comes from an enclosing function or is declared `global` or
      `nonlocal`: assigning it would make it local to the function and the read before it would
      raise `UnboundLocalError`. Also none when the receiver is an expression that cannot be
      assigned (`loss.detach().cpu()`, `x[0].to(device)` outside a batch).

    ## Known limits
    The rule reports only receivers it can prove are tensors. It stays silent on `nn.Module`
    instances and subclasses (through any depth of classes in the file, `LightningModule`,
    torchmetrics metrics, `torchvision.models.*`, `X.from_pretrained(...)`), on items of
    `nn.ModuleList`/`ModuleDict`/`Sequential`, on Hugging Face tokenizer and processor outputs
    (`BatchEncoding.to()` moves in place), on a whole loader item that is not unpacked (it may be a
    `BatchEncoding` or a PyG `Batch`, both moved in place), on objects of other classes that happen
    to have `.to()` or `.cpu()`, and on anything whose kind it cannot tell. A name is judged by the
    definitions that reach the move: the last assignment before it in the same function (and
    earlier ones while that one sits in a branch the move is not under, and later ones in a loop
    around the move unless an assignment in the loop runs before the move on every pass: a tensor
    made and then "moved" in one branch of an `if`/`elif` inside a loop is reported though another
    branch binds the name to `None`), so `x = torch.zeros(3); x.to(d); x = other()` is reported and
    `if a: x = torch.zeros(3) else: x = other()` followed by `x.to(d)` is not. An unannotated
    parameter is a tensor when the function itself uses it as only a tensor is used (`x.shape`,
    `x.view(...)`, `x[...]`, `torch.cat([x, ...])`). An attribute the function has just replaced
    with something that is not a tensor (bitsandbytes' `self.linear.weight = Params4bit(...)`,
    whose `.cuda()` quantizes in place) is not reported; a `Union[str, Tensor]` parameter
    narrowed by `isinstance` is not yet recognised.
    """

    # The kind of finding (its message, as data; the report fills the fields).
    DISCARDED = Message("result of `{name}.{method}()` is discarded: Tensor.{method}() returns "
                        "a new tensor and leaves `{name}` where it was; {advice}")
    # a call of a function of the file that returns a move of what it is given (issue 28)
    DISCARDED_THROUGH = Message(
        "result of `{call}` is discarded: `{function}` returns `{move}`, a new tensor, and "
        "leaves `{name}` where it was; {advice}")

    code = "TDL001"
    fixable = True
    facts = frozenset(("kinds", "placement", "project"))
    valid = (
        # a module moves in place
        "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.to('cpu')\n",
        # not known to be a tensor, and called like a module
        "import torch\n\n\ndef run(net, x):\n    net.to('cpu')\n    return net(x)\n",
        # Hugging Face BatchEncoding.to() moves in place
        "from transformers import AutoTokenizer\n"
        "batch = AutoTokenizer.from_pretrained('m')(['a'], return_tensors='pt')\n"
        "batch.to('cpu')\n",
    )
    invalid = (
        ("import torch\nx = torch.ones(2)\nx.to('cpu')\n", ((3, 1),)),
        ("import torch\n\n\ndef f(t: torch.Tensor):\n    t.cuda()\n    return t\n", ((5, 5),)),
        # only a torch tensor has unsqueeze: whatever tfms returns, img is a tensor
        ("import torch\n\n\ndef f(tfms, im, device):\n    img = tfms(im).unsqueeze(0)\n"
         "    img.to(device)\n    return img\n", ((6, 5),)),
    )
    name = "discarded-tensor-move"
    summary = "Result of Tensor.to()/.cuda()/.cpu() is discarded; the tensor does not move"
    required_text = method_call_text(*MOVE_METHODS)

    required_calls = MOVE_METHODS
    could_report_in = staticmethod(move_statement_in)

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        calls = analysis.collected.calls_by_name
        for method in MOVE_METHODS:
            for site in calls.get(method, ()):
                if site.statement is None or not isinstance(site.call.func, cst.Attribute):
                    continue
                receiver = site.call.func.value
                batch_item = _batch_item_in_use(analysis, receiver, site)
                if not batch_item and not _is_tensor_here(analysis, receiver, site):
                    continue
                name = source_of(receiver)
                together = _tuple_of_local_moves(site)
                if together is not None:  # ``x.to(d), y.to(d)``: the fix assigns them at once
                    names, moves = together
                    advice = f"assign them (`{names} = {source_of(moves, 80)}`)"
                elif isinstance(receiver, (cst.Name, cst.Attribute)) or batch_item:
                    advice = f"assign it (`{name} = {source_of(site.call, 60)}`)"
                else:  # ``loss.detach().cpu()``: nothing to rebind, the statement does nothing
                    advice = "use the result or remove the statement"
                yield Violation(
                    site.call,
                    self.DISCARDED(name=name, method=method, advice=advice),
                    fix=DiscardedMove(site, batch_item),  # --fix rebinds the receiver
                )
        yield from self._discarded_through_helpers(analysis)

    def _discarded_through_helpers(self, analysis: Analysis) -> Iterator[Violation]:
        """``to_device(x, device)`` as a statement, where ``to_device`` is a plain function
        of this file whose every return is a move of its parameter (``return t.to(device)``,
        ``return batch["x"].cuda()``: ``CalleeSummary.moves``): the moved copy is thrown
        away as a bare ``x.to(device)`` throws it away. Judged as a move of the argument
        (the same receiver the function moves) would be."""
        calls = analysis.collected.calls_by_name
        self._made = []  # receivers written for the caller: kept alive while kinds caches them
        for info in analysis.collected.functions:
            if info.cls is not None or not calls.get(info.name) or not any(
                    isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                    and value.func.attr.value in api.ACCELERATOR_MOVE_METHODS
                    for value, _ in info.returns):
                continue
            for site in calls[info.name]:
                if site.statement is None or \
                        analysis.helper_called(site.call, site.ctx.scope) is not info:
                    continue
                summary = analysis.callee_summary(info)
                for parameter, move in summary.moves.items():
                    argument = argument_for_parameter(site.call, info, parameter)
                    if argument is None:
                        continue
                    receiver = _in_caller(move.func.value, parameter, argument)
                    if receiver is None:
                        continue
                    self._made.append(receiver)
                    batch_item = _batch_item_in_use(analysis, receiver, site)
                    if not batch_item and not _is_tensor_here(analysis, receiver, site):
                        continue
                    name = source_of(receiver)
                    bare = receiver is argument and isinstance(argument, (cst.Name, cst.Attribute))
                    call_text = source_of(site.call, 60)
                    advice = f"assign it (`{name} = {call_text}`)" if bare else \
                        "use the result or remove the statement"
                    yield Violation(
                        site.call,
                        self.DISCARDED_THROUGH(call=call_text, function=info.name,
                                               move=source_of(move, 60), name=name,
                                               advice=advice),
                        fix=DiscardedMove(site, False, argument) if bare else None)
                    break


def _in_caller(receiver, parameter: str, argument):
    """The callee's ``receiver`` (``t``, ``batch["x"]``, ``self.scale``: rooted at
    ``parameter``) as the caller's ``argument`` makes it; None for any other shape."""
    if isinstance(receiver, cst.Name):
        return argument if receiver.value == parameter else None
    if isinstance(receiver, (cst.Attribute, cst.Subscript)) and \
            isinstance(receiver.value, cst.Name) and receiver.value.value == parameter and \
            isinstance(argument, (cst.Name, cst.Attribute)):
        return receiver.with_changes(value=argument)
    return None


def _is_tensor_here(analysis: Analysis, receiver, site: CallSite) -> bool:
    """Whether ``receiver`` holds a tensor at the move: judged by the definitions that reach
    it; an unannotated parameter the function itself uses as a tensor; an attribute is not
    a tensor when the function has just replaced it with something else (bitsandbytes'
    ``self.linear.weight = Params4bit(...)``, whose ``.cuda()`` works in place)."""
    if isinstance(receiver, cst.Name):
        kind = analysis.kind_at(receiver, site)
        if kind is K.TENSOR:
            return True
        if kind is not K.UNKNOWN:
            return False  # a module, a loader item (BatchEncoding, PyG Batch), a number...
        if not site.ctx.scope.lookup(receiver.value):
            return False  # bound nowhere in the file (a star import, another cell): unseen
        if _built_by_a_project_class(analysis, receiver, site):
            return False  # ``maml = l2l.algorithms.MAML(model)``: an object of the project's
        body = site.ctx.func.node.body if site.ctx.func is not None else analysis.module
        return _used_only_as_tensor(analysis, receiver.value, body, site.ctx.scope)
    if not analysis.kinds.is_tensor(receiver, site.ctx.scope):
        return False
    target = dotted_name(receiver)
    if target is not None and "." in target and site.ctx.func is not None:
        replaced = _last_assignment_before(site.ctx.func.node.body, target, site.call)
        if replaced is not None and analysis.kind_of(replaced, site.ctx.scope) is not K.TENSOR:
            return False
    return True


def _built_by_a_project_class(analysis: Analysis, receiver: cst.Name, site: CallSite) -> bool:
    """Every assignment of ``receiver`` calls a class of another file of the project (the
    project index; learn2learn's ``MAML``, an ``nn.Module`` whose ``.to()`` works in place)."""
    bindings = analysis.placement.bindings_of(receiver, site.ctx.scope)
    return bool(bindings) and all(
        not path and isinstance(value, cst.Call)
        and (analysis.qualname(value.func, scope) or "") != ""
        and analysis.project_class(analysis.qualname(value.func, scope))
        for value, scope, path, _ in bindings)


def _batch_item_in_use(analysis: Analysis, receiver, site: CallSite) -> bool:
    """``batch["input"].cuda()`` or ``batch.x.to(device)`` as a statement, in a loop over a
    data loader that feeds ``batch`` (or parts of it) to a module or moves other parts of it
    with their result kept: the item is a tensor the loop means to use on the device, and the
    copy is thrown away. Only string keys and attributes: ``batch[0]`` of a PyG ``Batch`` is
    a ``Data`` object, whose ``.cuda()`` works in place."""
    if isinstance(receiver, cst.Subscript):
        if len(receiver.slice) != 1 or not isinstance(receiver.slice[0].slice, cst.Index) or \
                string_value(receiver.slice[0].slice.value) is None:
            return False
    elif not isinstance(receiver, cst.Attribute):
        return False
    root = root_name(receiver)
    loop = site.loop
    if root is None or loop is None or analysis.kind_at(root, site) is not K.BATCH:
        return False

    def from_batch(expr) -> bool:
        named = root_name(expr)
        return named is not None and named.value == root.value

    for sites in analysis.collected.calls_by_name.values():
        for other in sites:
            if other is site or not loop.start < other.order < loop.end or \
                    other.ctx.func is not site.ctx.func:
                continue
            func = other.call.func
            if isinstance(func, cst.Attribute) and func.attr.value in MOVE_METHODS:
                if other.statement is None and from_batch(func.value):
                    return True  # ``x = batch["x"].to(device)``: the loop moves the batch
            elif any(from_batch(arg.value) for arg in other.call.args) and \
                    analysis.kinds.is_module(analysis.kind_of(func, other.ctx.scope)):
                return True  # ``model(batch["input"])`` / ``model(**batch)``
    return False


_TENSOR_ONLY_METHODS = api.TENSOR_RECEIVER_METHODS
_TENSOR_ONLY_ATTRIBUTES = api.TENSOR_RECEIVER_ATTRIBUTES
# Everything a tensor has that code reaches by attribute; a use of any other attribute
# (``data.x``, ``model.eval()``, ``batch.input_ids``) means the value is something else.
_TENSOR_API = api.TENSOR_MEMBERS


def _used_only_as_tensor(analysis: Analysis, name: str, body, scope) -> bool:
    """Where the analysis cannot tell what ``name`` holds (``fabric.broadcast(...)``, an
    unannotated parameter, an item of an unknown iterable), its uses in the function can:
    at least one that only a tensor allows (``x.shape``, ``x.view(...)``, ``x[...]``,
    ``torch.cat([x, ...])``, an argument of a module) and none that a tensor does not (a call
    ``x(...)``, an attribute tensors lack: ``data.x``, ``model.eval()``). A module moved with
    a bare ``model.cuda()`` is called or has its parameters taken; a PyG ``Data`` has ``.x``."""
    evidence = False
    for node in walk_code(body):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                and node.value.value == name:
            attr = node.attr.value
            if attr not in _TENSOR_API:
                return False
            evidence = evidence or attr in _TENSOR_ONLY_ATTRIBUTES or attr in _TENSOR_ONLY_METHODS
        elif isinstance(node, cst.Call):
            if isinstance(node.func, cst.Name) and node.func.value == name:
                return False  # called: a module or a function
            if any(arg.star and isinstance(arg.value, cst.Name) and arg.value.value == name
                   for arg in node.args):
                return False  # ``f(*x)`` / ``f(**x)``: a sequence or a mapping
            named = [arg.value for arg in node.args
                     if isinstance(arg.value, cst.Name) and arg.value.value == name]
            if named and _takes_tensors(analysis, node, scope, name):
                evidence = True
        elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) \
                and node.value.value == name:
            evidence = True
    return evidence


def _takes_tensors(analysis: Analysis, call: cst.Call, scope, name: str) -> bool:
    """``model(x)`` with a module, ``torch.cat([x, y])``, ``F.relu(x)``."""
    if analysis.kinds.is_module(analysis.kind_of(call.func, scope)):
        return True
    if api.is_tensor_function(analysis.qualname(call.func, scope) or ""):
        return bool(call.args) and isinstance(call.args[0].value, cst.Name) and \
            call.args[0].value.value == name
    return False


def _last_assignment_before(body, target: str, stop):
    """The value last assigned to the dotted ``target`` before ``stop`` in ``body``."""
    value = None
    for node in walk_code(body):
        if node is stop:
            return value
        if isinstance(node, cst.Assign) and any(
                dotted_name(t.target) == target for t in node.targets):
            value = node.value
    return value


