"""TDL007: inside ``forward`` of an ``nn.Module`` (or a method ``forward`` calls on ``self``),
a torch factory without ``device=`` creates a tensor on the CPU that then meets a tensor on
the module's device: an input, a parameter, a buffer, a weighted submodule's output.

Reported where the factory's result, as it is (not moved with ``.to(x.device)`` /
``.type_as(x)``, not reduced to a 0-dim value), is combined with such a tensor: arithmetic,
comparisons, a combining tensor method (``.masked_fill``, ``.matmul``), a torch function given
both (``torch.cat``, ``torch.where``; not as an index), or an argument of a submodule with
weights (an RNN's initial hidden state). Once the module is on a GPU this raises
``RuntimeError: Expected all tensors to be on the same device``. 0-dim factories
(``torch.tensor(0.5)``, ``torch.zeros(())``) combine with device tensors and are silent, as are
``*_like`` / ``x.new_*`` creations and uses as an index or a shape.

Fix: add ``device=<tensor>.device`` to the factory, naming the input the result meets (or, when
none is at hand, another input of the method or a parameter of the module). Safe when that
tensor is an argument of ``forward`` used in the very expression that creates the tensor;
unsafe otherwise (the tensor named may live elsewhere than the one it meets).

Only with evidence that the module meets an accelerator (``ModuleClasses.accelerator_evidence``,
named in the message): the file moves an instance, or uses an accelerator at all, or runs no
program (a library class, moved by its users). A script or notebook that never names a device
keeps its model on the CPU: silent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Set

import libcst as cst

from torchdevlint.analysis import (
    ARITHMETIC_OPERATORS, ASSIGN, PARAM, SAME_DEVICE_ERROR, Analysis, FunctionInfo, ModuleState, argument_for_parameter,
    holds, is_number, positional_items,
    keyword_value, last_name, root_name, api, factory_dimensions, makes_an_empty_tensor, walk_code,
)
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import EachItem, FixContext, each_moved
from torchdevlint.fixes.model import Edit, Fix, FixPlan
from torchdevlint.rules.base import Message, Rule, Violation, source_of
from torchdevlint.rules.prefilter import (
    LAYERS_WITH_WEIGHTS, OFF_DEVICE_FACTORIES, off_device_factory_in,
)


# Tensor methods whose result keeps the receiver's device and at least its dimensions.
_SHAPE_KEEPING = api.SHAPE_KEEPING_METHODS
# Elementwise math (a method, or a torch function of its first argument).
_ELEMENTWISE = api.ELEMENTWISE
# (and ``torch.zeros_like(x)``, made where ``x`` is with its shape: tudrl's ``x_tilde_f``)
_OF_FIRST_ARGUMENT = api.TRIANGLE_FUNCTIONS | _ELEMENTWISE | api.LIKE_FACTORIES
# Torch functions whose other arguments are numbers, not tensors to meet.
_NOT_MEETING = frozenset(("multinomial",))


@dataclass
class AddDevice(FixPlan):
    """Add ``device=<tensor>.device`` to the factory call."""

    factory: cst.Call
    device: str
    safe: bool

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        args = self.factory.args
        if not args:
            return None
        end = ctx.span(args[-1].value)[1]
        text = f", device={self.device}"
        return Fix(finding.code, self.safe, f"create it on the device (`device={self.device}`)",
                   (Edit(end, end, text),))


@dataclass
class MoveThere(FixPlan):
    """Append ``.to(<tensor>.device)`` to a legacy constructor (``torch.Tensor([...])``),
    which takes no device but the CPU."""

    factory: cst.Call
    device: str
    safe: bool

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        end = ctx.span(self.factory)[1]
        return Fix(finding.code, self.safe, f"move it to the device (`.to({self.device})`)",
                   (Edit(end, end, f".to({self.device})"),))


class TensorCreatedOffDevice(Rule):
    """
    ## What it does
    Reports a torch factory call without `device=` (`torch.zeros`, `ones`, `empty`, `full`,
    `arange`, `eye`, `rand`, `randn`, `randint`, `randperm`, `linspace`, `logspace`,
    `torch.tensor([...])` of a list, the legacy constructors `torch.Tensor([...])`,
    `torch.FloatTensor(...)`) inside `forward` of an `nn.Module`, or inside a method that
    `forward` calls on `self` (transitively; a static method too, given its arguments as they
    are: TTS's `self._make_ga_mask(ilen, olen, sigma)`), when its result, as it is, meets a
    tensor on the
    module's device in the same method, or in the method it is returned to (issue 28: an
    `init_hidden` helper that returns `torch.zeros(...)`, or a tuple of them, to `forward`,
    which hands them to an LSTM: `h0, c0 = self.init_hidden(n)`, `hidden = self.init_hidden(n)`
    of a tuple `return h0, c0` handed on whole (each of its factories is reported);
    or a submodule of a class of the file whose `forward` returns a placeholder made on the CPU,
    `self.masked(out, y)`, which its owner adds to its losses; or a top-level function of the
    file that returns a CPU tensor to the method, `mask = subsequent_mask(T)` of `return
    torch.triu(torch.ones(1, T, T), diagonal=1) == 0`). In a LightningModule, its steps
    (`training_step`, `validation_step`, `test_step`, `predict_step`) and the methods they call
    count as `forward` does: the Trainer runs them on the module's device with the batch
    moved there (their first argument, and what is unpacked or indexed out of it), and
    `self(...)` given such a tensor is the module's output there. So do the methods that the
    file calls on an instance it moved to a device before the call (`model = VAE().to(device)`,
    then `model.sample(16)`; issue 28: a VAE's `sample` or a GAN's `generate` makes its noise
    with `torch.randn(n, k)` and decodes it with the GPU weights), and what they call on
    `self`; a call before the move (`model.warm_up(2)`, then `model.to(device)`) runs on the
    CPU. Such methods count in a module class that has no `forward` at all (a scene whose
    `face_colors()` the program calls on the moved model). A top-level function of the
    file that one of these methods calls with a tensor on the module's device is checked as
    the method is (`causal_attention(q, k, v)`, which masks `q @ k.T` with
    `torch.ones(T, T).tril()`: its tensor parameters are on that device):

    - arithmetic (shifts and bitwise operators included) or a comparison (`x + pos`,
      `scores * mask`, `torch.ones(1) << exponent`);
    - a combining tensor method (`scores.masked_fill(mask == 0, ...)`, `x.matmul(m)`);
    - a torch function given both, not as an index (`torch.cat([x, pad])`, `torch.where(...)`);
    - an argument of a registered submodule with weights (an RNN's initial hidden state,
      `self.rnn(x, h0)`, `self.rec(h)`, also bound to a tuple by name first, `states = (h,
      h)`; an RNN's input, whose error names the layer's parameters: "Input and parameter
      tensors are not at the same device");
    - indexing it with a tensor on the module's device (`values[self.opacities() > 0.4]`),
      or giving it such an index (`.gather`, `.scatter_`, `index_select`), or giving it as the
      index (or mask) of such a tensor to one of those (`x.index_select(1, torch.arange(n))`:
      unlike plain indexing, they refuse a CPU index into a tensor on the device);
    - an argument of a function of the file that combines it there with another argument on
      the module's device, in one of the ways above: a plain function (`add_noise(h, noise)`
      of `def add_noise(x, noise): return x + noise`), a static method called through its
      class, or the static `forward` of a custom `torch.autograd.Function` (`Op.apply(x,
      weight, mask)`); the message names the function and the operation there.

    "A tensor on the module's device" is what TDL005 uses: the method's tensor arguments (an
    argument indexed by dimensions, `x[:, None]`, is one: a list takes no such index; so is
    `forward`'s input, without a default or an annotation, in arithmetic),
    registered parameters and buffers, outputs of weighted submodules, and what is computed from
    them (through a plain function of the file given one, `scores = transport(scores,
    self.bin_score)`, and the `.values` / `.indices` of a named tuple a name holds, `best =
    scores.max(2)`: BasicPBC's matches, issue 28); in a helper method, also a parameter that each of its calls on `self` in the class gives
    such a tensor (a VAE's `self.reparameterize(mu, logvar)` of the encoder's outputs, whose
    `torch.randn(std.size())` then meets `std`; a helper that is also handed on as a callback, or
    that one call gives a CPU tensor, gets nothing from its calls). "As it is" means still on the
    CPU (tracked flow-sensitively: a `.to(x.device)` before the use silences it) and with at least one dimension: `torch.tril(...)` of it, slices, casts,
    reshapes and elementwise math keep it, and so do `torch.zeros_like(...)` of it (made where it
    is: tudrl's `x_tilde_f`), `torch.cat`/`torch.stack` of it and the parts
    of `torch.meshgrid` / `torch.broadcast_tensors` / `torch.split` of it (`yv, xv =
    torch.meshgrid(torch.arange(ny), torch.arange(nx))`, a detection head's grid); a reduction
    (`.sum()`), `.type_as(x)` or any call the analysis does not know end the trail. The other CPU
    factories given to the same `meshgrid`, `cat` or `stack` are reported with it: creating one
    alone on the device would leave that call mixing devices.

    The finding is on the factory call.

    A torch.nn layer with weights (`nn.Linear`, the convolutions, the norms, `nn.Embedding`,
    the RNNs: `torch_api.LAYERS_WITH_WEIGHTS`) built without `device=` in such a method and
    called there with a tensor on the module's device is reported the same way, on the
    constructor call: `x = nn.BatchNorm2d(num_features=self.features)(x)` in `forward`, or
    `classifier = nn.Linear(d, 3)` then `classifier(x)`. Its weights are made on the CPU at
    every call (and, not being registered, are never trained). Its fix adds
    `device=x.device` and is unsafe: the layer then runs, with new weights each call; build it
    once in `__init__`.

    **Evidence of an accelerator** (issue 28): the module must be able to meet one, and the
    message names what shows it:

    - *this file moves it*: a `.to(<device>)`, `.cuda()` or DataParallel/DDP wrapper of an
      instance of the class (`model = Net(); model.to(device)`, `Net().cuda()`);
    - *this file uses an accelerator*: any other move or device in the file (`.to(device)`,
      `.cuda()`, `device=<device>`, `torch.set_default_device(<device>)`), the device being
      anything but the CPU or a dtype (`.to(torch.float64)` is no evidence);
    - *a Lightning Trainer*: for a LightningModule, a `Trainer(...)` of the file not told
      `accelerator="cpu"` (its default, `"auto"`, takes the GPU where there is one);
    - *a library class*: the file runs no program (no `if __name__ == "__main__":`, no loop and no
      call of the file's own classes or functions at its top level), so the class is imported and
      moved by its users, wherever they run it. Such a class is reported without evidence in the
      file: a library cannot know its users' device, and its users' GPU run is the one that fails.
      Not so a class no user can get hold of: the class, and every class of the file that holds
      or extends it, is private (`_Name`), and each instance the file makes stays in the file's
      own code (not made at module level, not handed to another call, not returned from a public
      function, directly or through private ones), as torchmetrics' NISQA network built and run
      on the CPU by its functional metric (`fixtures/TDL007/negative/private_library_network.py`).

    A script or notebook that defines the class and runs a program without any of these keeps the
    model on the CPU: the factory meets only CPU tensors, the promised error cannot happen, and
    the rule is silent.

    ## Why is this bad
    A module moved to the GPU runs `forward` on GPU inputs and parameters, but a factory without
    `device=` creates its tensor on the CPU. The first operation that combines the two raises:

    ```
    RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
    ```

    An operation with its own device check says it in its own words; `masked_fill` with a CPU
    mask on a GPU (seen on an H200):

    ```
    RuntimeError: expected self and mask to be on the same device, but got mask on cpu and self on cuda:0
    ```

    Indexing the CPU tensor with indices on the GPU (`weights[ids]`) is refused by the indexing
    itself (under the pretend accelerator, as torch words it on a GPU); `scatter_`, `gather`
    and `index_select` of it with a GPU index say "but got index is on cuda:0":

    ```
    RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
    ```

    For `nn.RNN`/`LSTM`/`GRU` given an initial state made so (an `init_hidden` helper), the RNN
    checks its input and hidden state first, on a GPU and on `meta` alike:

    ```
    RuntimeError: Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor at cpu
    ```

    Given an input made so (tudrl's `self.LSTM_outer(x_tilde_f)`), it names its parameters:

    ```
    RuntimeError: Input and parameter tensors are not at the same device, found input tensor at cpu and parameter tensor at cuda:0
    ```

    On the `meta` device, which plays the GPU in this project's runtime tests:

    ```
    RuntimeError: Tensor on device cpu is not on the expected device meta!
    RuntimeError: Tensor on device meta is not on the expected device cpu!
    ```

    The code works on a CPU-only machine, so the bug shows up only when someone first trains on a
    GPU. Typical sources: `h = torch.zeros(batch, hidden)` in an RNN's `forward`,
    `mask = torch.tril(torch.ones(T, T))` in an attention `forward`.

    ## Example
    ```python
    class CausalAttention(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.qkv = nn.Linear(d, 3 * d)

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            scores = q @ k.transpose(1, 2)
            T = x.size(1)
            mask = torch.tril(torch.ones(T, T))
            scores = scores.masked_fill(mask == 0, float("-inf"))
            return scores.softmax(-1) @ v
    ```

    ## Use instead
    ```python
    class CausalAttention(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.qkv = nn.Linear(d, 3 * d)

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            scores = q @ k.transpose(1, 2)
            T = x.size(1)
            mask = torch.tril(torch.ones(T, T, device=x.device))
            scores = scores.masked_fill(mask == 0, float("-inf"))
            return scores.softmax(-1) @ v
    ```

    ## Fix safety
    `--fix` adds `device=<tensor>.device` as the factory's last argument. The tensor named is the
    method argument that the result meets (else another tensor argument of the method, else a
    parameter or buffer of the module, else, for a module whose layers hold weights,
    `next(self.parameters()).device`: a VAE's `sample(n)` is given no tensor). The fix is safe
    when that tensor is an argument of `forward` used in the very expression that creates the
    tensor (it is on the device the result must be on); otherwise it is unsafe (`--unsafe-fixes`): the tensor named may sit elsewhere than
    the one the result meets, or may be rebound before the factory runs. A factory in a helper
    that returns it (the names of the method where it meets the device are not there) gets the
    device of a tensor the helper is given, else, in a method of the same class,
    `device=next(self.parameters()).device`; both unsafe (a module without parameters makes
    `next()` raise). In a LightningModule the device is the module's own, `self.device`
    (unsafe too: its batch may be a tuple, so no input names one). A factory in a top-level function that returns it (`subsequent_mask`) is
    left as it is (the function's other callers may want the CPU): its result is moved where
    the method gets it, `subsequent_mask(T).to(x.device)`, unsafe.

    ## Known limits
    - A factory in a branch that runs only without CUDA (the `else` of `if
      torch.cuda.is_available():`, `if not use_cuda:`; `Guards.runs_only_without_cuda`) meets
      no accelerator: the program moves nothing there either.
    - A tensor returned by a helper is followed from a method of the same class called on
      `self`, or from the `forward` of a submodule whose `nn.Module` class is in the file (without
      `__call__`), when one of its `return`s gives it (for unpacking, its one `return` of a tuple
      display); a tensor kept on `self` is TDL005's, and one returned by a plain function is
      followed when every `return` of it gives a CPU tensor (made in its own body). A helper's
      parameter that it rebinds to a factory (`if H is None: H = torch.zeros(...)`; `return H`)
      gives the factory's tensor, the one the default path makes.
    - A tensor handed as an argument to another method of the class called on `self`
      (`combined = self.make_combined_mask(attention_mask, layer_mask)`) is followed into that
      method when the method does not rebind the parameter; the message names the method that
      hands it on.
    - What a method of the class called on `self` returns is on the module's device when every
      one of its `return`s is, given the tensors on the device that the call hands it
      (`pt = self._calc_pt(target, x)` of `return (target * x).sum(-1)`).
    - 0-dim factories (`torch.tensor(0.5)`, `torch.zeros(())`) and factories with a literal `0`
      in their size (empty placeholders) are silent; `torch.tensor(data)` counts only when `data`
      is a list or tuple (`analysis.kinds.is_sequence`: a non-empty literal, a comprehension, a
      concatenation or slice of one, a name bound only to those, a parameter annotated
      `list[...]`/`tuple[...]`/`Sequence[...]`, or `self.NAME` that every assignment in its
      class binds to one: `torch.tensor(self.scales)` of `self.scales = [1.0, 2.0]`). A size with `*shape` counts when a size written
      out beside it gives a dimension (`torch.zeros(n, *y.shape[1:])`).
    - A legacy constructor takes no device but the CPU: its fix appends `.to(<tensor>.device)`.
    - `torch.multinomial(torch.ones(n), k)` is not a meeting (its other arguments are numbers).
    - A method argument used as a tensor counts as on the module's device even in a helper that a
      caller might give a CPU tensor.
    - Classes that override `_apply`, `to` or `cuda` are skipped.
    - The evidence is read in the file only: a script that imports its model class from another
      file of the project and moves it there is judged by that other file (a library class is
      reported; a script's own class is silent when the script names no device).
    """

    # The kind of finding (its message, as data; the report fills the fields).
    CREATED_OFF_DEVICE = Message(
        "`{factory}(...)` without `device=` creates a tensor on the CPU in `{module}.{method}`, "
        "which runs on the module's device ({evidence}), and `{meeting}` {where}: {error}; "
        "{advice}")

    # ... made in a method of the class that returns it to the one where it meets the device
    # (``h0, c0 = self.init_hidden(n)`` in ``forward``, issue 28)
    RETURNED_OFF_DEVICE = Message(
        "`{factory}(...)` without `device=` creates a tensor on the CPU in `{helper}`, "
        "which returns it to `{module}.{method}`, which runs on the module's device "
        "({evidence}), and `{meeting}` {where}: {error}; {advice}")

    # ... made in a top-level function of the file that a method of the module gives a tensor
    # on its device (``attention(q, k, v)`` called in ``forward``, issue 28)
    GIVEN_THE_DEVICE = Message(
        "`{factory}(...)` without `device=` creates a tensor on the CPU in `{helper}`, which "
        "`{module}.{method}` gives a tensor on the module's device ({evidence}), and `{meeting}` "
        "{where}: {error}; {advice}")

    # ... made elsewhere in the class and handed as an argument to the method where it meets
    # the device (``self.make_combined_att_mask(attention_mask, layer_mask)``, issue 28)
    PASSED_OFF_DEVICE = Message(
        "`{factory}(...)` without `device=` creates a tensor on the CPU in `{helper}`; "
        "`{module}.{caller}` hands it to `{module}.{method}`, which runs on the module's device "
        "({evidence}), and `{meeting}` {where}: {error}; {advice}")

    # ... a torch.nn layer with weights built in a method that runs on the module's device and
    # called there with a tensor on it (``nn.BatchNorm2d(num_features=n)(x)`` in ``forward``)
    LAYER_BUILT_OFF_DEVICE = Message(
        "`{layer}(...)` builds a layer with new weights on the CPU in `{module}.{method}`, which "
        "runs on the module's device ({evidence}), and `{meeting}` gives it a tensor on the "
        "module's device: {error}; build it once in `__init__` as a submodule of the module, "
        "where it is registered, moved with it and trained")

    code = "TDL007"
    name = "tensor-created-off-device"
    summary = "A tensor created without `device=` in `forward` meets the module's device tensors"
    fixable = True
    facts = frozenset(("kinds", "placement", "devices", "modules", "project", "guards"))
    # A class of a file that names torch, calling a factory (named or imported by its name).
    # (``def forward`` is no longer required: a module without one has methods the program
    # calls on the moved instance; the ast prefilter decides.)
    required_text = (r"\bclass\b", r"\btorch\b",
                     r"\b(?:" + "|".join(sorted(OFF_DEVICE_FACTORIES | LAYERS_WITH_WEIGHTS))
                     + r")\b")
    valid = (
        # used as an index: a CPU index tensor works with a tensor on any device
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
        "    def forward(self, x):\n        index = torch.arange(x.size(1))\n"
        "        return x[:, index]\n",
        # moved before use
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
        "    def forward(self, x):\n        mask = torch.ones(x.size(1)).to(x.device)\n"
        "        return x * mask\n",
        # 0-dim: combines with device tensors
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
        "    def forward(self, x):\n        return x.unsqueeze(0) * torch.tensor(0.5)\n",
    )
    invalid = (
        ("import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
         "    def forward(self, x):\n        mask = torch.ones(x.size(1))\n"
         "        return x * mask\n", ((7, 16),)),
        # a private class that a public function hands to its users, who move it
        ("import torch\nimport torch.nn as nn\n\n\nclass _M(nn.Module):\n"
         "    def forward(self, x):\n        mask = torch.ones(x.size(1))\n"
         "        return x * mask\n\n\ndef build():\n    net = _M()\n    return net\n",
         ((7, 16),)),
        # a private class held by a public one: moving the public one moves it
        ("import torch\nimport torch.nn as nn\n\n\nclass _M(nn.Module):\n"
         "    def forward(self, x):\n        mask = torch.ones(x.size(1))\n"
         "        return x * mask\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
         "        super().__init__()\n        self.body = _M()\n\n"
         "    def forward(self, x):\n        return self.body(x)\n", ((7, 16),)),
    )

    could_report_in = staticmethod(off_device_factory_in)  # (in prefilter: no LibCST there)

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        self.analysis = analysis
        self.kinds = analysis.kinds
        reported: Set[int] = set()  # (a factory a submodule returns meets several modules)
        self._callers = {}  # id(a plain function's node) -> the method that gives it the device
        self._passed = {}  # (id(factory), id(the method handed it)) -> the method handing it on
        self._following: Set[tuple] = set()  # (id(method), parameter) being followed
        self._running: Set[str] = set()  # the methods of the class that run on its device
        for info in analysis.collected.classes:
            if not info.methods:
                continue
            state = analysis.module_state(info)
            if state.is_module is not True or state.overrides_moving:
                continue
            # a factory is reported where it is made when it meets the device there, and else
            # where a method it is returned to meets it (``init_hidden``'s zeros in ``forward``)
            # (a static method too, which the others call on ``self``: TTS's
            # ``self._make_ga_mask(ilen, olen, sigma)``, given the lengths on the device)
            methods = [info.methods[name] for name in sorted(
                state.running)
                       if info.methods[name].scope is not None]
            # and the top-level functions of the file they hand a tensor on the device to
            # (``attention(q, k, v)``, which masks ``q @ k.T`` with ``torch.ones(T, T).tril()``)
            functions = self._functions_given_the_device(state, methods)
            self._running = {method.name for method in methods}  # (their calls hand on)
            for returned in (False, True):
                for method in methods + functions:
                    yield from self._check_method(state, method, reported, returned)
            for method in methods:
                yield from self._layers_built_in(state, method, reported)

    # -- a layer with weights built where the module runs ---------------------------------

    def _layers_built_in(self, state: ModuleState, method: FunctionInfo, reported: Set[int]):
        """``nn.BatchNorm2d(num_features=n)(x)``, or ``layer = nn.Linear(d, 3)`` then
        ``layer(x)``, in a method that runs on the module's device, given a tensor on it: the
        layer's weights are made on the CPU at every call (and never trained)."""
        devices = self.analysis.modules.on_module_device(state, method)
        for node in walk_code(method.node.body):
            if not isinstance(node, cst.Call):
                continue
            built = self._layer_built(node.func, method)
            if built is None or id(built) in reported:
                continue
            given = next((a.value for a in node.args if not a.star and a.keyword is None), None)
            if given is None or not devices.carries(given):
                continue
            shown = self.analysis.module_meets_accelerator(state.info)
            if shown is None:
                return  # a program that never uses an accelerator: the module stays on the CPU
            evidence, _ = shown
            reported.add(id(built))
            device, _ = self._device_for(node, built, devices, state, method)
            # (unsafe: the layer then runs, but still with new, untrained weights each call)
            yield Violation(
                built,
                self.LAYER_BUILT_OFF_DEVICE(layer=source_of(built.func), module=state.info.name,
                                            method=method.name, evidence=evidence,
                                            meeting=source_of(node), error=SAME_DEVICE_ERROR),
                None if device is None else AddDevice(built, device, False))

    def _layer_built(self, func, method: FunctionInfo) -> Optional[cst.Call]:
        """The constructor call of a torch.nn layer with weights, without ``device=``, that
        ``func`` (the callee of a call in ``method``) is, or names through its one assignment
        in ``method``; else None."""
        built = func
        if isinstance(func, cst.Name):
            bindings = method.scope.bindings.get(func.value, ())
            if len(bindings) != 1 or bindings[0].how != ASSIGN or bindings[0].path:
                return None
            built = bindings[0].value
        if not isinstance(built, cst.Call) or not built.args or any(
                a.star == "**" or (a.keyword is not None and a.keyword.value == "device")
                for a in built.args):
            return None
        head, _, tail = (self.kinds.qualname(built.func, method.scope) or "").rpartition(".")
        return built if head == "torch.nn" and tail in api.LAYERS_WITH_WEIGHTS else None

    def _functions_given_the_device(self, state: ModuleState, methods) -> list:
        """The plain top-level functions of the file that ``methods`` call with a tensor on
        the module's device (the function's own tensor parameters are then on it too)."""
        found: list = []
        for method in methods:
            devices = self.analysis.modules.on_module_device(state, method)
            for node in walk_code(method.node.body):
                if not isinstance(node, cst.Call):
                    continue
                function = self.analysis.helper_called(node, method.scope)
                if function is not None and function.scope is not None and \
                        all(function is not f for f in found) and \
                        any(not a.star and devices.carries(a.value) for a in node.args):
                    found.append(function)
                    self._callers[id(function.node)] = method
        return found

    def _check_method(self, state: ModuleState, method: FunctionInfo, reported: Set[int],
                      returned: bool = False):
        modules = self.analysis.modules
        devices = modules.on_module_device(state, method)
        found = {}

        def stays(expr) -> bool:
            key = id(expr)
            if key not in found:
                found[key] = self._origin(expr, method)
            return found[key] is not None

        for node in walk_code(method.node.body):
            if isinstance(node, cst.Call) and (self.kinds.qualname(node.func, method.scope) or "") \
                    .rpartition(".")[2] in _NOT_MEETING:
                continue
            where = modules.meeting(node, stays, devices)
            if where is None:
                continue
            for operand, factory in ((operand, factory) for operand in _operands(node)
                                     if stays(operand)
                                     for factory in [found[id(operand)]]
                                     + self._tuple_siblings(operand, found[id(operand)], method)
                                     + self._co_factories(found[id(operand)], method)):
                if id(factory) in reported or returned == _holds(method.node, factory):
                    continue
                site = self.analysis.collected.site_of(factory)
                if site is not None and self.analysis.runs_only_without_cuda(site.ctx):
                    continue  # the ``else`` of ``if torch.cuda.is_available():``: the CPU path
                # asked only here, for a class with a finding: what shows it meets a device
                shown = self.analysis.module_meets_accelerator(state.info)
                if shown is None:
                    return  # a program that never uses an accelerator: the module stays on the CPU
                evidence, elsewhere = shown
                reported.add(id(factory))
                via = self._function_call_for(operand, method)
                if via is not None:  # ``subsequent_mask(T)``: moved where the method gets it
                    device, _ = self._device_for(node, via, devices, state, method)
                    safe = False  # (the function's other callers keep its CPU result)
                else:
                    device, safe = self._device_for(node, factory, devices, state, method)
                shown = source_of(factory.func)
                # (``torch.Tensor(..., device=...)`` refuses any device but the CPU: moved)
                legacy = last_name(factory.func) in api.LEGACY_TENSOR_TYPES
                # (``init_hidden(n)`` that returns ``h0, c0``: no ``.to()`` applies to a tuple)
                whole = via is not None and \
                    self.analysis.placement.gives_a_tuple(via, method.scope) is not None
                fix = None if device is None else EachItem(
                    via, f".to({device})", "move each of them to the device",
                    into_tuple=True) if whole \
                    else MoveThere(via, device, safe) if via is not None \
                    else MoveThere(factory, device, safe) if legacy \
                    else AddDevice(factory, device, safe)
                advice = "create it on the module's device" if device is None else \
                    f"move each of the tensors `{source_of(via.func)}` returns there " \
                    f"(`{each_moved(source_of(via), device)}`)" if whole else \
                    f"move what `{source_of(via.func)}` returns there (`.to({device})`)" \
                    if via is not None else \
                    f"move it there (`.to({device})`)" if legacy else \
                    f"create it there (`device={device}`)"
                if elsewhere is not None:  # another file moves it too: name it
                    advice += f" (the module is moved to an accelerator in {elsewhere})"
                helper = None if _holds(method.node, factory) else \
                    self._function_holding(factory)
                kind = self.CREATED_OFF_DEVICE if helper is None else self.RETURNED_OFF_DEVICE
                caller = self._callers.get(id(method.node)) if method.cls is None else None
                if caller is not None and helper is None:
                    kind, helper = self.GIVEN_THE_DEVICE, method
                handed = self._passed.get((id(factory), id(method.node)))
                if handed is not None and helper is not None:
                    kind = self.PASSED_OFF_DEVICE
                yield Violation(
                    factory,
                    kind(factory=shown, module=state.info.name,
                         method=caller.name if caller is not None else method.name,
                         helper=_qualified(helper) if helper is not None else "",
                         caller=handed.name if kind is self.PASSED_OFF_DEVICE else "",
                         evidence=evidence, meeting=source_of(node), where=where,
                         error=where.error, advice=advice),
                    fix)

    # -- the CPU tensor: a factory's result, as it is --------------------------------------

    def _origin(self, expr, method: FunctionInfo) -> Optional[cst.Call]:
        if isinstance(expr, cst.Name) and method.cls is not None and \
                expr.value in method.param_names and expr.value != method.self_name and \
                not any(b.how == ASSIGN for b in method.scope.bindings.get(expr.value, ())):
            return self._handed_in(expr.value, method)
        if isinstance(expr, cst.Comparison) and all(  # ``mask == 0``: a CPU tensor of its shape
                is_number(c.comparator) for c in expr.comparisons):
            return self._origin(expr.left, method)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
            return self._origin(expr.expression, method)
        evidence = self.analysis.on_cpu(expr, method.scope)
        if evidence is None:
            return self._tuple_origin(expr, method)
        factory = self._made_by(evidence.origin, method)
        if factory is None:
            return None
        made_in = self._function_holding(factory) or method
        if not self._shaped_factory(factory, made_in):
            return None
        return factory if self._keeps(expr, factory, method, set()) else None

    def _tuple_origin(self, expr, method: FunctionInfo) -> Optional[cst.Call]:
        """``states = (state, state)``, then ``self.lstm(x, states)``: the factory an item of a
        tuple (or list) the name is bound to holds, where the name keeps it (pytext's BiLSTM)."""
        key = ("()", id(method.node), expr.value) if isinstance(expr, cst.Name) else None
        if key is None or key in self._following:
            return None  # (``x = (x, y)``: a tuple that holds its own name's earlier value)
        self._following.add(key)
        try:
            for binding in method.scope.bindings.get(expr.value, ()):
                if binding.how != ASSIGN or binding.path or \
                        not isinstance(binding.value, (cst.Tuple, cst.List)):
                    continue
                for element in binding.value.elements:
                    if isinstance(element, cst.StarredElement):
                        continue
                    factory = self._origin(element.value, method)
                    if factory is not None and self._keeps(expr, factory, method, set()):
                        return factory
            return None
        finally:
            self._following.discard(key)

    def _handed_in(self, name: str, method: FunctionInfo) -> Optional[cst.Call]:
        """The CPU factory that a method of the class hands ``method`` as its parameter
        ``name`` (``combined_mask = self.make_combined_att_mask(attention_mask, layer_mask)``
        of ``layer_mask = self.make_layer_mask(...)``: issue 28), else None."""
        key = (id(method.node), name)
        if key in self._following or method.self_name is None:
            return None
        self._following.add(key)
        # the calls of its name, by the function whose own code makes them (not a lambda's or
        # a nested function's): the sites the traversal recorded, not a walk of every method
        # per question (a tenth of this rule's cost on torch's ``_dynamo`` and ``testing``)
        calls_in: Dict[int, List[cst.Call]] = {}
        for site in self.analysis.collected.calls_by_name.get(method.name, ()):
            scope = site.ctx.scope
            while scope.kind == "comprehension" and scope.parent is not None:
                scope = scope.parent
            calls_in.setdefault(id(scope), []).append(site.call)
        try:
            for caller in method.cls.methods.values():
                if caller.scope is None or caller.self_name is None or \
                        caller.name not in self._running:
                    continue  # (``__init__``'s shape probe, ``self(torch.zeros(1, 3, h, w))``)
                for call in calls_in.get(id(caller.scope), ()):
                    if not (isinstance(call.func, cst.Attribute)
                            and isinstance(call.func.value, cst.Name)
                            and call.func.value.value == caller.self_name):
                        continue
                    argument = argument_for_parameter(call, method, name, bound=True)
                    factory = None if argument is None else self._origin(argument, caller)
                    if factory is not None:
                        self._passed.setdefault((id(factory), id(method.node)), caller)
                        return factory
            return None
        finally:
            self._following.discard(key)

    def _function_call_for(self, operand, method: FunctionInfo) -> Optional[cst.Call]:
        """The call in ``method`` of the plain function of the file that made ``operand``'s
        CPU tensor (``mask = subsequent_mask(T)``), else None."""
        while isinstance(operand, (cst.Comparison, cst.UnaryOperation)):
            operand = operand.left if isinstance(operand, cst.Comparison) else operand.expression
        evidence = self.analysis.on_cpu(operand, method.scope)
        origin = evidence.origin if evidence is not None else None
        if origin is None or self.analysis.helper_called(origin, method.scope) is None or \
                not _holds(method.node, origin):
            return None
        return origin

    def _made_by(self, origin: cst.Call, method: FunctionInfo) -> Optional[cst.Call]:
        """The call that made a CPU tensor whose evidence is ``origin``: ``origin`` itself,
        or, for the call of a plain function of the file that returns it (``mask =
        subsequent_mask(T)``, issue 28), the call in that function's body, through functions
        that return what another gives (``def subsequent_mask(T): return make_mask(T)``; a
        few calls deep)."""
        scope = method.scope
        for _ in range(_CALLS_DEEP):
            helper = self.analysis.helper_called(origin, scope)
            if helper is None:
                return origin
            made = self.analysis.placement.returned_on_cpu(helper)
            if made is None or made.origin is None:
                return None
            origin, scope = made.origin, helper.scope
        return None

    def _shaped_factory(self, call: cst.Call, method: FunctionInfo) -> bool:
        """A torch factory without ``device=`` whose result has a dimension."""
        qualified = self.kinds.qualname(call.func, method.scope) or ""
        if not qualified.startswith("torch.") or qualified.count(".") != 1:
            return False
        if any(a.star == "**" for a in call.args) or keyword_value(call, "device") is not None:
            return False
        tail = qualified[len("torch."):]
        # with a dimension, by the one answer; an empty tensor (a literal 0 size) is a
        # placeholder
        return tail in OFF_DEVICE_FACTORIES and factory_dimensions(
            call, tail, lambda data: self.kinds.is_sequence(data, method.scope)) is True and \
            not makes_an_empty_tensor(call, tail)

    def _keeps(self, expr, factory: cst.Call, method: FunctionInfo, seen: Set[str]) -> bool:
        """``expr`` is ``factory``'s result with at least its dimensions, still on the CPU."""
        if expr is factory:
            return True
        if isinstance(expr, cst.Name):
            name = expr.value
            bindings = method.scope.bindings.get(name, ())
            if name in method.param_names and not any(b.how == ASSIGN for b in bindings):
                return False  # (what the caller gives)
            if name in seen:  # ``emb = x * emb``: the other assignments decide
                return True
            if not bindings:
                return False
            related = False
            for binding in bindings:
                if binding.how == PARAM:
                    continue  # ``if H is None: H = torch.zeros(...)``: the assignments decide
                if binding.how == ASSIGN and _holds(binding.value, expr):
                    continue  # ``emb = x * emb[None]``: the read comes before this assignment
                if binding.how != ASSIGN:
                    return False
                part = self._returned_part(binding, method)
                if part is not None:  # ``h0, c0 = self.init_hidden(n)``
                    element, helper = part
                    if self._keeps(element, factory, helper, seen | {"()" + helper.name}):
                        related = True
                    continue
                if isinstance(binding.value, (cst.Tuple, cst.List)) and not binding.path:
                    # ``states = (state, state)``: an RNN's state handed on by name (pytext)
                    if self._keeps(binding.value, factory, method, seen | {name}):
                        related = True
                    continue
                evidence = self.analysis.on_cpu(binding.value, method.scope)
                if evidence is None or self._made_by(evidence.origin, method) is not factory:
                    continue  # another value (a device tensor, another CPU tensor)
                if binding.path and not (
                        len(binding.path) == 1
                        and self.analysis.makes_tensor_parts(binding.value, method.scope)):
                    return False  # unpacked from something holding the factory's tensor
                    # (not a part of ``torch.meshgrid(...)``: each part keeps dimensions)
                if not self._keeps(binding.value, factory, method, seen | {name}):
                    return False  # somewhere reduced (``.sum()``) or moved (``.type_as(x)``)
                related = True
            return related
        if isinstance(expr, cst.Call):
            func = expr.func
            inner = self.kinds.passed_through(expr, method.scope)
            if inner is not None:  # ``Variable(torch.zeros(...))``
                return self._keeps(inner, factory, method, seen)
            helper = self.analysis.placement.method_called(expr, method.scope) or \
                self.analysis.helper_called(expr, method.scope)  # (``subsequent_mask(T)``)
            if helper is not None:  # ``hidden = self.init_hidden(n)``: what it returns
                return "()" + helper.name not in seen and any(
                    value is not None and self._keeps(value, factory, helper,
                                                      seen | {"()" + helper.name})
                    for value, _ in helper.returns)
            if isinstance(func, cst.Attribute) and self.kinds.qualname(func, method.scope) is None:
                method_name = func.attr.value
                if method_name == "view" and not expr.args:
                    return False
                return (method_name in _SHAPE_KEEPING or method_name in _ELEMENTWISE) and \
                    self._keeps(func.value, factory, method, seen)
            qualified = self.kinds.qualname(func, method.scope) or ""
            tail = qualified.rpartition(".")[2]
            positional = [a.value for a in expr.args if a.keyword is None]
            if not qualified.startswith("torch.") or not positional:
                return False
            if tail in _OF_FIRST_ARGUMENT:
                return self._keeps(positional[0], factory, method, seen)
            if tail in api.TENSOR_TUPLE_FUNCTIONS:  # ``torch.meshgrid(torch.arange(n), ...)``
                return any(not isinstance(item, cst.StarredElement) and
                           self._keeps(item, factory, method, seen)
                           for item in positional_items(expr))
            if tail in api.JOINING_FUNCTIONS and isinstance(positional[0], (cst.List, cst.Tuple)):
                return any(not isinstance(e, cst.StarredElement) and
                           self._keeps(e.value, factory, method, seen)
                           for e in positional[0].elements)
            return False
        if isinstance(expr, cst.Subscript):
            # a slice, ``None``, or a mask (``x[scores > 0.5]``: the kept elements, 1-D)
            keeps_a_dim = all(isinstance(e.slice, cst.Slice) or (
                isinstance(e.slice, cst.Index) and (
                    (isinstance(e.slice.value, cst.Name) and e.slice.value.value == "None")
                    or isinstance(e.slice.value, cst.Comparison))) for e in expr.slice)
            return keeps_a_dim and self._keeps(expr.value, factory, method, seen)
        if isinstance(expr, cst.Attribute):
            if isinstance(expr.value, cst.Name) and method.cls is not None \
                    and expr.value.value == method.self_name:
                return self._attribute_keeps(expr.attr.value, factory, method, seen)
            return expr.attr.value in api.TRANSPOSE_ATTRIBUTES and self._keeps(expr.value, factory, method, seen)
        if isinstance(expr, cst.UnaryOperation):
            return self._keeps(expr.expression, factory, method, seen)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, ARITHMETIC_OPERATORS):
            return self._keeps(expr.left, factory, method, seen) or \
                self._keeps(expr.right, factory, method, seen)
        if isinstance(expr, cst.Comparison):
            return self._keeps(expr.left, factory, method, seen)
        if isinstance(expr, (cst.Tuple, cst.List)):  # ``return h0, c0``, handed on whole
            return any(not isinstance(e, cst.StarredElement) and
                       self._keeps(e.value, factory, method, seen) for e in expr.elements)
        return False

    def _attribute_keeps(self, name: str, factory: cst.Call, method: FunctionInfo,
                         seen: Set[str]) -> bool:
        """``self.NAME`` holds ``factory``'s result: every store of it is in ``method`` and
        keeps that result, or is ``None`` (a cache's start: ``if self.mask is None:
        self.mask = torch.triu(torch.ones(T, T))`` in ``forward``, then
        ``x.masked_fill(self.mask, ...)``, issue 28). A store in another method (a setter, a
        buffer made elsewhere) leaves what is read unknown."""
        key = "self." + name
        if key in seen:
            return True
        related = False
        for binding in method.cls.attributes.get(name, ()):
            if binding.how != ASSIGN or binding.path:
                return False
            if isinstance(binding.value, cst.Name) and binding.value.value == "None":
                continue
            if binding.ctx.func is not method:
                return False
            evidence = self.analysis.on_cpu(binding.value, method.scope)
            if evidence is None or self._made_by(evidence.origin, method) is not factory or \
                    not self._keeps(binding.value, factory, method, seen | {key}):
                return False
            related = True
        return related

    def _function_holding(self, node: cst.CSTNode) -> Optional[FunctionInfo]:
        """The innermost function of the file whose body holds ``node``."""
        holding = [f for f in self.analysis.collected.functions if _holds(f.node, node)]
        return next((f for f in holding if not any(
            g is not f and _holds(f.node, g.node) for g in holding)), None)

    def _tuple_siblings(self, operand, factory: cst.Call, method: FunctionInfo) -> list:
        """The other CPU factories of the tuple a method returns, handed on whole
        (``hidden = self.init_hidden(n)`` of ``return h0, c0``; ``factory`` is the first):
        each is created off the device."""
        if isinstance(operand, cst.Call):  # ``self.lstm(x, self.init_hidden(n))``
            values = [operand]
        elif isinstance(operand, cst.Name):
            values = [b.value for b in method.scope.bindings.get(operand.value, ())
                      if b.how == ASSIGN and not b.path and isinstance(b.value, cst.Call)]
        else:
            return []
        siblings: list = []
        for value in values:
            helper = self.analysis.placement.method_called(value, method.scope)
            if helper is None or helper.scope is None:
                continue
            for value, _ in helper.returns:
                if not isinstance(value, (cst.Tuple, cst.List)):
                    continue
                for element in value.elements:
                    other = None if isinstance(element, cst.StarredElement) else \
                        self._origin(element.value, helper)
                    if other is not None and other is not factory and \
                            all(other is not s for s in siblings):
                        siblings.append(other)
        return siblings

    def _co_factories(self, factory: cst.Call, method: FunctionInfo) -> list:
        """The other CPU factories given with ``factory`` to one torch function whose tensors
        share a device (``torch.meshgrid(torch.arange(ny), torch.arange(nx))``,
        ``torch.cat([torch.zeros(n), torch.ones(n)])``): each is created off the device, and a
        fix of the one alone would leave that call mixing devices."""
        holder = self._function_holding(factory) or method
        for node in walk_code(holder.node.body):
            if not isinstance(node, cst.Call):
                continue
            tail = (self.kinds.qualname(node.func, holder.scope) or "").rpartition(".")[2]
            if tail not in api.TENSOR_TUPLE_FUNCTIONS and tail not in api.JOINING_FUNCTIONS:
                continue
            values = [item for item in positional_items(node)
                      if not isinstance(item, cst.StarredElement)]
            if any(value is factory for value in values):
                return [value for value in values if value is not factory and
                        isinstance(value, cst.Call) and self._shaped_factory(value, holder)]
        return []

    def _returned_part(self, binding, method: FunctionInfo):
        """(the element, the method) when ``binding`` unpacks one element of the tuple a
        method of the class returns (``h0, c0 = self.init_hidden(n)``), else None."""
        if len(binding.path) != 1:
            return None
        parts = self.analysis.placement.returned_parts(binding.value, method.scope, None)
        if parts is None or binding.path[0] >= len(parts):
            return None
        helper = self.analysis.placement.method_called(binding.value, method.scope)
        return parts[binding.path[0]][0], helper

    # -- the fix: which tensor's device --------------------------------------------------------

    def _device_for(self, node, factory: cst.Call, devices, state: ModuleState,
                    method: FunctionInfo):
        """(``NAME.device`` text, safe) for the fix, or (None, False)."""
        holder = self._function_holding(factory)
        if holder is not None and holder.cls is not None and holder.self_name is not None and \
                self.kinds.class_is_lightning(holder.cls) and (
                    _holds(method.node, factory) or holder.cls is state.info):
            # a LightningModule knows its device (``self.device``); its batch may be a tuple
            return f"{holder.self_name}.device", False
        if not _holds(method.node, factory):
            # made in a helper that returns it (``init_hidden``): the names of ``method``
            # are not there; the module's own parameters are (unsafe: a module without any
            # makes ``next()`` raise). A submodule of another class: its device is its own.
            helper = self._function_holding(factory)
            if helper is None or helper.self_name is None or helper.cls is None:
                return None, False
            own = self.analysis.modules.on_module_device(
                self.analysis.module_state(helper.cls), helper)
            inputs = [p for p in helper.param_names if p != helper.self_name
                      and (p in own.names or own.carries(cst.Name(p)))
                      and not any(b.how == ASSIGN for b in helper.scope.bindings.get(p, ()))]
            # (not one it rebinds: ``if H is None: H = torch.zeros(...)`` has no ``H.device``)
            if inputs:  # a tensor the helper is given: where it runs
                return f"{inputs[0]}.device", False
            if helper.cls is not state.info:
                return None, False
            return f"next({helper.self_name}.parameters()).device", False
        params = [p for p in method.param_names if p != method.self_name]
        tensors = [p for p in params if p in devices.names or devices.carries(cst.Name(p))]
        for operand in _operands(node):
            root = root_name(operand)
            if root in tensors and devices.carries(operand):
                safe = method.name == "forward" and _holds(node, factory)
                return f"{root}.device", safe
        if tensors:
            return f"{tensors[0]}.device", False
        owned = sorted(state.parameters | state.buffers)
        if owned:
            return f"{method.self_name}.{owned[0]}.device", False
        if any(self.analysis.modules.has_parameters(state, name) for name in state.submodules):
            # (``VAE.sample(n)`` is given no tensor: the weights of its layers say where)
            return f"next({method.self_name}.parameters()).device", False
        return None, False


# How many calls of the file's functions deep a factory is followed from ``forward``.
_CALLS_DEEP = 4


def _operands(node) -> list:
    """The expressions ``node`` combines (its operands, arguments, list elements, receiver)."""
    if isinstance(node, cst.BinaryOperation):
        return [node.left, node.right]
    if isinstance(node, cst.Comparison):
        return [node.left] + [c.comparator for c in node.comparisons]
    if isinstance(node, cst.Subscript):
        return [node.value]  # (the tensor indexed: ``modules.meeting`` checks the index)
    if isinstance(node, cst.Call):
        values = [a.value for a in node.args]
        spread = [e.value for v in values if isinstance(v, (cst.List, cst.Tuple))
                  for e in v.elements]
        receiver = [node.func.value] if isinstance(node.func, cst.Attribute) else []
        return receiver + values + spread
    return []


def _holds(node: cst.CSTNode, target: cst.CSTNode) -> bool:
    """``target`` is ``node`` or in its code, nested functions included."""
    return holds(node, target, into_functions=True)


def _qualified(function: FunctionInfo) -> str:
    return f"{function.cls.name}.{function.name}" if function.cls is not None else function.name
