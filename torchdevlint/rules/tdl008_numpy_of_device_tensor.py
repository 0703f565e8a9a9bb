"""TDL008: ``.numpy()`` (or ``np.array`` / ``np.asarray``) of a tensor on an accelerator.

NumPy reads host memory only: ``t.numpy()`` of a CUDA tensor raises ``TypeError: can't convert
cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory
first.``, and ``np.asarray(t)`` the same. Reported only where the analysis has evidence that
the tensor is on an accelerator at that point (``analysis.on_accelerator``): it was moved there,
created there with ``device=``, is the output of a model moved there, or is computed from such
a value. ``.cpu()`` (or ``.to("cpu")``) anywhere in the chain takes it off; ``numpy(force=True)``
copies by itself; a script that moves nothing gives no evidence.

Fix: ``t.numpy()`` becomes ``t.cpu().numpy()``, and ``np.asarray(t)`` becomes
``np.asarray(t.cpu())``; ``.detach()`` goes first where gradient recording may be on (a CPU
tensor that requires grad cannot be converted either). Safe: on a CPU tensor without history
both are no-ops, and on any other tensor the original call raised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from torchdevlint.analysis import (
    ASSIGN, Analysis, CallSite, api, expects_failure, last_name, string_value, walk_code,
)
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import (
    EachItem, FixContext, call_on, call_on_text, each_applied,
)
from torchdevlint.fixes.model import Fix, FixPlan
from torchdevlint.rules.base import (
    CUDA_TENSOR_TYPE_TEXT, Message, Rule, Violation, method_call_text, source_of,
)
from torchdevlint.rules.prefilter import numpy_of_moved_in

CONVERT_ERROR = ("TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() "
                 "to copy the tensor to host memory first.")
_NUMPY_FUNCTIONS = api.NUMPY_CONVERSIONS
# NumPy's functions that read a tensor or a list of them (``np.mean(losses)``, ``np.argmax(t)``)
_NUMPY_READERS = api.NUMPY_LIST_READERS | api.NUMPY_TENSOR_READERS
_NUMPY_READER_NAMES = tuple(sorted(set(api.NUMPY_LIST_READER_NAMES)
                                   | set(api.NUMPY_TENSOR_READER_NAMES)))
# Calls in a receiver's chain after which the value has no autograd history.
_WITHOUT_HISTORY = api.DETACHING_METHODS


@dataclass
class CopyToHost(FixPlan):
    """Insert ``.cpu()`` (after ``.detach()`` when needed) right after ``tensor``."""

    tensor: cst.BaseExpression
    detach: bool
    # Unsafe where ``tensor`` is what a list is filled with (``losses.append(loss)``): other
    # readers of the list (``torch.stack(losses).sum().backward()``) would get host copies
    # without their graph.
    safe: bool = True

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        text = (".detach()" if self.detach else "") + ".cpu()"
        what = "copy the tensor to the host first" if self.safe else \
            "fill the list with host copies"
        # (``np.round((acc / n).cpu(), 2)``: an operation is parenthesized first)
        return Fix(finding.code, self.safe, f"{what} (`{text}`)", call_on(ctx, self.tensor, text))


class NumpyOfDeviceTensor(Rule):
    """
    ## What it does
    Reports `t.numpy()`, `np.array(t)` and `np.asarray(t)` where `t` is a tensor that the analysis
    can show lives on an accelerator at that point, such a tensor given to one of NumPy's
    functions that convert it the same way (`np.argmax(out, axis=1)`, `np.round(pred)`,
    `np.exp(log_probs)`, `np.save(path, features)`, NumPy's scalar types such as
    `np.uint8(255 * mask)`, ...: `api.NUMPY_TENSOR_READERS`, each checked under the pretend
    accelerator by `tests/runtime/test_fake_accelerator.py`; not `np.mean(t)` or `np.max(t)`, which call the
    tensor's own method, nor `np.squeeze(t)`; issue 28), and such a tensor given to a function that
    reads its arguments as NumPy arrays: scikit-learn's metrics (`roc_curve(labels, scores)`,
    `metrics.f1_score(y, pred)`), pyplot's plotting functions (`plt.imshow(img)`) and pandas'
    `DataFrame` and `Series` (`pd.DataFrame(embeddings)`), imported by name or called on their
    module (issue 28: ganomaly's `roc_curve` of GPU scores). A tensor
    is on an accelerator where:

    - it was moved there: `x.to(device)`, `x.cuda()`, `x.type(torch.cuda.FloatTensor)` (also
      through a name bound to a CUDA tensor type, `Tensor = torch.cuda.FloatTensor if cuda
      else torch.FloatTensor`) (not `.to(dtype)`, not `.to("cpu")`),
      also `x.to(self.device)` in a method of a class that is no `nn.Module` and sets
      `self.device` to something other than the CPU (a trainer or evaluator given the device;
      a module's `self.device` follows its parameters), or `config.device` of an instance of
      a plain class of the file whose body sets it so (`class TrainingConfig: device =
      "cuda"`);
    - it was created there: a torch factory given a device that is not the CPU
      (`torch.zeros(n, device=device)`, `torch.linspace(..., device=device)`), or a `*_like`
      factory of such a tensor;
    - it is computed from a moved model's parameters by torch (`grad_norm =
      torch.nn.utils.clip_grad_norm_(model.parameters(), clip)`, `api.PARAMETER_REDUCTIONS`;
      TTS's `np.isinf(grad_norm)`);
    - it is the output of a model moved there (`model.to(device)` or `model = Net().to(device)`
      earlier in the code the file shows, also through a parameter that every caller in the file
      passes a moved model to, and through `self.model` set in `__init__` from a parameter that
      every construction of the class in the file passes one (`Predictor(model)`; not where a
      class of the file derives from it); not when a statement also moves it back,
      `model.to("cpu")`, `model.cpu()` or `model = model.to("cpu")`: the evidence then points
      both ways; nor where the model is called before the code moves it, in the order it runs);
    - it is a parameter or buffer of such a model, by the name torch.nn's layers register it
      under (`weight`, `bias`, `running_mean`, ...: `model.embedding.weight.data`,
      `model[0].bias`), or a tensor of its `parameters()`, `named_parameters()`, `buffers()`
      or `state_dict()` taken by a loop or a comprehension (issue 28: word vectors exported
      after training on a GPU); a module's parameters move with it, and read before the code
      moves the model they are on the CPU;
    - it is the output of a helper the code hands such a model to (`outputs = synthesis(model,
      text)`: a helper that runs a moved model gives what the model gave; not a builtin, not a
      function of torch or NumPy; of a dict of lists it builds, `results["loss"]`, only when it
      fills a list under that very key: a log it fills under keys it computes,
      `log[f"training.{metric}"].append(...)`, may hold the model's `.item()`s there; the model moved before the
      call, in the order the code runs: a name bound only later in the function holds
      there what it came in with);
    - it is the result of a method of an object built with a device that is not the CPU
      (`psnr = PSNR(device=device)`, then `psnr.compute()`: a metric, an environment or a module
      built on the device keeps its state there);
    - it is a parameter of a top-level function whose twin (another top-level function with the
      same two or more parameters, in the same order, in this file or in a file of the same
      folder of the project) copies the parameter of that name to the host before converting
      it (`y_targets.cpu().numpy()`): the code that calls both gives them tensors on a device,
      and the message names the twin (ignite's `roc_auc_curve_compute_fn` beside
      `roc_auc_compute_fn`, fixed in 51ba0a9430); not when every call of the function in
      its own file passes a tensor on the CPU (dgl's CPU feature-store tests beside the GPU
      test whose twin copies);
    - it is unpacked from one of those (`values, idx = out.max(1)`; `a, b = x.to(device),
      y.to(device)` places each name with its own value);
    - it is `self.NAME` that the same function set to one of those before
      (`self.scores = torch.zeros(n, device=self.device)`), or an item of a list or dict the
      function built and filled with them (`outputs = [None] * n; outputs[i] = model(x)`);
    - it is `self.NAME` of an object that is no `nn.Module` whose class stores one of those in
      every assignment of it (`None` placeholders aside), read by another method: a runner's
      `step()` keeps `self.loss = criterion(out, y)` and its `report()` converts `self.loss.data`
      (the message names the method that stores it; issue 28); what a method of such an
      object returns when its every `return` gives one of those (`out = self._forward(x)`,
      also where only one class of the file deriving from it defines that method, and
      `self.model` set by the base class's `__init__` from what every construction of it or
      of a class deriving from it without an `__init__` of its own passes);
    - it is computed, in a method of an `nn.Module` class of the file that runs once the module
      is built, from the module's own state: its parameters and buffers, what its submodules
      with weights return (`self.net(obs)`), `self(obs)` where `forward` returns such a value;
      not from the method's own arguments, whose device its callers decide. The module must be
      shown to meet an accelerator as TDL007 shows it (the file or another file of the project
      moves it, or it is a library class that its users move), and the message says which
      (tianshou's DQN priorities, `td.detach().numpy()`, fixed in 6b96f124ae; issue 28);
    - it is a value of a dict that is one of those, taken by a loop over its `.items()` or
      `.values()` (`for name, loss in output["loss"].items():` of a moved model's output);
    - it is one of those wrapped in `Variable(...)`, which returns the tensor itself;
    - it is what a plain function of the file returns when its every `return` gives one of
      those (`ys = predict(xs)` of `def predict(x): return model(x.to(device))`; the message
      names the function, issue 28);
    - it is computed from one of those by tensor methods (`out.argmax(1)`, `x.detach()`,
      `x[mask]`, `x.T`), arithmetic, or torch functions (`torch.cumprod(x, 0)`,
      `F.softmax(x, -1)`, `torch.cat([a, b])`), or by a loss given one (`loss = criterion(out,
      y)`: `analysis.is_loss`).

    A Python list that the function builds (`losses = []`) and fills with such tensors
    (`losses.append(loss)`, `preds.extend(out.argmax(1))`) is reported where NumPy reads it:
    `np.array(losses)`, `np.mean(losses)`, `np.sum`, `np.concatenate` and NumPy's other readers
    of a list (`api.NUMPY_LIST_READERS`: each element's `__array__` is `Tensor.numpy()`), a
    scikit-learn metric or a pyplot function given it (`plt.plot(losses)`). The message names
    the call that filled it. Not when something is taken out of the list (`pop`, `remove`,
    `clear`), nor for a tensor given alone to `np.mean` (that calls the tensor's own `mean`).
    So is a list written in the call, a display or a comprehension whose item is such a tensor
    (`np.sum([criterion(restored[j], target) for j in range(n)])`, MPRNet's stage losses; the
    comprehension's own names give no evidence, the names it reads from around it do), and a
    tensor stored into a NumPy array the code allocated (`g_loss[ind] = loss.data` of `g_loss =
    np.zeros((n, 1))`, `api.NUMPY_ALLOCATIONS`: NumPy converts what is stored). A number that
    a loop adds tensors into (`mse = 0`, then `mse += err * err`) holds one after it, also
    where the name is rebound after the loop (`mse = np.sqrt(mse / n)`, SANet's `validate`).
    What joins such a list (`preds = torch.cat(preds)`) or takes an item of it (`preds[0]`) is a
    tensor there too: `torch.cat(preds).numpy()` is reported (issue 28: outputs collected
    batch by batch, joined, handed to NumPy). `torch.max(out, 1)`, `torch.sort`, `torch.topk`
    and the like give their values and indices where their input is (`_, pred =
    torch.max(out, 1)`).

    A device chosen at runtime counts as an accelerator (`device = "cuda" if
    torch.cuda.is_available() else "cpu"`): the code is written to run on one, and fails there.

    Names are followed in the order the code runs, within the function that reads them:
    `x = x.cpu()` takes `x` off the accelerator for what follows. The finding is on `numpy` (for
    `.numpy()`) or on the `np.array(...)` / `np.asarray(...)` call (or the metric's, the plot's
    call: one finding for its first argument on an accelerator).

    Silent under `pytest.raises` / `assertRaises`. A line whose comment (on it, or on the line right above it) says that it fails, as the
    deliberate error demos of teaching notebooks do (`# this will error`, `# raises`, `# error!`,
    `# RuntimeError: ...`), is treated as the body of `pytest.raises` is: the failure is the
    point (`analysis.model.says_it_fails`, issue 28). A comment that only mentions an error
    (`# mean squared error`) changes nothing. A helper of the file that only such lines call
    (and no other file is expected to) is the demo too (`Analysis.holds_where_called`).
    Silent in a branch that runs only without CUDA (`x.numpy() if not train_on_gpu else
    x.cpu().numpy()`, the `else` of `if use_cuda:`, under `if not torch.cuda.is_available():`):
    what the program moves to CUDA is on the CPU there (`Guards.runs_only_without_cuda`, issue
    28).

    ## Why is this bad
    NumPy reads host memory only. Converting a tensor that lives in GPU memory fails:

    ```
    TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
    ```

    On the `meta` device, which plays the GPU in this project's runtime tests:

    ```
    TypeError: can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
    ```

    This is one of the most common crashes when a CPU script is first moved to a GPU (reported in
    pytorch-openpose's `self.model(data).numpy()` and fast-reid's `distmat.numpy()`): the code ran
    on the CPU, where `.numpy()` shares memory with the tensor, and breaks the first time it runs on
    a GPU.

    ## Example
    ```python
    def predict(model, inputs, device):
        model.to(device)
        scores = model(inputs.to(device))
        return scores.numpy()
    ```

    ## Use instead
    ```python
    def predict(model, inputs, device):
        model.to(device)
        scores = model(inputs.to(device))
        return scores.detach().cpu().numpy()
    ```

    ## Fix safety
    `--fix` inserts `.cpu()` right after the tensor: `t.numpy()` becomes `t.cpu().numpy()` and
    `np.asarray(t)` becomes `np.asarray(t.cpu())`. Where gradient recording may be on (not inside
    `torch.no_grad()` / `torch.inference_mode()`, and the chain has no `.detach()` yet), it inserts
    `.detach().cpu()`: a tensor that requires grad cannot be converted either ("Can't call numpy()
    on Tensor that requires grad"). The fix is **safe**: on a CPU tensor without history, `.cpu()`
    and `.detach()` return the same data, and on any other tensor the original call raised.

    One difference remains: on the CPU, `t.numpy()` shares memory with `t`, so writing into the
    array writes into the tensor. After `.cpu()` of a GPU tensor the array is a copy. Code that
    relies on the sharing works only on the CPU anyway.

    For a list, the fix copies what fills it: `losses.append(loss)` becomes
    `losses.append(loss.detach().cpu())`. That fix is **unsafe** (applied with
    `--unsafe-fixes`): other readers of the list get host copies without their graph
    (`torch.stack(losses).mean().backward()` would stop working). So is the fix of a display or
    comprehension written in the call (`np.sum([loss_a.detach().cpu(), ...])`): the author may
    have meant one tensor with its graph (`torch.stack([...]).sum()`), which the message offers.
    A tensor stored into a NumPy array is copied first (`g_loss[ind] = loss.data.detach().cpu()`),
    **safe** as the conversions are. A list that a helper given a moved model fills under a key
    of the dict it returns (`results = train(model, ...)`, then `np.array(results["loss"])` of
    `results = {"loss": [], ...}`) has no `.cpu()`: each item is copied
    (`np.array([t.detach().cpu() for t in results["loss"]])`), **unsafe**, since what else the
    helper puts there is its own business. A helper whose every `return` gives Python numbers,
    or lists and dicts it fills with nothing else (`loss.item()` sums), hands back no tensor:
    nothing to report (also a log it fills, `log = defaultdict(list)` then
    `log["loss"].append((step, loss.item()))`, and a method of the moved model that returns
    Python numbers, `self._text_length(text)`). A move to a CPU device an object keeps
    (`self._cpu_device = torch.device("cpu")`, then `.to(self._cpu_device)`) copies to the host.
    Nor does a moved pipeline asked for host data (diffusers'
    `pipe(prompt, output_type="np")`, also through a dict it spreads, `pipe(**inputs)` of a
    helper's `{"output_type": "np", ...}`: `Placement.asks_host_output`): its output is NumPy.

    ## Known limits
    - A helper given a moved model may copy its result to the host itself: `.numpy()` of such a
      result is reported, since only a tensor has `.numpy()`, and so is `np.asarray(...)` of it.
    - Silent when the evidence is outside the function that converts (a tensor returned by a helper
      that moved it, an attribute such as `self.buffer`), or comes from a call the analysis does not
      know (`helper(x.to(device))` may copy to the host itself).
    - Names bound in a comprehension, a lambda or an enclosing function give no evidence.
    - `ax.plot(t)` (an Axes, whose type the analysis does not know) and NumPy's other functions
      (`np.sum(t)`, which may call the tensor's own method) are not checked, nor is a metric or
      a plot given the output of a helper handed a moved model (`plt.imshow(im_convert(x))`:
      such helpers often return a NumPy array).
    - `numpy(force=True)` copies by itself and is never reported.
    - `if`/`else` branches are followed in source order: a name moved in one branch and taken back
      in the other is judged by the last one.
    """

    # The kind of finding (its message, as data; the report fills the fields).
    ON_ACCELERATOR = Message(
        "{conversion} of `{tensor}`, which is on an accelerator ({evidence}): NumPy reads host "
        "memory only (" + CONVERT_ERROR + "); copy it first: `{written}`")

    # ``roc_curve(labels, scores)``, ``plt.imshow(img)``: a function that reads its arguments
    # through NumPy (scikit-learn's metrics, pyplot's plotting functions), given the tensor
    READ_AS_ARRAY = Message(
        "`{callee}()` reads `{tensor}` as a NumPy array, and it is on an accelerator "
        "({evidence}): NumPy reads host memory only (" + CONVERT_ERROR + "); copy it first: "
        "`{written}`")
    # ``np.mean(losses)`` of ``losses.append(loss)``: a list of tensors on an accelerator
    LIST_ON_ACCELERATOR = Message(
        "{conversion} of `{tensor}`, a list that `{added}` fills with tensors on an accelerator "
        "({evidence}): NumPy reads host memory only (" + CONVERT_ERROR + "); add them to the "
        "list on the host: `{written}`")
    # ``np.sum([criterion(out[j], y) for j in ...])``: a list display of tensors on one
    ITEMS_ON_ACCELERATOR = Message(
        "{conversion} of a list whose item `{item}` is on an accelerator ({evidence}): NumPy "
        "reads host memory only (" + CONVERT_ERROR + "); copy each item to the host "
        "(`{written}`), or join them with torch (`torch.stack([...])`) to keep them there")
    # ``g_loss[ind] = loss.data`` into ``g_loss = np.zeros((n, 1))``
    STORED_IN_ARRAY = Message(
        "`{tensor}` is stored into `{array}`, a NumPy array, and it is on an accelerator "
        "({evidence}): NumPy reads host memory only (" + CONVERT_ERROR + "); copy it first: "
        "`{written}`")
    code = "TDL008"
    name = "numpy-of-device-tensor"
    summary = "`.numpy()` / `np.asarray()` of a tensor that lives on an accelerator"
    fixable = True
    facts = frozenset(("kinds", "placement", "devices", "grad", "guards", "modules", "project"))
    # A conversion (``.numpy(``, ``np.array(``, ``np.asarray(``) and evidence of a device:
    # a move (``.to(`` / ``.cuda(``, also what moves a model) or a factory's ``device=``.
    # (``.cpu(``: a twin that copies its parameter to the host, ``Placement.copied_by_twin``)
    required_text = (r"numpy|array|sklearn|matplotlib|pandas",
                     rf"{method_call_text('to', 'cuda', 'cpu')}|\bdevice\b|{CUDA_TENSOR_TYPE_TEXT}")
    could_report_in = staticmethod(numpy_of_moved_in)  # (in prefilter: no LibCST there)
    valid = (
        # copied to the host first
        "import torch\n\n\ndef f(device):\n    x = torch.zeros(2).to(device)\n"
        "    return x.cpu().numpy()\n",
        # a dtype conversion moves nothing (the model is on the device, not this tensor)
        "import torch\nmodel = Net().to(\"cuda\")\nx = torch.zeros(2).to(torch.float64)\n"
        "print(x.numpy())\n",
        # moved back before the conversion
        "import torch\n\n\ndef f(device):\n    x = torch.zeros(2).to(device)\n    x = x.cpu()\n"
        "    return x.numpy()\n",
        # numpy(force=True) copies to the host itself (and a CPU tensor's conversion is fine)
        "import torch\n\n\ndef f(device):\n    x = torch.zeros(2, device=device)\n"
        "    return x.numpy(force=True), torch.zeros(2).numpy()\n",
    )
    invalid = (
        ("import torch\n\n\ndef f(device):\n    x = torch.zeros(2).to(device)\n"
         "    return x.numpy()\n", ((6, 14),)),
        ("import numpy as np\nimport torch\n\n\ndef f(device):\n"
         "    model = torch.nn.Linear(2, 2).to(device)\n    with torch.no_grad():\n"
         "        out = model(torch.zeros(1, 2, device=device))\n"
         "    return np.asarray(out.softmax(-1))\n", ((9, 12),)),
        # a metric that reads its arguments as NumPy arrays (scikit-learn's)
        ("import torch\nfrom sklearn.metrics import roc_auc_score\n\n\n"
         "def f(labels, device):\n    scores = torch.rand(len(labels), device=device)\n"
         "    return roc_auc_score(labels, scores)\n", ((7, 12),)),
    )

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        self.analysis = analysis
        collected = analysis.collected
        for site in collected.calls_by_name.get("numpy", ()):
            func = site.call.func
            if isinstance(func, cst.Attribute) and not site.call.args:
                yield from self._check(site, func.attr, func.value, "`.numpy()`")
        for name in _NUMPY_READER_NAMES:  # (``np.array``/``np.asarray`` among them)
            for site in collected.calls_by_name.get(name, ()):
                positional = [a.value for a in site.call.args if a.keyword is None and not a.star]
                qualified = analysis.qualname(site.call.func, site.ctx.scope)
                if not positional or qualified not in _NUMPY_READERS:
                    continue
                if qualified in _NUMPY_FUNCTIONS or qualified in api.NUMPY_TENSOR_READERS:
                    # ``np.argmax(out, axis=1)``, ``np.save(path, feats)``: the first argument
                    # on an accelerator (the fix copies it; the next pass finds another)
                    reader = qualified in api.NUMPY_TENSOR_READERS
                    for argument in positional:
                        found = list(self._check(site, site.call, argument, f"`np.{name}()`",
                                                 needs_a_tensor=reader))
                        if found:
                            yield from found
                            break
                elif not analysis.holds_where_called(site.ctx, expects_failure, "fails"):
                    # (a tensor given alone: ``np.mean(t)`` is ``t.mean()``)
                    yield from self._list_check(site, positional[0], f"`np.{name}()`")
        yield from self._stores_into_arrays()
        for site in self._host_reading_calls():
            # ``roc_curve(labels, scores)``, ``plt.imshow(img)``: the first argument on an
            # accelerator (the fix copies it; the next pass finds another)
            for arg in site.call.args:
                if arg.star:
                    continue
                found = list(self._check(site, site.call, arg.value, None))
                if found:
                    yield from found
                    break

    def _stores_into_arrays(self) -> Iterator[Violation]:
        """``g_loss[ind] = loss.data`` into ``g_loss = np.zeros((n, 1))``: an item stored into
        a NumPy allocation (``api.NUMPY_ALLOCATIONS``, the only value the name is bound to in
        its function or module) is converted through NumPy, so a tensor on an accelerator
        fails there (issue 28: Learning-to-See-in-the-Dark's loss log)."""
        analysis = self.analysis
        if not analysis.collected.item_stores or not any(
                name in analysis.collected.calls_by_name for name in api.NUMPY_ALLOCATION_NAMES):
            return
        arrays: dict = {}  # (id(owner scope), name) -> whether it is bound only to an allocation

        def allocated(owner, name: str) -> bool:
            key = (id(owner), name)
            if key not in arrays:
                bindings = owner.bindings.get(name, ())
                arrays[key] = bool(bindings) and all(
                    b.how == ASSIGN and not b.path and isinstance(b.value, cst.Call)
                    and analysis.qualname(b.value.func, b.ctx.scope) in api.NUMPY_ALLOCATIONS
                    for b in bindings)
            return arrays[key]

        for node, ctx in analysis.collected.item_stores:
            if len(node.targets) != 1:
                continue
            target = node.targets[0].target
            array = target.value.value
            owner = ctx.scope.resolve(array)
            if owner is None or not allocated(owner, array) or \
                    analysis.holds_where_called(ctx, expects_failure, "fails") or \
                    analysis.runs_only_without_cuda(ctx):
                continue
            value = node.value
            evidence = analysis.on_accelerator(value, ctx.scope)
            if evidence is None or evidence.given is not None:
                continue
            detach, copied = self._host_copy(value, ctx)
            yield Violation(value, self.STORED_IN_ARRAY(
                tensor=source_of(value), array=array, evidence=evidence.describe(),
                written=f"{source_of(target)} = {copied}"), CopyToHost(value, detach))

    def _host_reading_calls(self) -> Iterator[CallSite]:
        """The calls of functions outside torch that read their arguments through NumPy
        (``api.reads_host_arrays``: scikit-learn's metrics, pyplot's plotting functions),
        imported by name or called on their module's alias (``plt.plot``)."""
        analysis = self.analysis
        collected = analysis.collected
        functions, modules = set(), set()
        for qualified, bound in collected.imported_as.items():
            if qualified in api.HOST_READING_MODULES:
                modules |= bound
            elif api.reads_host_arrays(qualified) and qualified not in _NUMPY_FUNCTIONS:
                functions |= bound
        if not functions and not modules:
            return
        for name, sites in collected.calls_by_name.items():
            if name is None:
                continue
            for site in sites:
                func = site.call.func
                if not (isinstance(func, cst.Name) and name in functions) and not (
                        isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                        and func.value.value in modules):
                    continue
                qualified = analysis.qualname(func, site.ctx.scope)
                if qualified is not None and qualified not in _NUMPY_FUNCTIONS and \
                        api.reads_host_arrays(qualified):
                    yield site

    def _check(self, site: CallSite, node: cst.CSTNode, tensor: cst.BaseExpression,
               conversion: Optional[str], needs_a_tensor: bool = False):
        if self.analysis.holds_where_called(site.ctx, expects_failure, "fails"):
            return  # under pytest.raises, or a line whose comment says it errors (also
            # where every call of the helper that holds it is)
        if self.analysis.runs_only_without_cuda(site.ctx):
            return  # ``x.numpy() if not train_on_gpu else x.cpu().numpy()``: on the CPU there
        evidence = self.analysis.on_accelerator(tensor, site.ctx.scope)
        if evidence is None and conversion is not None:
            # in a method of a module: what its own state makes is where the module is
            # (tianshou's ``td = r - self(batch).logits`` ... ``td.detach().numpy()``)
            evidence = self.analysis.on_module_device(tensor, site.ctx.scope)
        if evidence is None:
            yield from self._list_check(
                site, tensor, conversion or f"`{source_of(site.call.func)}()`")
            return
        if (conversion is None or needs_a_tensor) and (
                evidence.given is not None or evidence.built is not None):
            # a helper given a model may give back a NumPy array (``im_convert(x)``), a
            # metric's ``compute()`` a float, and NumPy's functions take those too
            # (``np.exp(train_loss)`` of a loss summed with ``.item()``)
            return
        if evidence.given is not None and self._list_of_helper(tensor, site.ctx.scope, site) and \
                not self._filled_under_its_key(tensor, site.ctx.scope, site):
            # ``np.array(log["training.ELBO"])`` of a log the helper fills only under keys it
            # computes (``log[f"training.{metric}"].append((step, value))``): which of its
            # values land under this key is not in the text, so the model it was given is no
            # evidence for them (uvadlc's NVIL logs, whose entries but the loss are ``.item()``s)
            return
        detach, copied = self._host_copy(tensor, site.ctx)
        shown = source_of(tensor)
        fix = CopyToHost(tensor, detach)
        if evidence.given is not None and self._list_of_helper(tensor, site.ctx.scope):
            # a list a helper given a moved model fills (``results["train_loss"]``) has no
            # ``.cpu()``: each of its items is copied (unsafe: what else it holds is the
            # helper's business)
            suffix = (".detach()" if detach else "") + ".cpu()"
            copied = each_applied(source_of(tensor), suffix)
            fix = EachItem(tensor, suffix, "copy each item to the host first")
        if conversion is None:  # a function that reads its arguments through NumPy
            yield Violation(
                node,
                self.READ_AS_ARRAY(callee=source_of(site.call.func), tensor=shown,
                                   evidence=evidence.describe(), written=copied),
                fix)
            return
        written = f"{copied}.numpy()" if node is not site.call else \
            f"{source_of(site.call.func)}({copied})"
        yield Violation(
            node,
            self.ON_ACCELERATOR(conversion=conversion, tensor=shown,
                                evidence=evidence.describe(), written=written),
            fix)

    def _helper_lists(self, value, scope, site: Optional[CallSite] = None):
        """(helper, key) for ``results["train_loss"]`` of ``results = train(model, ...)``, a
        plain function of this file; else None. With ``site``, the binding of ``results``
        that reaches it (a notebook's ``log = train_exact(...)``, later ``log =
        train_vae(...)``)."""
        if not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name)
                and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Index)):
            return None
        key = string_value(value.slice[0].slice.value)
        bound = scope.lookup(value.value.value)
        if site is not None and len(bound) > 1:
            bound = self.analysis.reaching_bindings(value.value.value, site)
        if key is None or len(bound) != 1 or bound[0].how != ASSIGN or bound[0].path or \
                not isinstance(bound[0].value, cst.Call):
            return None
        helper = self.analysis.helper_called(bound[0].value, bound[0].ctx.scope)
        if helper is None or not helper.returns:
            return None
        return helper, key

    def _filled_under_its_key(self, value, scope, site: Optional[CallSite] = None) -> bool:
        """The helper that built ``results`` (``_list_of_helper``) fills some list of it under
        the very key ``value`` reads (``results["train_loss"].append(loss)``), not only under
        keys it computes (``log[f"training.{metric}"]``)."""
        found = self._helper_lists(value, scope, site)
        if found is None:
            return False
        helper, key = found
        names = {returned.value for returned, _ in helper.returns if isinstance(returned, cst.Name)}
        for node in walk_code(helper.node.body):
            target = None
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                    node.func.attr.value in api.LIST_ADDING_METHODS:
                target = node.func.value
            elif isinstance(node, cst.Assign) and len(node.targets) == 1:
                target = node.targets[0].target
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and \
                    target.value.value in names and len(target.slice) == 1 and \
                    isinstance(target.slice[0].slice, cst.Index) and \
                    string_value(target.slice[0].slice.value) == key:
                return True
        return False

    def _list_of_helper(self, value, scope, site: Optional[CallSite] = None) -> bool:
        """``results["train_loss"]`` of ``results = train(model, ...)``, a function of this
        file whose every ``return`` gives a dict it binds with a list display under that key
        (``results = {"train_loss": [], ...}``), or a ``defaultdict(list)`` (``log =
        defaultdict(list)``): a list, not a tensor."""
        found = self._helper_lists(value, scope, site)
        if found is None:
            return False
        helper, key = found
        for returned, ctx in helper.returns:
            made = ctx.scope.lookup(returned.value) if isinstance(returned, cst.Name) else ()
            if len(made) != 1 or made[0].how != ASSIGN or made[0].path:
                return False
            made_value = made[0].value
            if isinstance(made_value, cst.Call) and len(made_value.args) == 1 and \
                    self.analysis.qualname(made_value.func, ctx.scope) == "collections.defaultdict" \
                    and isinstance(made_value.args[0].value, cst.Name) and \
                    made_value.args[0].value.value == "list":
                continue  # ``defaultdict(list)``: a list under every key
            if not isinstance(made_value, cst.Dict):
                return False
            if not any(isinstance(e, cst.DictElement) and string_value(e.key) == key
                       and isinstance(e.value, cst.List) for e in made_value.elements):
                return False
        return True

    def _list_check(self, site: CallSite, listed: cst.BaseExpression, conversion: str):
        """``listed`` is a list the function builds (``losses = []``) and fills, before
        ``site``, with a tensor on an accelerator (``losses.append(loss)``): one finding on
        ``site``'s call, naming the first such ``append``/``extend``. The fix copies what that
        call adds to the host; unsafe, since what else reads the list is not known."""
        if self.analysis.runs_only_without_cuda(site.ctx):
            return
        if isinstance(listed, (cst.ListComp, cst.List)):
            yield from self._display_check(site, listed, conversion)
            return
        if not isinstance(listed, cst.Name):
            return
        added = self.analysis.appended_to(listed.value, site.ctx.scope, site.order,
                                          api.LIST_ADDING_METHODS)
        for adding in added or ():
            value = adding.call.args[0].value
            evidence = self.analysis.on_accelerator(value, adding.ctx.scope)
            if evidence is None or evidence.given is not None:
                continue
            detach, copied = self._host_copy(value, adding.ctx)
            yield Violation(site.call, self.LIST_ON_ACCELERATOR(
                conversion=conversion, tensor=listed.value, added=source_of(adding.call),
                evidence=evidence.describe(),
                written=f"{source_of(adding.call.func)}({copied})"),
                CopyToHost(value, detach, safe=False))
            return

    def _host_copy(self, tensor: cst.BaseExpression, ctx) -> tuple:
        """(whether the copy detaches, the code of the copy): ``.detach().cpu()`` where grad
        may be on and the chain has no ``.detach()`` yet (a tensor that requires grad cannot
        be converted either), else ``.cpu()``; an operation parenthesized first. What every
        finding's advice writes and ``CopyToHost`` inserts."""
        detach = self.analysis.grad_recording(ctx) is not False and not _without_history(tensor)
        suffix = (".detach()" if detach else "") + ".cpu()"
        return detach, call_on_text(source_of(tensor), tensor, suffix)

    def _display_check(self, site: CallSite, listed, conversion: str):
        """``np.sum([criterion(restored[j], target) for j in ...])``, ``np.array([a, b])``: a
        list display or comprehension whose item (each element of a display, the element of a
        comprehension) is a tensor on an accelerator. The fix copies the item to the host;
        unsafe, since the author may have meant the items to stay one tensor with its graph
        (MPRNet sums its stages' losses to backpropagate them: ``torch.stack([...]).sum()``)."""
        items = [listed.elt] if isinstance(listed, cst.ListComp) else [
            e.value for e in listed.elements if not isinstance(e, cst.StarredElement)]
        for item in items:
            evidence = self.analysis.on_accelerator(item, site.ctx.scope)
            if evidence is None or evidence.given is not None:
                continue
            detach, copied = self._host_copy(item, site.ctx)
            yield Violation(site.call, self.ITEMS_ON_ACCELERATOR(
                conversion=conversion, item=source_of(item), evidence=evidence.describe(),
                written=copied), CopyToHost(item, detach, safe=False))
            return


def _without_history(expr: cst.BaseExpression) -> bool:
    """``t.detach()``, ``t.detach().clone()``: a chain through ``detach`` has no history."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        if last_name(expr.func) in _WITHOUT_HISTORY:
            return True
        expr = expr.func.value
    return False
