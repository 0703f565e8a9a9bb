"""TDL004: a loop feeds data-loader batches to a model on a device without moving them.

Fix: move each unmoved batch value at the start of the loop body (after the statement that
draws it, for a batch drawn by ``next(iter(loader))`` outside a loop).
``x = x.to(<device>)`` goes first in the loop body, or right after the statement that unpacks
the batch when that happens in the body. What follows ``x = `` is the text the rule's message
proposes (the rule chooses it, so the two cannot disagree): ``<device>`` is the expression the
model was moved with when it can be written at that point (a plain name or attribute chain,
bound in the same function or module), else ``next(model.parameters()).device``. Safe when
the value is known to be a tensor; unsafe otherwise (a list of strings has no ``.to()``). A batch fed as
``**batch`` becomes ``{k: v.to(<device>) for k, v in batch.items()}``: unsafe, since values
that are not tensors would fail. One-line loop bodies get no fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional

import libcst as cst

from torchdevlint.analysis import (
    ASSIGN, K, Analysis, Ctx, OrderedWalk, Scope, api, copied_to_host,
    dotted_name, iter_children, last_name,
    is_device_name, names_a_length, root_name, says_it_fails, string_value, unpacked_element,
    walk_code,
)
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext
from torchdevlint.fixes.model import Edit, Fix, FixPlan
from torchdevlint.rules.base import (
    CUDA_TENSOR_TYPE_TEXT, Message, Rule, Violation, method_call_text, source_of,
)

SAME_DEVICE = "RuntimeError: Expected all tensors to be on the same device"
_FROM_LOADER = "`{name}` comes from the data loader on the CPU and "
_NOT_MOVED = " without being moved: " + SAME_DEVICE + "; move it first (`{name} = {proposed}`)"
_PUT = "`{partner}`, which this loop put on a device,"
LIGHTNING_STEPS = frozenset(
    "training_step validation_step test_step predict_step on_train_batch_start".split())
_PREPARING_PACKAGES = ("accelerate", "lightning.fabric", "lightning.Fabric", "lightning_fabric")
# A batch value's attributes that are no data (its size, dtype, device): what is built from
# them is Python ints and flags, on no device (issue 28: CSAIL's ``segSize = (img.shape[0],
# img.shape[1])`` handed to the model, pytorch-forecasting's ``n = x.shape[0]`` compared in
# ``pred.shape == (n, ...)``).
_METADATA_ATTRIBUTES = api.NON_TENSOR_TENSOR_ATTRIBUTES | api.DEVICE_ATTRIBUTES


@dataclass
class UnmovedBatchFix(FixPlan):
    """What --fix needs to insert ``name = name.to(device)``."""

    loop: Optional[cst.For]  # None: one batch drawn by ``next(iter(loader))``
    name: str
    after: Optional[cst.CSTNode]  # the body statement that unpacks the value, None: loop target
    device: Optional[cst.BaseExpression]  # the expression the model was moved with
    model: cst.BaseExpression
    is_mapping: bool  # fed as **name: a dict of tensors
    # What the message proposes and the fix writes after ``name = ``; None: no fix (no device
    # expression that means the same at the loop).
    moved: Optional[str]
    scope: Optional[Scope] = None  # (of a batch drawn outside a loop)

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        if self.moved is None:
            return None
        if self.loop is None:
            scope = self.scope
        else:
            loop_ctx = ctx.loop_ctx(self.loop)
            body = self.loop.body
            if loop_ctx is None or not isinstance(body, cst.IndentedBlock) or not body.body:
                return None
            scope = loop_ctx.scope
        if self.after is None:
            anchor = body.body[0]
            offset = ctx.span(anchor)[0]
        else:
            anchor = self.after
            if not isinstance(anchor, cst.SimpleStatementLine):
                return None
            offset = ctx.span(anchor)[1]
        if not ctx.at_line_start(offset):
            return None
        name = self.name
        # a dict of anything is not known to hold only tensors
        safe = not self.is_mapping and ctx.analysis.kinds.name_kind(name, scope) is K.TENSOR
        line = f"{ctx.indent(anchor)}{name} = {self.moved}{ctx.newline}"
        where = " in the loop" if self.loop is not None else ""
        return Fix(finding.code, safe, f"move `{name}`{where}: `{name} = {self.moved}`",
                   (Edit(offset, offset, line),))


@dataclass
class _Value:
    moved: bool
    after: Optional[cst.CSTNode]
    is_mapping: bool = False


class UnmovedBatch(Rule):
    """
    ## What it does
    Reports a `for` loop over a data loader (however wrapped: `enumerate`, `tqdm`, `zip`, `iter`,
    also through a name bound to the wrapper, `pbar = tqdm(enumerate(loader))`) whose body feeds a batch value into a model that was moved to a device, without moving the
    value first. Batch values are the loop targets and the names unpacked from them in the body
    (`x, y = batch`, `x = batch["pixels"]`, `y = Variable(y)`: the wrapper of torch before 0.4
    returns the tensor itself), what a function of the file gives back of one without moving it
    (`x = normalize(x)`, `images, labels = preprocess(batch)`:
    `Placement.returned_argument`), also when passed as `**batch`; `x.type(Tensor)` of a CUDA
    tensor type (`Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`) moves `x`,
    as `x.cuda()` does. What is read off a batch value's size, dtype or device (`n =
    x.shape[0]`, `seg_size = (img.shape[0], img.shape[1])`) is Python ints, no batch value.
    Sinks are a call of
    the moved model (`model(x)`, `model.forward(x)`), a loss or criterion (`criterion(out, y)`,
    `F.cross_entropy(out, y)`, an `nn.*Loss` instance) and a comparison with a model output
    (`(pred == y)`), the latter two only in loops that run a moved model, or where the other
    operand is a value the loop itself put on a device: when the loop moves `images` but not
    `target`, `criterion(model(images), target)`, `pred == target`, `pred.eq(target)` and
    `output - target` fail whatever the model is (a function parameter, wrapped in
    `DistributedDataParallel`), so the loop's own moves are the evidence; a move to the device a
    trainer object holds (`self.model(x.to(self.device))`) is one, a move to wherever another
    value is (`y.to(out.device)`) is not. A model is moved by
    `model.to(device)`, `model.cuda()`, `model = Net().to(device)` or `self.model.to(device)`.
    Each unmoved value is reported once, at its first use.

    One batch drawn outside a loop counts as a loop's batch: `images, labels =
    next(iter(test_loader))` (also `it = iter(loader)` and `next(it)` or `it.next()`), followed
    in the same block by `net(images)` (issue 28: the tutorials' "look at a few test
    predictions" step after training on the GPU). The statements after the draw are read as a
    loop body is. A value copied back to the host (`out.argmax(1).cpu()`) is no output on the
    device: comparing it with a CPU label works.

    A data loader is a `DataLoader(...)`, a name or attribute whose name contains `loader`, an
    item of one so named (`dataloaders[phase]`, the transfer-learning tutorial's dict of
    loaders, issue 28), or a call such as `self.train_dataloader()`.

    ## Why is this bad
    The model's weights are on the accelerator and the batch is still on the CPU, where the loader
    produced it. The first operation that mixes them fails:

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

    ## Example
    ```python
    model = Net().to(device)
    for images, labels in train_loader:
        loss = criterion(model(images), labels)
    ```

    ## Use instead
    ```python
    model = Net().to(device)
    for images, labels in train_loader:
        images = images.to(device)
        labels = labels.to(device)
        loss = criterion(model(images), labels)
    ```

    ## Fix safety
    `--fix` moves each unmoved value at the start of the loop body (or right after the statement
    that unpacks the batch, when that happens in the body, or that draws it with
    `next(iter(loader))`): `inputs = inputs.to(device)`, where
    `device` is the expression the model was moved with, if it is a plain name or attribute chain
    that means the same thing inside the loop; otherwise `next(model.parameters()).device`.

    - **Safe** when the value is known to be a tensor (an item unpacked from a loader of tensors).
    - **Unsafe** when the value's kind is not known (a collated list of strings has no `.to()`),
      and for a dict batch fed as `model(**batch)`, which becomes
      `batch = {k: v.to(device) for k, v in batch.items()}` and fails if a value is not a tensor.
    - **No fix** for a loop whose body is on the same line as the `for` (or whose unpacking
      statement is), or when neither the device nor the model can be written at that point (for
      example a model that is not a plain name or attribute).

    ## Known limits
    A value counts as moved after `x = x.to(...)`, `x.cuda()`, a bare `batch.to(device)` (in place
    for a `BatchEncoding`; TDL001 reports it for a tensor), a comprehension that rebinds it
    (`batch = {k: v.to(device) for k, v in batch.items()}`), an assignment into it
    (`batch[k] = batch[k].to(device)`), or any helper call that receives the value and a device
    (`batch = send_to_device(batch, device)`). The rule stays silent when the model is never
    moved (a CPU-only script) or only cast (`.to(torch.float16)`, `.to("cpu")`), when the model is
    wrapped in `DataParallel`/`DistributedDataParallel` (they scatter inputs themselves; also a
    wrapper held in a name before it is moved), or a model parameter that every call, in the
    file and in the project's other files, passes wrapped so or in torch's
    `FullyShardedDataParallel` (its forward moves its inputs to its device; in another file,
    also under its alias `FSDP`, which the project index reads from the import; LLaMA-Adapter's
    `train_one_epoch(model, ...)`, called with `model = FSDP(model, ...)`; a model wrapped on
    one path only is still reported: `fixtures/projects/placement_across_calls`), when
    `accelerate`'s `prepare` or Lightning Fabric's `setup` produced the loader or the model, inside
    Lightning step methods and `LightningModule` classes, and when the iterable is not known to be
    a loader, or when the loader already yields device tensors by code the file shows: built with
    a device (torchtext's `BucketIterator.splits(..., device=device)`; also one unpacked from a
    list filled by `loaders.append(DataLoader(..., device=device))`), over a data pipeline that
    copies each item to the device (GraphBolt's `datapipe.copy_to(device)`), with a `collate_fn` of the
    file that moves what it collates (itself or through a helper of the file; also passed by the
    name of its `partial`), from a dataset that was moved (PyG's `data.to(device, "x")`
    before `NeighborLoader(data, ...)`), a `TensorDataset` of tensors moved up front or of rows
    of them (`x_train = x_tensor[train]` of `x_tensor = torch.FloatTensor(x).to(device)`), or
    whose class moves its tensors, or with `**kwargs` that
    may carry any of these; or, for a loader parameter, a list of batches that every caller
    gives, some tensor of which is on an accelerator (`evaluate([(x.to(device), y)])`). A batch value passed to a function of the file is judged by what
    the function does with it (issue 28): it calls a parameter given a moved model with it
    (`def step(model, x): return model(x)`), hands it to a loss parameter, or compares or
    combines it with a parameter given a value this loop put on a device
    (`def accuracy(pred, y): return (pred == y).float().mean()`); the message names the
    function. A method of a trainer object of the file (a class that is no `nn.Module`) is
    judged the same way, with the attributes of the object it calls: `self.step(batch)` whose
    body unpacks the batch and calls `self.model`, moved in `__init__`. A whole batch handed on
    so gets no fix (the function may unpack it, and a tuple has no `.to()`). A model passed into a function as a parameter is moved when every
    call of the function in the file passes a moved one. A model built by a choice that moves
    it in one branch (`Net().cuda() if use_cuda else Net()`) is moved: on a machine with the
    accelerator, that branch runs. In a file
    that uses `accelerate` or Lightning Fabric, only a `DataLoader(...)` built in the file counts
    as a loader (a helper elsewhere may have prepared it). When the loop moves some of its batch
    values, a value it still passes to the model on the CPU is taken as intentional (sequence
    lengths for `pack_padded_sequence`, ids, metadata) and reported only where it meets a loss or
    a comparison with the model's output.
    """

    # The kinds of finding (their messages, as data; the report fills the fields): where the
    # batch value meets the device, a model moved there or a value this loop put there.
    PASSED_TO_MODEL = Message(_FROM_LOADER + "is passed to `{callee}`, which was moved to a "
                              "device{by}," + _NOT_MOVED)
    LOSS_WITH_OUTPUT = Message(_FROM_LOADER + "is passed to `{callee}` with the output of "
                               "`{model}` (on a device{on})" + _NOT_MOVED)
    COMPARED_WITH_OUTPUT = Message(_FROM_LOADER + "is compared with the output of `{model}` (on "
                                   "a device{on})" + _NOT_MOVED)
    COMBINED_WITH_OUTPUT = Message(_FROM_LOADER + "is combined with the output of `{model}` (on "
                                   "a device{on})" + _NOT_MOVED)
    LOSS_WITH_MOVED = Message(_FROM_LOADER + "is passed to `{callee}` with " + _PUT + _NOT_MOVED)
    COMPARED_WITH_MOVED = Message(_FROM_LOADER + "is compared with " + _PUT + _NOT_MOVED)
    COMBINED_WITH_MOVED = Message(_FROM_LOADER + "is combined with " + _PUT + _NOT_MOVED)
    # the same, where a function of the file that the batch value is passed to compares or
    # combines it (``accuracy(predictions, labels)``: ``CalleeSummary.meets``, issue 28)
    COMPARED_IN_WITH_OUTPUT = Message(_FROM_LOADER + "is passed to `{callee}`, which compares "
                                      "it with the output of `{model}` (on a device{on})"
                                      + _NOT_MOVED)
    COMBINED_IN_WITH_OUTPUT = Message(_FROM_LOADER + "is passed to `{callee}`, which combines "
                                      "it with the output of `{model}` (on a device{on})"
                                      + _NOT_MOVED)
    COMPARED_IN_WITH_MOVED = Message(_FROM_LOADER + "is passed to `{callee}`, which compares it "
                                     "with " + _PUT + _NOT_MOVED)
    COMBINED_IN_WITH_MOVED = Message(_FROM_LOADER + "is passed to `{callee}`, which combines it "
                                     "with " + _PUT + _NOT_MOVED)
    DERIVED_MEETS_MOVED = Message(_FROM_LOADER + "is passed to `{callee}`, whose output meets "
                                  + _PUT + _NOT_MOVED)

    code = "TDL004"
    fixable = True
    facts = frozenset(("kinds", "devices", "placement"))
    valid = (
        "import torch\nfrom torch.utils.data import DataLoader\n\n\n"
        "def train(model, loader: DataLoader, device):\n    model.to(device)\n"
        "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
        "        model(x)\n",
        # the model stays on the CPU
        "import torch\nfrom torch.utils.data import DataLoader\n\n\n"
        "def train(loader: DataLoader):\n    model = torch.nn.Linear(2, 2).to('cpu')\n"
        "    for x, y in loader:\n        model(x)\n",
    )
    invalid = (
        ("import torch\nfrom torch.utils.data import DataLoader\n\n\n"
         "def train(loader: DataLoader, device):\n    model = torch.nn.Linear(2, 2).to(device)\n"
         "    for x, y in loader:\n        model(x)\n", ((8, 15),)),
        # moved at the head of a chain (PyG's benchmarks), and passed to the loop's function
        ("import torch\nfrom torch.utils.data import DataLoader\n\n\n"
         "def run(model, loader: DataLoader, device):\n    model.to(device).reset_parameters()\n"
         "    train(model, loader)\n\n\n"
         "def train(model, loader):\n    for x, y in loader:\n        model(x)\n", ((12, 15),)),
    )
    name = "unmoved-batch"
    summary = "Loop feeds data-loader batches to a model on a device without moving them"
    # Every finding needs a model moved with .to()/.cuda().
    # A loop is checked only when it iterates a loader, and every way the analysis knows a
    # loader by has "loader" in it (DataLoader, train_loader, get_dataloader(), ...).
    required_text = (method_call_text("to", "cuda") + "|" + CUDA_TENSOR_TYPE_TEXT, r"(?i)loader")

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        self.analysis = analysis
        self.kinds = analysis.kinds
        self.placement = analysis.placement
        # loader parameter -> whether every caller passes a loader of device batches (False
        # while the question is being answered: a recursion finds nothing there)
        self._asked: dict = {}
        # accelerate / Lightning Fabric can hand out prepared loaders from anywhere (a helper
        # in another file); in such files only a DataLoader built right here is trusted.
        self._prepares_elsewhere = any(
            name.startswith(_PREPARING_PACKAGES) for name in analysis.collected.imported_as)
        reported = set()  # (node, message): a use inside a loop that follows a drawn batch
        # is read both as the loop's and as the statements after the draw (a notebook that
        # looks at ``batch = next(iter(loader))``, then trains with ``for batch in loader``)
        for loop, ctx, order in analysis.collected.for_loops:
            if self._skipped_context(ctx):
                continue
            values = self._loop_batch_values(loop, ctx.scope)
            if values:
                for violation in _LoopChecker(self, loop, ctx, values, order).run():
                    reported.add((id(violation.node), violation.message))
                    yield violation
        for violation in self._single_batches():
            if (id(violation.node), violation.message) not in reported:
                reported.add((id(violation.node), violation.message))
                yield violation

    # -- one batch drawn outside a loop ------------------------------------------------------

    def _single_batches(self) -> Iterator[Violation]:
        """``images, labels = next(iter(test_loader))`` (also through ``it = iter(loader)``
        and ``next(it)`` / ``it.next()``), then ``model(images)`` in the statements after it in
        its block: the batch of a loader on the CPU, as a loop's is (issue 28: the tutorial
        shape "show a few test predictions")."""
        calls = self.analysis.collected.calls_by_name
        for site in (site for method in ("next", "__next__") for site in calls.get(method, ())):
            if self._skipped_context(site.ctx):
                continue
            scope = site.ctx.scope
            loader = self._drawn_from(site.call, scope)
            if loader is None or not any(
                    path == () for path, _ in self._loader_paths(loader, scope)):
                continue
            found = _statement_and_rest(self._code_of(site.ctx), site.call)
            if found is None:
                continue
            statement, assign, rest = found
            values = {name: _Value(moved=False, after=statement)
                      for target in assign.targets for name in _target_names(target.target)}
            if values and rest:
                yield from _LoopChecker(self, None, site.ctx, values, site.order,
                                        body=rest).run()

    def _drawn_from(self, call: cst.Call, scope: Scope) -> Optional[cst.BaseExpression]:
        """The loader ``call`` draws one batch from: ``next(iter(L))``, ``next(it)`` or
        ``it.next()`` of ``it = iter(L)`` (its one binding); else None."""
        func = call.func
        if isinstance(func, cst.Name) and func.value == "next" and len(call.args) == 1:
            source = call.args[0].value
        elif isinstance(func, cst.Attribute) and func.attr.value in ("next", "__next__") \
                and not call.args:
            source = func.value
        else:
            return None
        if isinstance(source, cst.Name):
            bindings = scope.lookup(source.value)
            if len(bindings) != 1 or bindings[0].how != ASSIGN or bindings[0].path:
                return None
            source = bindings[0].value
        if isinstance(source, cst.Call) and isinstance(source.func, cst.Name) and \
                source.func.value == "iter" and len(source.args) == 1 and \
                source.args[0].keyword is None and not source.args[0].star:
            return source.args[0].value
        return None

    def _code_of(self, ctx: Ctx):
        """The statements of the function (or module) that ``ctx`` is in."""
        if ctx.func is not None:
            body = ctx.func.node.body
            return body.body if isinstance(body, cst.IndentedBlock) else ()
        return self.analysis.module.body

    # -- loops over loaders ----------------------------------------------------------------

    def _skipped_context(self, ctx: Ctx) -> bool:
        if ctx.func is not None and ctx.func.name in LIGHTNING_STEPS:
            return True
        return ctx.cls is not None and self.kinds.class_is_lightning(ctx.cls)

    def _loader_paths(self, iterable, scope: Scope):
        """Paths into the loop target whose values come from a data loader whose batches
        this file does not show on a device already."""
        return [(path, loader) for path, loader in self.analysis.loader_paths(iterable, scope)
                if not self._prepared(loader, scope)
                and not (self._prepares_elsewhere and not self._constructed_here(loader, scope))
                and not self._yields_device_batches(loader, scope)]

    def _yields_device_batches(self, loader, scope: Scope) -> bool:
        """A loader whose batches are already on the device, by code this file shows:

        - built with a device (torchtext's ``BucketIterator.splits(..., device=device)``);
        - a ``collate_fn`` of this file that moves what it collates;
        - a dataset (its first argument) that was moved (PyG's
          ``NeighborLoader(data.to(device, 'x'), ...)``) or whose class builds or moves its
          tensors onto a device.
        """
        key = (loader.value, id(scope)) if isinstance(loader, cst.Name) else None
        if key is not None and key not in self._asked:
            # a parameter: every call (in this file, and in the project's other files) passes
            # a loader that yields device batches
            self._asked[key] = False
            self._asked[key] = self.placement.every_caller(
                loader.value, scope,
                lambda argument, site: self._yields_device_batches(argument, site.ctx.scope),
                ("loader",)) is not None
        if key is not None and self._asked[key]:
            return True  # (remembered: asked again, directly, after a recursion answered it)
        constructions = [(loader, scope)] if isinstance(
            loader, (cst.Call, cst.List, cst.Tuple, cst.ListComp)) else []
        for value, value_scope, _, order in ([] if constructions else
                                             self.placement.bindings_of(loader, scope)):
            constructions.append((value, value_scope))
            if isinstance(value, cst.Name):
                # ``train_loader, val_loader = loaders`` of a list filled by
                # ``loaders.append(DataLoader(..., device=device))`` (DGL's examples)
                for site in self.analysis.appended_to(value.value, value_scope, order) or ():
                    item, item_scope = site.call.args[0].value, site.ctx.scope
                    constructions += [(item, item_scope)] if not isinstance(item, cst.Name) \
                        else [(bound, bound_scope) for bound, bound_scope, path, _ in
                              self.placement.bindings_of(item, item_scope) if not path]
        for value, value_scope in list(constructions):
            # ``train_loader = get_loader(split)``: what the helper of this file returns
            if isinstance(value, cst.Call):
                kind = self.kinds.kind_of(value.func, value_scope)
                if isinstance(kind, K.FuncRef):
                    for returned, ctx in kind.info.returns:
                        if isinstance(returned, cst.Name):  # ``loader = DataLoader(...)``
                            constructions += [  # ``return loader``
                                (bound, bound_scope) for bound, bound_scope, path, _ in
                                self.placement.bindings_of(returned, ctx.scope) if not path]
                        elif returned is not None:
                            constructions.append((returned, ctx.scope))
        for value, scope in constructions:
            while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and isinstance(value.func.value, cst.Call):
                value = value.func.value  # DataLoader(...).__iter__(), .splits(...)
            if isinstance(value, (cst.List, cst.Tuple, cst.ListComp)) and \
                    self._batches_on_device(value, scope):
                return True
            if not isinstance(value, cst.Call):
                continue
            arguments = list(value.args)
            for arg in value.args:
                if arg.star == "**":
                    # ``DataLoader(ds, **train_kwargs)``: the dict's keys, when the file shows them
                    spread = self._spread_arguments(arg.value, scope)
                    if spread is None:
                        return True  # may pass a device, a moving collate_fn or dataset: unknown
                    arguments += spread
            for arg in arguments:
                if arg.keyword is not None and arg.keyword.value in api.DEVICE_KEYWORDS \
                        and not self.analysis.is_cpu_device(arg.value, scope):
                    return True
                if arg.keyword is not None and arg.keyword.value == "collate_fn" \
                        and self._code_moves(arg.value, scope, follow_names=True):
                    # (``collate_fn=collate``, ``collate = partial(collate_batch, device=d)``)
                    return True
            dataset = next((a.value for a in arguments if (a.keyword is None and not a.star)
                            or (a.keyword is not None and a.keyword.value in ("dataset", "data"))),
                           None)
            if dataset is not None and (self._code_moves(dataset, scope, follow_names=True)
                                        or self._holds_device_tensors(dataset, scope)):
                return True
        return False

    def _batches_on_device(self, batches, scope: Scope) -> bool:
        """A list of batches some tensor of which is on an accelerator (``[(x.to(device), y)
        ...]``, ``[torch.randn(n, d, device=device) for _ in range(k)]``: a caller hands the
        loop such a list for its loader). Which of a batch's items are on the device is not
        told apart: silent for all of them."""
        items = [batches.elt] if isinstance(batches, cst.ListComp) else \
            [e.value for e in batches.elements if not isinstance(e, cst.StarredElement)]
        for item in items:
            parts = [e.value for e in item.elements if not isinstance(e, cst.StarredElement)] \
                if isinstance(item, (cst.Tuple, cst.List)) else [item]
            if any(self.analysis.on_accelerator(part, scope) is not None for part in parts):
                return True
        return False

    def _holds_device_tensors(self, dataset, scope: Scope) -> bool:
        """A ``TensorDataset`` (or a name bound only to one) of which some tensor is on an
        accelerator: its batches hold that tensor's rows, on that device (a loader over
        ``TensorDataset(x.to(device), y)``). Which of the batch's items are on the device is
        not told apart: silent for all of them."""
        values = [(dataset, scope)] if isinstance(dataset, cst.Call) else [
            (value, value_scope) for value, value_scope, path, _ in
            self.placement.bindings_of(dataset, scope) if not path]
        for value, value_scope in values:
            if isinstance(value, cst.Call) and \
                    self.kinds.qualname(value.func, value_scope) in api.DATASET_CLASSES and any(
                        self.analysis.on_accelerator(arg.value, value_scope) is not None
                        or self._some_binding_moves(arg.value, value_scope)
                        for arg in value.args if arg.keyword is None and not arg.star):
                return True
        return False

    def _some_binding_moves(self, name, scope: Scope, depth: int = 0) -> bool:
        """Some assignment of ``name`` moves it to an accelerator, or is made by a call given a
        device (``if
        torch.cuda.is_available(): test_x, test_y = test_x.cuda(), test_y.cuda()``, gpytorch's
        examples): where that branch runs, which is where a model moved the same way is on
        the device, the tensor is there too. Rows of such a tensor are where it is:
        ``x_tensor[train]``, or a name bound to them (``x_train = x_tensor[train]`` of a
        notebook's ``x_tensor = torch.FloatTensor(x).to(device)``, issue 28)."""
        while isinstance(name, cst.Subscript):
            name = name.value
        if not isinstance(name, cst.Name) or depth > 3:
            return False
        for bound, value_scope, path, _ in self.placement.bindings_of(name, scope):
            value = unpacked_element(bound, path)
            if isinstance(value, cst.Subscript) and \
                    self._some_binding_moves(value, value_scope, depth + 1):
                return True
            if isinstance(value, cst.Call) and self.placement.device_of_move(value, value_scope)[0]:
                return True
            if isinstance(bound, cst.Call) and self._given_a_device(bound, value_scope):
                # ``x_train, y_train = data_transform(train, ..., device)`` (DGL's stgcn),
                # ``df_2_tensor(ratings, device)``: a helper handed the device makes what it
                # returns there, as far as the file can tell (issue 28)
                return True
        return False

    def _given_a_device(self, call: cst.Call, scope: Scope) -> bool:
        """``call`` passes a device that is not the CPU: a ``device=`` keyword, or a value
        whose name or kind says it is one."""
        for arg in call.args:
            if arg.star:
                continue
            if (arg.keyword is not None and arg.keyword.value in api.DEVICE_KEYWORDS) or \
                    is_device_name(last_name(arg.value) or "") or \
                    self.kinds.kind_of(arg.value, scope) is K.DEVICE:
                if not self.analysis.is_cpu_device(arg.value, scope):
                    return True
        return False

    def _spread_arguments(self, expr, scope: Scope) -> Optional[List[cst.Arg]]:
        """The keyword arguments ``**expr`` passes, as ``Arg`` nodes, when every binding of
        the name is a dict display or ``dict(...)``, or a conditional choosing between such
        (``{'num_workers': 1, 'pin_memory': True} if use_cuda else {}``: every key either may
        pass), and ``.update()`` calls add more of those; None when any part is unknown."""
        if not isinstance(expr, cst.Name):
            return None
        found: List[cst.Arg] = []
        pending = [(expr.value, scope)]
        seen = set()
        while pending:
            name, name_scope = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            bindings = self.placement.bindings_of(cst.Name(name), name_scope)
            if not bindings:
                return None
            values = []
            for value, value_scope, path, _ in bindings:
                if path:
                    return None
                values.append(value)
            while values:
                value = values.pop()
                if isinstance(value, cst.IfExp):
                    values += [value.body, value.orelse]
                elif isinstance(value, cst.Dict):
                    for element in value.elements:
                        if not isinstance(element, cst.DictElement):
                            return None
                        key = string_value(element.key)
                        if key is None:
                            return None
                        found.append(cst.Arg(value=element.value, keyword=cst.Name(key)))
                elif isinstance(value, cst.Call) and last_name(value.func) == "dict" and \
                        isinstance(value.func, cst.Name):
                    if any(a.keyword is None for a in value.args):
                        return None
                    found.extend(value.args)
                else:
                    return None
            for site in self.analysis.collected.calls_by_name.get("update", ()):
                receiver = site.call.func.value if isinstance(site.call.func, cst.Attribute) else None
                if isinstance(receiver, cst.Name) and receiver.value == name:
                    for arg in site.call.args:
                        if arg.keyword is not None:
                            found.append(arg)
                        elif isinstance(arg.value, cst.Name):
                            pending.append((arg.value.value, site.ctx.scope))
                        else:
                            return None
        return found

    def _code_moves(self, expr, scope: Scope, follow_names: bool = False, depth: int = 0) -> bool:
        """Whether ``expr`` moves to a device, or names code of this file that does (a
        function, a lambda, ``partial(f, ...)``, a class whose methods move)."""
        if depth > 3:
            return False
        for node in walk_code(expr):
            if isinstance(node, cst.Call) and self._moves(node, scope):
                return True
        if isinstance(expr, cst.Lambda):
            return any(isinstance(n, cst.Call) and self._moves(n, scope)
                       for n in walk_code(expr.body))
        target = expr
        if isinstance(expr, cst.Call):
            if last_name(expr.func) == "partial" and expr.args:
                return self._code_moves(expr.args[0].value, scope, follow_names, depth + 1)
            target = expr.func
        kind = self.kinds.kind_of(target, scope)
        if isinstance(kind, (K.FuncRef, K.ClassRef)):
            body = kind.info.node.body
            inner = kind.info.scope or scope
            return any((isinstance(n, cst.Call) and (
                           self._moves(n, scope)
                           # (a helper of the file that moves: issue 28)
                           or (isinstance(self.kinds.kind_of(n.func, inner), K.FuncRef)
                               and self._code_moves(n, inner, False, depth + 1))))
                       or (isinstance(n, cst.Arg) and n.keyword is not None
                           and n.keyword.value == "device")
                       for n in walk_code(body, into_functions=True))
        if isinstance(expr, cst.Name) and not follow_names:
            # ``collate = partial(collate_on_device, device=device)`` passed by its name
            return any(self._code_moves(value, value_scope, False, depth + 1)
                       for value, value_scope, path, _ in self.placement.bindings_of(expr, scope)
                       if not path)
        if follow_names and isinstance(expr, cst.Name):
            owner = scope.resolve(expr.value)
            calls = self.analysis.collected.calls_by_name
            for site in calls.get("to", []) + calls.get("cuda", []) + [
                    site for method in api.FORMAT_DEVICE_METHODS
                    for site in calls.get(method, ())]:
                # ``data.to(device, 'x', 'y')``: PyG's Data moves in place;
                # ``dataset.set_format(type="torch", device="cuda")``: a Hugging Face dataset
                # yields tensors on that device (Transformers-Tutorials' LayoutLMv2, issue 28)
                receiver = site.call.func.value
                if site.statement is not None and isinstance(receiver, cst.Name) \
                        and receiver.value == expr.value and owner is not None \
                        and site.ctx.scope.resolve(expr.value) is owner \
                        and self._moves(site.call, site.ctx.scope):
                    return True
            return any(self._code_moves(value, value_scope, follow_names, depth + 1)
                       for value, value_scope, path, _ in self.placement.bindings_of(expr, scope) if not path)
        return False

    def _moves(self, call: cst.Call, scope: Scope) -> bool:
        """A move to an accelerator (``x.to(device)``), or a pipeline's move of every item it
        yields (GraphBolt's ``datapipe.copy_to(device)``, a Hugging Face dataset's
        ``set_format(..., device="cuda")``; not to the CPU)."""
        if self.placement.device_of_move(call, scope)[0]:
            return True
        method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
        if method not in api.PIPELINE_MOVE_METHODS and method not in api.FORMAT_DEVICE_METHODS:
            return False
        device = next((a.value for a in call.args if not a.star and (
            (a.keyword is None and method in api.PIPELINE_MOVE_METHODS)
            or (a.keyword is not None and a.keyword.value == "device"))), None)
        return device is not None and not self.analysis.is_cpu_device(device, scope)

    def _constructed_here(self, loader, scope: Scope) -> bool:
        """The loader is a ``DataLoader(...)`` built in this file (not one from elsewhere)."""
        if isinstance(loader, cst.Call):
            return self.analysis.qualname(loader.func, scope) in api.LOADER_CLASSES
        return any(isinstance(value, cst.Call) and not path
                   and self.analysis.qualname(value.func, value_scope) in api.LOADER_CLASSES
                   for value, value_scope, path, _ in self.placement.bindings_of(loader, scope))

    def _prepared(self, loader, scope: Scope) -> bool:
        return any(self.placement.wraps_or_prepares(value, value_scope)
                   for value, value_scope, _, _ in self.placement.bindings_of(loader, scope))

    def _loop_batch_values(self, loop: cst.For, scope: Scope) -> Dict[str, _Value]:
        paths = self._loader_paths(loop.iter, scope)
        values: Dict[str, _Value] = {}
        if not paths:
            return values

        def visit(target, path):
            if isinstance(target, cst.Name):
                if any(path[: len(prefix)] == prefix for prefix, _ in paths):
                    values[target.value] = _Value(moved=False, after=None)
            elif isinstance(target, (cst.Tuple, cst.List)):
                for index, element in enumerate(target.elements):
                    if not isinstance(element, cst.StarredElement):
                        visit(element.value, path + (index,))

        visit(loop.target, ())
        return values


def _statement_and_rest(statements, value: cst.BaseExpression):
    """(the simple statement, its assignment, the statements after it in its block) for the
    assignment of ``value`` among ``statements`` (or in their blocks, at any depth); None
    when there is none."""
    for index, statement in enumerate(statements):
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and small.value is value:
                    return statement, small, list(statements[index + 1:])
            continue
        for block in _blocks_of(statement):
            found = _statement_and_rest(block, value)
            if found is not None:
                return found
    return None


def _blocks_of(statement):
    """The statement lists of a compound statement (``if``/``else``, ``with``, ``try``, ...),
    not of a nested function or class (their code runs elsewhere)."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return
    for child in iter_children(statement):
        if isinstance(child, cst.IndentedBlock):
            yield child.body
        elif isinstance(child, (cst.Else, cst.ExceptHandler, cst.Finally, cst.If)):
            yield from _blocks_of(child)


class _LoopChecker(OrderedWalk):
    """Walks one loop body in order, tracking which batch values have been moved.

    The walk and the names' devices are the shared placement engine's (``OrderedWalk``):
    ``placed`` holds the names whose values this loop put on a device (batch values it
    moved, and what calls given such values return: ``output = model(images)`` with
    ``images`` moved), with the device each was moved with. An unmoved batch value meeting
    one of them in a loss, a comparison or arithmetic fails whatever the model is (a
    parameter, wrapped in DDP): the loop's own moves are the evidence."""

    def __init__(self, rule: UnmovedBatch, loop: Optional[cst.For], ctx: Ctx,
                 values: Dict[str, _Value], order: int, body=None):
        super().__init__()
        self.rule = rule
        self.order = order
        self.analysis = rule.analysis
        self.loop = loop
        # the statements walked: the loop's body, or those after a batch drawn outside a loop
        self.body = body if body is not None else loop.body.body
        self.scope = ctx.scope
        self.values = values
        self.outputs: set = set()  # names holding model outputs
        # Whether the body moves any batch value (assigned or inline): then a value the model
        # still gets on the CPU is probably meant to stay there (sequence lengths for
        # pack_padded_sequence, ids, metadata), so only losses and comparisons report it.
        self.moves_some = False
        self.model_called: Optional[tuple] = None  # (model expr, device expr)
        self.candidates: List[tuple] = []  # (name, node, sink, callee text)
        # names handed to a function or method of the file that may unpack them (``batch`` of
        # ``self.step(batch)`` whose body does ``x, y = batch``): a ``.to()`` of the whole
        # value is no fix unless it is known to be a tensor
        self.through_helpers: set = set()
        # Names holding what a call made of unmoved batch values (``output = model(data)``):
        # name -> (the producing call's text, the unmoved names). When such a name meets a
        # value this loop put on a device, the unmoved inputs are what should have moved.
        self.from_unmoved: Dict[str, tuple] = {}

    def _indexes(self) -> set:
        """Batch values the code walked uses to index or slice (``x[n_id]``,
        ``batch.y[:batch_size]``): indices and sizes, which a model is given on the CPU on
        purpose (PyG's ``for batch_size, n_id, adjs in loader``; indexing a tensor on a device
        with a CPU index works), issue 28."""
        found = set()
        for statement in self.body:
            for node in walk_code(statement):
                if isinstance(node, cst.Subscript):
                    for element in node.slice:
                        found.update(n.value for n in walk_code(element)
                                     if isinstance(n, cst.Name) and n.value in self.values)
        return found

    def _order_at(self, call: cst.Call) -> int:
        """The source order a model's placement is judged at for ``call``: the loop's, or for
        a batch drawn outside a loop the call's own (a notebook that draws a batch, builds the
        model in a later cell, runs it once, and moves it to the device only in the cell after
        that: the run sees a model on the CPU, issue 28)."""
        if self.loop is None:
            site = self.analysis.collected.site_of(call)
            if site is not None:
                return site.order
        return self.order

    def skips(self, statement: cst.SimpleStatementLine) -> bool:
        # "loss = criterion(model(x), y)  # this will error": a deliberate error demo of a
        # teaching notebook, treated as ``pytest.raises`` is (issue 28, cause 6)
        return says_it_fails(statement)

    def run(self) -> Iterator[Violation]:
        self.walk(self.body)
        indexes = self._indexes()
        reported = set()
        for name, node, sink, callee, model in self.candidates:
            if name in reported or (sink == "model" and name in indexes):
                continue
            partner = None
            if isinstance(model, _OnDevice):
                partner, model = model, None
                if self.model_called is not None and self.model_called[1] is not None:
                    partner = None  # the model's own device names the fix, as before
            if partner is None and sink != "model" and self.model_called is None:
                continue  # the loop never runs a model on a device: a CPU-only loop
            reported.add(name)
            value = self.values.get(name) or _Value(False, None)
            rule = self.rule
            if partner is not None:
                model_expr, device = partner.expr, partner.device
                message = {"loss": rule.LOSS_WITH_MOVED, "compare": rule.COMPARED_WITH_MOVED,
                           "arith": rule.COMBINED_WITH_MOVED,
                           "compare_in": rule.COMPARED_IN_WITH_MOVED,
                           "arith_in": rule.COMBINED_IN_WITH_MOVED,
                           "derived": rule.DERIVED_MEETS_MOVED}[sink]
            else:
                model_expr, device = model if model else self.model_called
                by = self.rule.placement.moved_by_callers(model_expr, self.scope)
                on = f": every call passes a moved model, as {by} does" if by else ""
                by = f" (every call passes a moved model, as {by} does)" if by else ""
                message = {"model": rule.PASSED_TO_MODEL, "loss": rule.LOSS_WITH_OUTPUT,
                           "compare": rule.COMPARED_WITH_OUTPUT,
                           "arith": rule.COMBINED_WITH_OUTPUT,
                           "compare_in": rule.COMPARED_IN_WITH_OUTPUT,
                           "arith_in": rule.COMBINED_IN_WITH_OUTPUT}[sink]
            # The message proposes what --fix writes: one device expression for both. A
            # partner's device is the one this loop moved it to, written here (a tensor has
            # no ``parameters()``: ``next(outputs.parameters())`` was no fix)
            if partner is not None:
                device_text = None if device is None else dotted_name(device)
            else:
                device_text = _device_text_at(self.scope, device, model_expr)
            moved = None if device_text is None else _moved_text(name, device_text, value.is_mapping)
            if name in self.through_helpers and \
                    self.analysis.kinds.name_kind(name, self.scope) is not K.TENSOR:
                moved = None  # (a tuple or list of tensors has no ``.to()``)
            if moved is None:  # no fix: name the device as the code that moved the model does
                proposed = name + ".to(" + (
                    source_of(device) if device is not None else
                    f"{source_of(model_expr)}.device" if partner is not None else
                    f"next({source_of(model_expr)}.parameters()).device") + ")"
            else:
                proposed = moved
            yield Violation(
                node,
                message(name=name, callee=callee, proposed=proposed,
                        partner=partner.text if partner is not None else None,
                        model=source_of(model_expr), by=by if partner is None else "",
                        on=on if partner is None else ""),
                fix=UnmovedBatchFix(self.loop, name, value.after, device, model_expr,
                                    value.is_mapping, moved, self.scope),
            )

    # -- what moves a value ----------------------------------------------------------------

    def _is_device_move(self, call: cst.Call) -> bool:
        return self.rule.placement.device_of_move(call, self.scope)[0]

    def _contains_move(self, expr) -> bool:
        return any(isinstance(node, cst.Call) and self._is_device_move(node)
                   for node in walk_code(expr))

    def _helper_moves(self, call: cst.Call) -> List[str]:
        """``send_to_device(batch, device)``: a call given batch values and a device moves them."""
        if isinstance(call.func, cst.Attribute) and self._names_in(call.func.value):
            return []  # a method of the batch value itself
        batch_names, has_device = [], False
        for arg in call.args:
            names = self._names_in(arg.value)
            batch_names.extend(names)
            if not names and self._is_device_like(arg.value, arg):
                has_device = True
        return batch_names if has_device else []

    def _is_device_like(self, expr, arg: cst.Arg) -> bool:
        if arg.keyword is not None and arg.keyword.value in api.DEVICE_KEYWORDS:
            return True
        if is_device_name(last_name(expr) or ""):
            return True
        if self.analysis.kind_of(expr, self.scope) is K.DEVICE:
            return True
        if self.model_called and self.model_called[1] is not None \
                and expr.deep_equals(self.model_called[1]):
            return True
        return False

    def call_statement(self, call: cst.Call) -> None:
        # ``batch.to(device)`` (in place for BatchEncoding; TDL001 reports it for tensors)
        if isinstance(call.func, cst.Attribute) and self._is_device_move(call):
            for name in self._names_in(call.func.value):
                self.values[name].moved = True
        for name in self._helper_moves(call):
            self.values[name].moved = True

    def assign(self, target, value, statement) -> None:
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) \
                and len(target.elements) == len(value.elements):
            for t, v in zip(target.elements, value.elements):
                self.assign(t.value, v.value, statement)
            return
        if isinstance(target, cst.Subscript):
            # ``batch[k] = batch[k].to(device)`` moves (part of) the batch in place
            root = root_name(target)
            if root is not None and root.value in self.values and self._contains_move(value):
                self.values[root.value].moved = True
            return
        targets = _target_names(target)
        if not targets:
            return
        sources = self._names_in(value)
        moved = self._contains_move(value) or (
            isinstance(value, cst.Call) and bool(self._helper_moves(value)))
        if sources or (moved and self._mentions_values(value)):
            all_moved = moved or all(self.values[s].moved for s in sources)
            for name in targets:
                self.values[name] = _Value(moved=all_moved, after=statement)
        else:
            for name in targets:
                self.values.pop(name, None)
        device = self.device_of(value)
        fed_unmoved = []
        if device is None and isinstance(value, cst.Call) and \
                not self.rule.placement.device_of_move(value, self.scope)[0] and \
                not (self.rule.placement.moved_model(value.func, self.scope, self._order_at(value)) is not None
                     and self.rule.placement.scatters(value.func, self.scope)):
            # (DataParallel/DDP move their inputs: their output is on the device)
            fed_unmoved = [n for arg in value.args for n in self._unmoved(arg.value)]
        for name in targets:
            self.place(name, device)
            if fed_unmoved:
                self.from_unmoved[name] = (source_of(value.func), fed_unmoved)
            else:
                self.from_unmoved.pop(name, None)
        if self._produces_output(value):
            self.outputs.update(targets)
        else:
            self.outputs.difference_update(targets)

    def _mentions_values(self, expr) -> bool:
        return any(isinstance(node, cst.Name) and node.value in self.values
                   for node in walk_code(expr, into_functions=True))

    def _produces_output(self, expr) -> bool:
        if copied_to_host(expr):
            return False  # ``out.argmax(1).cpu()``: compared with a CPU label, it works
        return any((isinstance(node, cst.Name) and node.value in self.outputs)
                   or (isinstance(node, cst.Call)
                       and self.rule.placement.moved_model(node.func, self.scope, self._order_at(node)))
                   for node in walk_code(expr))

    # -- where an unmoved value is used --------------------------------------------------

    def _names_in(self, expr) -> List[str]:
        return [n.value for n in self._fed(expr)]

    def _fed(self, expr) -> List[cst.Name]:
        """Batch-value names that ``expr`` passes on as they are (no move in between)."""
        if isinstance(expr, cst.Name):
            return [expr] if expr.value in self.values else []
        if isinstance(expr, cst.Attribute) and expr.attr.value in _METADATA_ATTRIBUTES:
            return []  # ``x.shape[0]``, ``(img.shape[0], img.shape[1])``: Python ints, no data
        if isinstance(expr, (cst.Subscript, cst.Attribute)):
            return self._fed(expr.value)
        inner = self.analysis.kinds.passed_through(expr, self.scope)
        if inner is None and isinstance(expr, cst.Call):
            # ``x = normalize(x)``: a helper of this file that gives back its argument unmoved
            inner = self.rule.placement.returned_argument(expr, self.scope)
        if inner is not None:  # ``x = Variable(x)``: still the batch as it came
            return self._fed(inner)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            method = expr.func.attr.value
            if self._is_device_move(expr):
                if self._fed(expr.func.value):
                    self.moves_some = True
                return []
            if method in api.TENSOR_METHODS:
                return self._fed(expr.func.value)
            return []
        if isinstance(expr, cst.BinaryOperation):
            return self._fed(expr.left) + self._fed(expr.right)
        if isinstance(expr, cst.UnaryOperation):
            return self._fed(expr.expression)
        if isinstance(expr, (cst.Tuple, cst.List)):
            return [n for e in expr.elements for n in self._fed(e.value)]
        return []

    def _unmoved(self, expr) -> List[cst.Name]:
        return [n for n in self._fed(expr) if not self.values[n.value].moved]

    def expression(self, expr) -> None:
        """Find sinks in ``expr`` in source order."""
        for node in walk_code(expr):
            if isinstance(node, cst.Call):
                self._call_sink(node)
            elif isinstance(node, cst.Comparison):
                self._comparison_sink(node)
            elif isinstance(node, cst.BinaryOperation):
                self._arithmetic_sink(node)

    def _call_sink(self, call: cst.Call) -> None:
        model = self.rule.placement.moved_model(call.func, self.scope, self._order_at(call))
        if model is not None and self.analysis.is_loss(call.func, self.scope) and \
                self._partner_on_device([a.value for a in call.args]) is not None:
            model = None  # ``criterion = nn.CrossEntropyLoss().to(device)``: still a loss
        if model is not None:
            self.model_called = model
            if self.rule.placement.scatters(call.func, self.scope):
                return  # DataParallel/DDP move the inputs they are given
            unmoved = [(arg, name) for arg in call.args for name in self._unmoved(arg.value)]
            if (self.moves_some or any(v.moved for v in self.values.values())) and \
                    any(self.device_of(arg.value) is not None for arg in call.args):
                # ``decoder(captions, lengths)`` with captions moved: a length left on the CPU
                # beside a moved value is meant to stay there (pack_padded_sequence wants it
                # there); a feature beside its moved graph is not (``model(batch.x,
                # batch.edge_index.to(device))``)
                unmoved = [(arg, name) for arg, name in unmoved
                           if not _names_a_length(arg.value)]
                if not unmoved:
                    return
            for arg, name in unmoved:
                if arg.star == "**":
                    self.values[name.value].is_mapping = True
                self.candidates.append((name.value, name, "model", source_of(call.func), model))
            return
        if self.analysis.is_loss(call.func, self.scope):
            partner = self._partner_on_device([a.value for a in call.args])
            for arg in call.args:
                for name in self._unmoved(arg.value):
                    self.candidates.append((name.value, name, "loss", source_of(call.func), partner))
            if partner is not None:
                self._derived_sink([a.value for a in call.args], source_of(call.func), partner)
            return
        helper = self.analysis.helper_called(call, self.scope) or \
            self.analysis.object_method_called(call, self.scope)
        if helper is not None:
            self._helper_sink(call, helper)
            return
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in api.BINARY_TENSOR_METHODS:
            # ``pred.eq(target)``, ``outputs.sub(labels)``
            partner = self._partner_on_device([call.func.value])
            if partner is not None:
                for arg in call.args:
                    for name in self._unmoved(arg.value):
                        self.candidates.append((name.value, name, "compare", "", partner))

    def _helper_sink(self, call: cst.Call, helper) -> None:
        """``step(model, images)``, ``compute_loss(criterion, output, target)``,
        ``accuracy(predictions, labels)``: a function of this file that calls one parameter
        with another, or makes two meet (``CalleeSummary``), given a batch value for one:
        the sink is in there, judged as if it were written here. Also a trainer's method
        (``self.step(batch)`` whose body feeds ``self.model``). The message names the
        function."""
        summary = self.analysis.callee_summary(helper)
        placement = self.rule.placement

        def argument(name):
            return self.analysis.argument_for(call, helper, name)

        for fed, called in summary.feeds:
            target, value = argument(called), argument(fed)
            if target is None or value is None:
                continue
            through = f"{helper.name}`, which passes it to `{source_of(target)}"
            model = placement.moved_model(target, self.scope, self._order_at(call)) \
                if isinstance(target, (cst.Name, cst.Attribute)) else None
            if model is not None and not self.analysis.is_loss(target, self.scope):
                self.model_called = model
                if placement.scatters(target, self.scope):
                    continue
                for name in self._unmoved(value):
                    self.through_helpers.add(name.value)
                    self.candidates.append((name.value, name, "model", through, model))
            elif self.analysis.is_loss(target, self.scope):
                others = [argument(other) for other, callee in summary.feeds
                          if callee == called and other != fed]
                partner = self._partner_on_device([o for o in others if o is not None])
                for name in self._unmoved(value):
                    self.through_helpers.add(name.value)
                    self.candidates.append((name.value, name, "loss", through, partner))
        for first, second, operation in summary.meets:
            for mine, theirs in ((first, second), (second, first)):
                value, other = argument(mine), argument(theirs)
                if value is None or other is None:
                    continue
                partner = self._partner_on_device([other])
                if partner is None:
                    continue
                sink = "compare_in" if isinstance(operation, cst.Comparison) else "arith_in"
                for name in self._unmoved(value):
                    self.candidates.append((name.value, name, sink, helper.name, partner))

    def _derived_sink(self, operands, callee: str, partner: "_OnDevice") -> None:
        """``output = model(data)`` with ``data`` unmoved, then ``criterion(output,
        target.to(device))``: the output is on the CPU (or the model call already failed)
        while its partner is on a device; ``data`` is the value that should have moved."""
        for operand in operands:
            if isinstance(operand, cst.Name) and operand.value in self.from_unmoved:
                producer, names = self.from_unmoved[operand.value]
                for name in names:
                    self.candidates.append((name.value, name, "derived", producer, partner))

    def _comparison_sink(self, node: cst.Comparison) -> None:
        operands = [node.left] + [c.comparator for c in node.comparisons]
        partner = self._partner_on_device(operands)
        if partner is not None:
            self._derived_sink(operands, "", partner)
        if partner is None and not any(self._produces_output(o) for o in operands):
            return
        for operand in operands:
            for name in self._unmoved(operand):
                self.candidates.append((name.value, name, "compare", "", partner))

    def _arithmetic_sink(self, node: cst.BinaryOperation) -> None:
        partner = self._partner_on_device([node.left, node.right])
        if partner is None:
            return
        for side in (node.left, node.right):
            if isinstance(side, cst.Name):  # only a batch value itself, not ``images.size(0)``
                for name in self._unmoved(side):
                    self.candidates.append((name.value, name, "arith", "", partner))

    # -- values this loop put on a device ------------------------------------------------

    def call_device(self, expr: cst.Call) -> Optional[cst.BaseExpression]:
        """The device a call's value was put on by this loop: ``x.to(device)`` of a batch
        value, or what a call given such a value returns (``model(x)``, ``F.softmax(out,
        1)``). ``.cpu()``, ``.item()`` and the like bring it back."""
        moved, device = self.rule.placement.device_of_move(expr, self.scope)
        if moved:
            if self.rule.placement.follows_a_value(device, self.scope) \
                    and self.device_of(device.value) is None:
                return None  # ``target.to(output.device)`` follows a value; it proves no device
            return device if device is not None and self._fed(expr.func.value) else None
        arguments = (a.value for a in expr.args)
        if isinstance(expr.func, cst.Attribute):
            method = expr.func.attr.value
            if method in api.NON_TENSOR_TENSOR_METHODS or method in api.ARGUMENT_DEVICE_METHODS:
                return None
            if method in api.TENSOR_METHODS:
                return self.device_of(expr.func.value) or self.first_device(arguments)
        elif isinstance(expr.func, cst.Name) and expr.func.value in api.NON_TENSOR_BUILTINS:
            return None
        return self.first_device(arguments)

    def _partner_on_device(self, operands) -> Optional["_OnDevice"]:
        for operand in operands:
            device = self.device_of(operand)
            if device is not None:
                return _OnDevice(operand, device, source_of(operand))
        return None


def _names_a_length(expr) -> bool:
    """``lengths``, ``batch.seq_lens``, ``src_len``: sizes, which stay on the CPU
    (``names_a_length``). A value the analysis cannot name counts as one (silence when
    unsure)."""
    return last_name(expr) is None or names_a_length(expr)


@dataclass
class _OnDevice:
    """The operand that shows a sink is on a device: its expression and the device."""

    expr: cst.BaseExpression
    device: cst.BaseExpression
    text: str


# Tensor methods that combine the receiver with their argument.


def _target_names(target) -> List[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


# -- the device expression that the message names and the fix writes ------------------------


def _device_text_at(scope: Scope, device: Optional[cst.BaseExpression],
                    model: cst.BaseExpression) -> Optional[str]:
    """What to write for the device in the loop's ``scope``: the expression the model was
    moved with, when it is a plain name or attribute chain that means here what it meant
    there (bound in the function or module whose own code moved the model); else
    ``next(model.parameters()).device`` when the model expression can be written here; else
    None."""
    if device is not None:
        text = dotted_name(device)
        root = root_name(device)
        if text is not None and root is not None:
            owner = scope.resolve(root.value)
            if owner is not None and _in_own_code(owner.node, device):
                return text
    model_text = dotted_name(model)
    if model_text is None or not _free_names_resolve(model, scope):
        return None
    return f"next({model_text}.parameters()).device"


def _moved_text(name: str, device: str, is_mapping: bool) -> str:
    if not is_mapping:
        return f"{name}.to({device})"
    words = set(device.replace("(", ".").replace(")", ".").split("."))
    key, value = ("k", "v") if not {"k", "v"} & words else ("key_", "value_")
    return f"{{{key}: {value}.to({device}) for {key}, {value} in {name}.items()}}"


def _in_own_code(owner: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Whether ``node`` is in the code of ``owner`` (a module or function) itself, not in a
    function nested in it."""
    root = owner.body if isinstance(owner, cst.FunctionDef) else owner
    return any(found is node for found in walk_code(root))


def _free_names_resolve(expr: cst.BaseExpression, scope: Scope) -> bool:
    """Whether every name ``expr`` reads resolves in ``scope``."""
    stack: List[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            if scope.resolve(node.value) is None:
                return False
        elif isinstance(node, cst.Attribute):
            stack.append(node.value)
        elif isinstance(node, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
                               cst.GeneratorExp)):
            return False
        elif isinstance(node, cst.Arg):
            stack.append(node.value)
        else:
            stack.extend(iter_children(node))
    return True
