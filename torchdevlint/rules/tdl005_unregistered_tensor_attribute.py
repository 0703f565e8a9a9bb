"""TDL005: an ``nn.Module`` keeps a tensor as a plain attribute, which ``.to(device)`` leaves
behind, and a method then combines it with tensors on the module's device.

Fix: ``self.NAME = VALUE`` -> ``self.register_buffer("NAME", VALUE, persistent=False)``.
``persistent=False`` keeps ``state_dict()`` as it was, so existing checkpoints still load.
Safe when the assignment is the attribute's only one in the class, in ``__init__``, after
``super().__init__()``, and the class body does not bind the name; unsafe otherwise (another
assignment may rebind it to something ``register_buffer`` refuses, or a base class may already
own the name). No fix before ``super().__init__()`` (``register_buffer`` raises there), for an
annotated assignment, or for an assignment that shares its line with other statements.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Set

import libcst as cst

from torchdevlint.analysis import (
    ARITHMETIC_OPERATORS, ASSIGN, FOR, PARAM, Analysis, Binding, FunctionInfo, ModuleState, api,
    factory_dimensions, holds, is_number, keyword_value, literal_rank, makes_an_empty_tensor,
    method_rank, positional_items, rank_after_index, reached_without, reads_name, sizes_rank,
    source_of, walk_code,
)
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext
from torchdevlint.fixes.model import Edit, Fix, FixPlan
from torchdevlint.rules.base import Message, Rule, Violation
from torchdevlint.rules.classfacts import FACTORY_CALLS, tensor_attribute_in


_OF_FIRST_ARGUMENT = api.TRIANGLE_FUNCTIONS
# Tensor methods whose result is on the receiver's device with at least its dimensions.
_SHAPE_KEEPING = api.SHAPE_KEEPING_METHODS
# Elementwise math (as a torch function of its first argument or as a method): the result
# has the shape and the device of its input.
_ELEMENTWISE = api.ELEMENTWISE
_ARITHMETIC = ARITHMETIC_OPERATORS


@dataclass
class RegisterBuffer(FixPlan):
    """The assignment that becomes ``register_buffer``, and whether that is safe."""

    binding: Binding
    name: str
    safe: bool

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        target = self.binding.node
        assign_target = ctx.parent(target)
        assign = ctx.parent(assign_target) if isinstance(assign_target, cst.AssignTarget) else None
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        line = ctx.parent(assign)
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        owner = target.value.value
        value = ctx.text(assign.value)
        start, end = ctx.span(assign)
        text = f'{owner}.register_buffer("{self.name}", {value}, persistent=False)'
        return Fix(finding.code, self.safe,
                   f"register `{owner}.{self.name}` as a non-persistent buffer",
                   (Edit(start, end, text),))


class UnregisteredTensorAttribute(Rule):
    """
    ## What it does
    Reports `self.NAME = <tensor>` in an `nn.Module` (a subclass of `nn.Module` directly, through
    the file's own classes, or through `LightningModule`, torchmetrics' `Metric` and the like; or
    a subclass of another file's class that shows it is a module: it defines `forward` and
    registers a parameter or a layer with weights, issue 28) when all of these hold:

    - the value is a tensor created on the CPU with at least one dimension: a torch factory without
      `device=` (`torch.zeros(n)`, `torch.ones(T, T)`, `torch.arange(n)`, `torch.linspace(...)`,
      `torch.eye(n)`, `torch.randn(...)`, `torch.randint(lo, hi, (n,))`, `torch.tensor([...])` of
      a list or of a numpy array with a dimension), `torch.tril`/`triu` of one, and what slices
      (`[..., None]`, `[:, :n]`), dtype casts and reshapes make of one, `torch.cat`/`torch.stack`
      of such tensors (also of a list the method fills with `.append(...)`: `pieces = []`, then
      `pieces.append(torch.arange(...))`, then `torch.cat(pieces)`), and the parts of
      `torch.meshgrid` of them (`ys, xs = torch.meshgrid(torch.arange(n), torch.arange(n))`, a
      detection head's grid). A factory given `device=self.weight.device` (a parameter or buffer
      of the module, or `next(self.parameters()).device`) while the module is built counts as
      one without `device=`: it is made where the parameters are then, the CPU unless the module
      is built on a device, and a later `.to(device)` leaves it there (litgpt's LoRA
      `lora_ind`, issue 28). A move of it while the module is built that runs only when the
      caller names a device (`if device is not None: self.fb = self.fb.to(self.device)` of
      `__init__(..., device=None)`) leaves it there for every caller that names none and
      moves the module later (auraloss issue 34; the message says so);
    - it is neither an `nn.Parameter` nor registered (`register_buffer`, `nn.Buffer`);
    - the attribute is assigned only while the module is built (in `__init__` and the methods only
      `__init__` calls), or is a cache that the class's own `train()` / `eval()` computes from
      its parameters or buffers (`self.ab = self.attention_biases[:, self.idxs]`, issue 28):
      users switch modes at any time, often before `.to(device)`, which then moves the
      parameters and leaves the cache where the module was (the message says so); or is a
      state that one method reads and then updates (`h = self.cell(x, self.h);
      self.h = h.detach()`, issue 28): reported when that method meets the tensor built in
      `__init__` before it stores a new value, the stored value is on the module's device, and
      no test of the attribute (`if self.h.size(0) != x.size(0): ...`) guards the meeting (the
      message says "before it stores a new value there"), or when the meeting can be reached
      on a path that skips every store (`if self.training: self.glob_mean = m` before `x -
      self.glob_mean`: a normalizer moved to the GPU and run in eval mode, speechbrain issue
      1434; `analysis.reached_without`), unless a store sits in a branch exclusive with the
      meeting (`if self.count == 0: ...` / `elif ...`: an earlier call took the other branch)
      or under a test of the attribute (the path that skips it holds a tensor already there).
      A setter that nothing run on the device calls (`load_statistics(state)`) may not run at
      all and does not count, unless it makes the value where another tensor is (`reset(x)`
      of `self.h = x.new_zeros(...)`: how its users place it). An empty placeholder
      (`torch.empty(0)`) that such a method fills is not reported;
    - a method other than those combines it, as it is, with a tensor on the module's device: in
      arithmetic or a comparison, in a tensor method that combines (`x.masked_fill(self.mask, ...)`,
      `x.matmul(self.w)`), passed to a torch function together with such a tensor
      (`torch.cat([x, self.pad])`, `F.linear(x, self.w)`) or to a registered submodule that has
      weights (`self.proj(self.table)`), indexed with such a tensor (`self.alpha[targets]`), or
      given one as the index of `gather`, `index_select`, `scatter_`, ... (`self.alpha.gather(0,
      targets)`; issue 28), or given to one of those as the index (or mask) of such a tensor
      (`self.fc(x).index_select(1, self.perm)`: unlike plain indexing, they refuse a CPU
      index into a tensor on the device; issue 28), or handed to a function of the file that
      combines it there with another argument on the device: a plain function, a static
      method, the static `forward` of a custom autograd operation
      (`MaskedLinearFunction.apply(x, self.weight, self.mask)` of a `forward` that computes
      `weight * mask`: CustomizedLinear's mask; the message names the operation).

    The value may also be a constructor's parameter (`self.weight = weight`) when every
    construction of the class in the file passes such a tensor (`WeightedMSE(torch.tensor([1.,
    2.]))`): the message names that construction. And a plain list or dict whose every item is
    such a tensor (`self.anchors = [torch.ones(4) * s for s in sizes]`, `self.anchors = []` that
    `__init__` fills with `.append(...)`, `{"small": torch.full((4,), .5), ...}`) is reported when
    a method combines an item (`self.scales[key]`, `for anchor in self.anchors`) with a tensor on
    the module's device: `.to(device)` moves no tensor inside a Python container. An item (or a
    value) may be a registered buffer taken while the module is built
    (`self.params.append(getattr(self, f"param_{i}"))` after `self.register_buffer(f"param_{i}",
    p)`, pytorch issue 29807): `.to(device)` moves parameters in place but replaces each buffer
    with a moved copy, so the list keeps the CPU tensors (`ModuleClasses.buffer_snapshot`).
    An item may be an `nn.Parameter` of such a tensor (`self.weights = [nn.Parameter(torch.randn(d,
    d)) for _ in range(n)]`): a parameter assigned to the module is registered, one inside a list
    or dict is not, so `.to(device)` leaves it behind and `parameters()` does not list it (no
    optimizer trains it); when every item is one, the message says so and names
    `nn.ParameterList` / `nn.ParameterDict`.
    A tuple of such tensors, an RNN's state (`self.hidden = (torch.zeros(1, 1, h),
    torch.zeros(1, 1, h))`, or `self.hidden = self.init_hidden()` of a method that returns one,
    the PyTorch tutorial's `LSTMTagger`), is judged as one tensor is, whole: handed to an
    `nn.LSTM`/`nn.GRU`/`nn.RNN` as its state, the message names the error those layers raise
    (issue 28). No buffer holds a tuple, so it has no fix. `Variable(t)` of old code is `t`.
    The attribute may be set by a base class of the file (`Base.__init__` sets `self.scale =
    torch.ones(n)`, a subclass's `forward` reads it, and the subclass is what is moved): the
    message names that base class, and the finding is at its assignment (issue 28).

    "A tensor on the module's device" is a registered parameter or buffer, what a registered
    submodule with weights returns (or any registered submodule given such a tensor, an item
    of a registered `nn.ModuleList` among them: `self.steps[i](x)`), a method
    argument used as a tensor (`x.size(1)`, `x.device`, `y.view(-1, 1)`, the index of a tensor's
    `gather` / `index_select` / `scatter_`, passed to such a submodule or to a torch
    function that takes tensors: the input of a moved model; `forward`'s input, without a default
    or an annotation, in arithmetic: `(x - self.mean) / self.std` in a module with no weights of
    its own, issue 28), a parameter of `forward` that every call of an instance of the class
    in the file gives a tensor the placement shows on an accelerator (`diffusion(x0, t)` of `t =
    torch.randint(0, T, (n,), device=device)`: a diffusion schedule's `self.sqrt_ac[t]`; the
    message names that call), an item a `for` loop takes out of such a tensor (`for ilen, olen
    in zip(ilens, olens)`: 0-dim tensors there; not `enumerate`'s count), and what is computed
    from those (`x.new_zeros(...)` is made where `x` is), through a method of the class that
    returns it, whole or as an item of a tuple (`x_mag, x_phase = self.stft(x)`).

    A CPU tensor "with a dimension" is proven from how it is made: a factory with a shape
    (`torch.zeros(n)`, not `torch.zeros(())`), a list (`torch.tensor([...])`), a legacy
    constructor (`torch.Tensor(...)`, never 0-dim), `torch.from_numpy`, `torch.cat`/`stack` of
    such, elementwise math, arithmetic (broadcasting never drops a dimension), a local name
    of `__init__` bound to one (its assignments before the read give one; later ones only refine
    it: `y = y.unsqueeze(0)`), what a method of the class returns when every `return` gives one
    (`self.tem = self.one_hot(n, k)`, issue 28) or a plain function of the file returns
    (`self.pe = sinusoid_table(n, d)`, issue 28), `torch.tensor(...)` of a numpy array made with
    a dimension (`np.linspace(0, 1, n)`, `np.zeros((d, d))`, `np.array([...])`, their
    `.astype(...)`; also through a local name, and as what a function of the file returns:
    `fb = mel_filters(sr, n_fft, n_mels)`, then `torch.tensor(fb)`, auraloss issue 34), and
    what the attribute held before
    (`self.tem = self.tem.permute(2, 0, 1)`, which is then not reported apart: once the first
    assignment registers a buffer, assigning a tensor to the name updates it). `torch.tensor(data)` has a dimension when `data` is a list or
    tuple (`analysis.kinds.is_sequence`): a non-empty literal, a comprehension, a concatenation
    or slice of one, or a parameter annotated `list[...]` / `tuple[...]` / `Sequence[...]`
    (`torch.tensor(levels)`, issue 28) or, not annotated, given one by every call or
    construction in the file (`Normalize([0.485, 0.456, 0.406], ...)` for `torch.tensor(mean)`).

    Read back in a method, the attribute stays such a tensor through slices (`self.pe[:, :n]`)
    and, where its making shows how many dimensions it has (a factory given its sizes, nested
    lists, `np.array([[...]])`, a `.view(1, 3, 1, 1)`, `unsqueeze`), through an index that
    leaves one of them (`self.anchors[0]` of a 2-D table, issue 28; `self.scales[0]` of a 1-D
    one is 0-dim and combines with any device).

    The finding is on the assignment.

    ## Why is this bad
    `model.to(device)` moves what the module registers with torch: parameters, buffers and
    submodules. A tensor kept as a plain attribute stays where it was created, on the CPU. The first
    `forward` on the GPU then mixes devices:

    ```
    RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
    ```

    An operation with its own device check says it in its own words; `masked_fill` with a CPU
    mask on a GPU (seen on an H200):

    ```
    RuntimeError: expected self and mask to be on the same device, but got mask on cpu and self on cuda:0
    ```

    Indexing the CPU tensor with the GPU targets (a focal loss's `self.alpha[targets]`; under the
    pretend accelerator, as torch words it on a GPU; `self.alpha.gather(0, targets)` says "but
    got index is on cuda:0"):

    ```
    RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
    ```

    On the `meta` device, which plays the GPU in this project's runtime tests, the same bug reads,
    depending on which operand the operation checks first:

    ```
    RuntimeError: Tensor on device cpu is not on the expected device meta!
    RuntimeError: Tensor on device meta is not on the expected device cpu!
    ```

    and `index_copy` / `index_add`, which check their three tensors themselves there (on a GPU
    the dispatcher's "but got index is on cpu" comes first):

    ```
    RuntimeError: index_copy(): self, index and source expected to be in the same device, but got (self) meta, (index) cpu, and (source) meta
    ```

    An `nn.LSTM`/`nn.GRU`/`nn.RNN` given a state left so checks its input and state first, on a
    GPU and on `meta` alike:

    ```
    RuntimeError: Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor at cpu
    ```

    The attribute is also missing from `state_dict()` and is not converted by `model.half()`.
    Public reports of this exact bug include torchaudio's `TimeStretch` (`self.phase_advance`), a
    cached attention-bias table in MobileSAM/TinyViT, and Lightning modules holding a one-hot table.
    In each the fix was `register_buffer`.

    ## Example
    ```python
    class CausalAttention(nn.Module):
        def __init__(self, d, context):
            super().__init__()
            self.qkv = nn.Linear(d, 3 * d)
            self.mask = torch.triu(torch.ones(context, context), diagonal=1)

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            scores = q @ k.transpose(1, 2)
            T = x.size(1)
            scores = scores.masked_fill(self.mask.bool()[:T, :T], float("-inf"))
            return scores.softmax(-1) @ v
    ```

    ## Use instead
    ```python
    class CausalAttention(nn.Module):
        def __init__(self, d, context):
            super().__init__()
            self.qkv = nn.Linear(d, 3 * d)
            self.register_buffer("mask", torch.triu(torch.ones(context, context), diagonal=1),
                                 persistent=False)

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            scores = q @ k.transpose(1, 2)
            T = x.size(1)
            scores = scores.masked_fill(self.mask.bool()[:T, :T], float("-inf"))
            return scores.softmax(-1) @ v
    ```

    ## Fix safety
    `--fix` rewrites `self.NAME = VALUE` into
    `self.register_buffer("NAME", VALUE, persistent=False)`. `persistent=False` keeps
    `state_dict()` as it was, so checkpoints saved before the fix still load with `strict=True`.

    - **Safe** when the assignment is the attribute's only one in the class, it is in `__init__`
      after `super().__init__()`, and the class body does not bind the name.
    - **Unsafe** (applied only with `--unsafe-fixes`) otherwise: the attribute is assigned more than
      once (a later assignment of something that is not a tensor or `None` raises `TypeError` on a
      buffer; a state updated in `forward` with a tensor, `self.h = h.detach()`, updates the
      buffer), or in a helper method that `__init__` calls (it may run before
      `super().__init__()`).
      Unsafe too when the value is a parameter of `__init__` (`self.weight = weight`): a
      construction in another file may pass something that is not a tensor.
      When an earlier assignment of the same method runs first (`self.M = M` of a parameter
      `M=None`, then `if self.M is None: self.M = torch.eye(n)`: tabnet's default group
      matrix, reported "when no `M` is given"), the fix registers that first one:
      `register_buffer` raises `KeyError` for a name already set, and once the name is a
      buffer, the fallback's assignment stores the buffer (an assignment in the other branch
      of an `if`, which does not run first, is fixed on its own).
    - **No fix** for an annotated assignment, an assignment that shares its line with other
      statements, an assignment through `setattr`, or a list or dict of tensors (register each
      item, or `torch.stack` them into one buffer and index that).

    ## Known limits
    The rule stays silent when:

    - every use moves the attribute first (`self.mask.to(x.device)`, `.type_as(x)`), or it is only
      used as an index (`x[:, self.idx]`: a CPU index into a device tensor works);
    - the tensor is 0-dim (`torch.tensor(2.0)`): a CPU scalar tensor combines with device tensors;
    - the class overrides `_apply`, `to` or `cuda` (itself or through a base class of the file):
      it may move its plain tensors itself; but for an override of `to`/`cuda` of the class
      itself that only moves attributes (`self.scale = self.scale.to(device)`) and hands on to
      `super()`: the attributes it moves are silent, the others are reported as usual (issue 28:
      a policy whose `to()` forgot its `noise`);
    - the class is not an `nn.Module` (a sampler or a dataset that holds tensors is fine), or the
      analysis cannot tell (a base class from another file, in a class that defines no `forward`
      or registers no parameter or layer with weights of its own);
    - the attribute is (re)assigned while the module runs (a cache refreshed in `forward`), but
      for a state read and then updated in one method as above: rebound in two methods (a
      `reset()` that its users call first), rebuilt before its first use, or updated with
      something not known to be on the module's device, it is not reported;
    - the value's device or shape is not known: a tensor passed in from outside, the result of a
      function (of this file or another), `torch.cat` of several tensors, a `*_like` factory;
    - the other operand is not known to be on the module's device (an argument never used as a
      tensor, an unknown function's result).

    Uses are looked for in the class's own methods, not in subclasses.
    """

    # The kind of finding (its message, as data; the report fills the fields).
    PLAIN_ATTRIBUTE = Message(
        "`{owner}.{name}` holds a tensor{given} as a plain attribute of the module `{module}`"
        "{inherited}, so "
        "`.to(device)` leaves it on the CPU, and `{method}` {where}{moved}: {error}; "
        "register it as a buffer (`{owner}.register_buffer(\"{name}\", ..., persistent=False)`)")
    # a cache that ``train()``/``eval()`` computes from the module's own state
    CACHED_IN_SWITCH = Message(
        "`{owner}.{name}` holds a tensor as a plain attribute of the module `{module}`{inherited}"
        ", computed "
        "in `{switch}()` from the module's own state, so a `.to(device)` after "
        "`{module}.{switch}()` leaves it where the module was, and `{method}` {where}{moved}: "
        + "{error}; register it as a buffer "
        "(`{owner}.register_buffer(\"{name}\", ..., persistent=False)`)")

    # a tuple of CPU tensors, an RNN's state (``self.hidden = self.init_hidden()``)
    TUPLE_STATE = Message(
        "`{owner}.{name}` holds a tuple of tensors as a plain attribute of the module `{module}`"
        "{inherited}, "
        "so `.to(device)` leaves them on the CPU, and `{method}` {where}{moved}: {error}; create "
        "them on the module's device where they are made "
        "(`device=next({owner}.parameters()).device`)")

    # a list or dict of CPU tensors (``self.anchors = [torch.ones(4) * s for s in sizes]``)
    CONTAINER = Message(
        "`{owner}.{name}` holds tensors in a plain container of the module `{module}`, so "
        "`.to(device)` leaves them on the CPU, and `{method}` {where}{moved}: {error}; "
        "register each as a buffer, or stack them into one "
        "(`{owner}.register_buffer(\"{name}\", torch.stack(...), persistent=False)`)")

    # a list or dict of ``nn.Parameter``s (``self.weights = [nn.Parameter(torch.randn(d, d))
    # for _ in range(n)]``): registered one by one, unregistered in a container
    PARAMETER_CONTAINER = Message(
        "`{owner}.{name}` holds parameters in a plain container of the module `{module}`, so "
        "torch does not register them: `.to(device)` leaves them on the CPU (and `parameters()` "
        "does not list them, so no optimizer trains them), and `{method}` {where}{moved}: "
        "{error}; hold them in `nn.{wrapper}(...)`")

    code = "TDL005"
    name = "unregistered-tensor-attribute"
    summary = "A tensor kept as a plain nn.Module attribute is not moved by .to(device)"
    fixable = True
    facts = frozenset(("kinds", "modules", "placement", "project", "devices"))
    # A module class (its base is named through an import of torch or of a library whose
    # modules the analysis knows) that assigns a torch factory's result.
    required_text = (r"\bclass\b", r"\btorch\b")
    valid = (
        # registered: moved with the module
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.mask = nn.Parameter(torch.ones(4))\n\n"
        "    def forward(self, x):\n        return x.unsqueeze(0) * self.mask\n",
        # parameters in an nn.ParameterList: registered
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.weights = nn.ParameterList([nn.Parameter(torch.randn(4)) for _ in range(2)])\n\n"
        "    def forward(self, x):\n        return [x * w for w in self.weights]\n",
        # every use moves it first
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.mask = torch.ones(4)\n\n"
        "    def forward(self, x):\n        return x.unsqueeze(0) * self.mask.to(x.device)\n",
        # 0-dim: a CPU scalar tensor combines with device tensors
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.scale = torch.tensor(2.0)\n\n"
        "    def forward(self, x):\n        return x.unsqueeze(0) * self.scale\n",
    )
    invalid = (
        ("import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
         "    def __init__(self):\n        super().__init__()\n        self.mask = torch.ones(4)\n\n"
         "    def forward(self, x):\n        return x.unsqueeze(0) * self.mask\n", ((8, 9),)),
        # a plain list of CPU tensors (no fix: see tests/data/tdl005_tensor_containers.py)
        ("import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
         "    def __init__(self):\n        super().__init__()\n"
         "        self.masks = [torch.ones(4), torch.zeros(4)]\n\n"
         "    def forward(self, x):\n        return [x.unsqueeze(0) * m for m in self.masks]\n",
         ((8, 9),)),
        # parameters in a plain list: not registered (no fix: see
        # tests/data/tdl005_tensor_containers.py)
        ("import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
         "    def __init__(self):\n        super().__init__()\n"
         "        self.weights = [nn.Parameter(torch.randn(4)) for _ in range(2)]\n\n"
         "    def forward(self, x):\n        return [x * w for w in self.weights]\n",
         ((8, 9),)),
        # an RNN's state, a tuple (no fix: see tests/data/tdl005_rnn_state.py)
        ("import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
         "    def __init__(self):\n        super().__init__()\n        self.rnn = nn.LSTM(3, 4)\n"
         "        self.state = (torch.zeros(1, 1, 4), torch.zeros(1, 1, 4))\n\n"
         "    def forward(self, x):\n        return self.rnn(x, self.state)\n", ((9, 9),)),
    )

    could_report_in = staticmethod(tensor_attribute_in)  # (in classfacts: see rules/prefilter.py)

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        self.analysis = analysis
        self.kinds = analysis.kinds
        self._made: Dict[int, tuple] = {}  # id(value) -> (answer, depth it was asked at)
        self._reported: Set[int] = set()  # ids of the assignments reported
        for state in analysis.modules_moved_only_by_to():
            if state.tensor_attributes:
                yield from self._check_class(state)
            if state.other_containers:
                yield from self._check_containers(state)

    def _check_class(self, state: ModuleState) -> Iterator[Violation]:
        info = state.info
        modules = self.analysis.modules
        init_methods = modules.init_methods(info)
        own_switches = modules.mode_switches(info)
        own_building = init_methods | own_switches  # (what runs while it is built or switched)
        running = state.running
        reads = None
        for name in state.tensor_attributes:
            if name in (state.override_moves or ()):
                continue  # the class's own ``to`` moves it
            owning = state.owner(name)  # (a base class of the file, for an inherited one)
            bindings = state.bindings(name)
            if any(b.ctx.func is None or b.ctx.func.cls is not owning for b in bindings):
                continue
            if owning is not info:  # (the methods that build or switch the base's state)
                building = modules.init_methods(owning) | modules.mode_switches(owning)
                switches = modules.mode_switches(owning)
            else:
                building, switches = own_building, own_switches
            # (re)bound while the module runs: only a state that one method reads and then
            # updates (``res, h = self.rnn(x, self.h); self.h = h.detach()``, issue 28) is
            # followed; else the class manages the attribute itself
            kept = [b for b in bindings if b.ctx.func.name in building]
            updates = [b for b in bindings if b.ctx.func.name not in building]
            if any(b.how != ASSIGN or b.path for b in updates):
                continue
            # a setter that nothing run on the device calls (``load_statistics(state)``) may
            # not run at all: the value ``__init__`` stored is what the device meets then
            # (a setter that makes the value where another tensor is, ``reset(x)`` of
            # ``self.h = x.new_zeros(...)``, is how its users place it: the class manages it)
            if any(b.ctx.func.name in running for b in updates) and not any(
                    b.ctx.func.name not in running and self._made_where_given(b.value, b)
                    for b in updates):
                updates = [b for b in updates if b.ctx.func.name in running]
            if len({id(b.ctx.func) for b in updates}) > 1:
                continue
            created = [b for b in kept if b.how == ASSIGN and (
                self._created_on_cpu(b.value, b) if b.ctx.func.name not in switches
                else modules.state_snapshot(state, b.value, b.ctx.func.self_name,
                                             b.ctx.scope))]
            if not created or any(b not in created and not _is_none(b.value)
                                  and not self._none_by_default(b)
                                  and not self._moved_when_given(b, name) for b in kept):
                continue
            if updates and all(self._placeholder(b) for b in created):
                continue  # ``torch.empty(0)``, which the class fills before it uses it
            if reads is None:
                reads = modules.self_reads(info)
            meeting = self._meeting(state, name, reads.get(name, ()), init_methods, updates)
            if meeting is None:
                continue
            method, where, error = meeting
            moved = self._moved_elsewhere(info)
            if moved is None:
                return  # a program that never uses an accelerator: the module stays on the CPU
            safe = self._safe_fix(owning, name, bindings)
            # (the evidence when the tensor is the fallback for a parameter left out)
            defaulted = next((f" (when no `{b.value.value}` is given)" for b in kept
                              if self._none_by_default(b)), "") or next((
                f" (`{b.ctx.func.name}` moves it only when a device is given)" for b in kept
                if self._moved_when_given(b, name)), "")
            # (an inherited attribute names the class that sets it: the evidence of the finding)
            inherited = "" if owning is info else f" (set in its base class `{owning.name}`)"
            for binding in created:
                if _refines(binding, name) or id(binding.node) in self._reported:
                    continue  # ``self.tem = self.tem.permute(...)``: a buffer stays one
                self._reported.add(id(binding.node))  # (a base's, for it and a subclass)
                owner = binding.node.value.value if isinstance(binding.node, cst.Attribute) else "self"
                switch = binding.ctx.func.name
                kind = self.PLAIN_ATTRIBUTE if switch not in switches else self.CACHED_IN_SWITCH
                if name in state.tensor_tuples:
                    kind = self.TUPLE_STATE  # (no buffer holds a tuple: no fix)
                yield Violation(
                    binding.node,
                    kind(owner=owner, name=name, module=info.name, inherited=inherited,
                         method=method, where=where,
                         moved=moved, switch=switch, error=error,
                         given=self._given(binding) or defaulted),
                    fix=self._fix(binding, name, bindings, safe)
                    if name not in state.tensor_tuples else None,
                )

    def _check_containers(self, state: ModuleState) -> Iterator[Violation]:
        """``self.NAME = [...]`` (a display, a comprehension, or ``[]`` that ``__init__``
        fills with ``.append``), or a dict, every item of which is a CPU tensor with a
        dimension: ``.to(device)`` moves no tensor in a plain container, so an item that a
        method combines with a tensor on the module's device fails as a plain tensor
        attribute does (the ``buffer-list`` shape)."""
        info = state.info
        modules = self.analysis.modules
        init_methods = modules.init_methods(info)
        reads = None
        for name, bindings in state.other_containers.items():
            if name in (state.override_moves or ()) or len(info.attributes[name]) != len(bindings) \
                    or any(b.ctx.func is None or b.ctx.func.cls is not info
                           or b.ctx.func.name not in init_methods for b in bindings):
                continue  # (rebound while the module runs: the class manages it)
            items = []
            for binding in bindings:
                found = modules.container_elements(binding)
                if not found:
                    break
                items.extend((item, binding) for item, _ in found)
            else:
                parameters = [self._parameter_of(item, binding) for item, binding in items]
                if not all(self._created_on_cpu(item if inner is None else inner, binding)
                           for (item, binding), inner in zip(items, parameters)):
                    continue
                if reads is None:
                    reads = modules.self_reads(info)
                meeting = self._meeting(state, name, reads.get(name, ()), init_methods, [],
                                        container=True)
                if meeting is None:
                    continue
                method, where, error = meeting
                moved = self._moved_elsewhere(info)
                if moved is None:
                    return  # a program that never uses an accelerator
                message = self.PARAMETER_CONTAINER if all(parameters) else self.CONTAINER
                wrapper = "ParameterDict" if any(
                    isinstance(b.value, (cst.Dict, cst.DictComp)) for b in bindings) \
                    else "ParameterList"
                for binding in bindings:
                    owner = binding.node.value.value
                    yield Violation(binding.node, message(
                        wrapper=wrapper,
                        owner=owner, name=name, module=info.name, method=method,
                        where=where.replace(" it ", " an item ", 1), moved=moved, error=error))

    def _fix(self, binding: Binding, name: str, bindings: List[Binding],
             safe: bool) -> Optional[RegisterBuffer]:
        """``register_buffer`` at the first assignment of the name: it raises KeyError for a
        name that an earlier assignment set (``self.M = M``, then ``if self.M is None: self.M
        = torch.eye(n)``), and once the name is a buffer, assigning a tensor (or None) to it
        stores the buffer. An earlier assignment in another method: no fix (which runs first
        is not in the text)."""
        earlier = [b for b in bindings if b.order < binding.order]
        if any(b.ctx.func is not binding.ctx.func for b in earlier):
            return None
        # (one in a branch that excludes this one's, ``if alpha is None: ... else: ...``,
        # does not run first: each branch's assignment is reported, and fixed, on its own)
        func = binding.ctx.func.node
        blocks = [n for n in walk_code(func.body, into_functions=False)
                  if isinstance(n, cst.IndentedBlock)]
        before = [b for b in earlier if all(
            holds(block, binding.node) for block in blocks if holds(block, b.node))]
        first = min(before, key=lambda b: b.order) if before else binding
        if not isinstance(first.node, cst.Attribute):
            return None
        return RegisterBuffer(first, name, safe)

    def _none_by_default(self, binding: Binding) -> bool:
        """``self.M = M`` of ``__init__(self, ..., M=None)`` that a later ``if self.M is None:
        self.M = torch.eye(n)`` completes (tabnet's ``group_attention_matrix``): a caller that
        passes nothing gets the CPU tensor the class makes, as if the first were ``None``."""
        value, scope = binding.value, binding.ctx.scope
        if not isinstance(value, cst.Name) or scope is None:
            return False
        params = scope.bindings.get(value.value, ())
        return len(params) == 1 and params[0].how == PARAM and \
            _is_none(params[0].value[0].default)

    def _moved_when_given(self, binding: Binding, name: str) -> bool:
        """``self.fb = self.fb.to(self.device)`` under ``if device is not None:`` of
        ``__init__(self, ..., device=None)``: a move while the module is built that runs only
        when the caller names a device; a caller that names none (and moves the module with
        ``.to()`` / ``.cuda()`` later) keeps the CPU tensor (auraloss issue 34, whose
        ``MelSTFTLoss(...)`` was built without ``device`` and moved with ``.cuda()``)."""
        value, func = binding.value, binding.ctx.func
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in api.ACCELERATOR_MOVE_METHODS and func is not None
                and func.scope is not None):
            return False
        receiver = value.func.value
        if not (isinstance(receiver, cst.Attribute) and receiver.attr.value == name
                and isinstance(receiver.value, cst.Name)
                and receiver.value.value == func.self_name):
            return False
        optional = set()
        for param in func.param_names:
            found = func.scope.bindings.get(param, ())
            if len(found) == 1 and found[0].how == PARAM and _is_none(found[0].value[0].default):
                optional.add(param)
        # (the device the move names: the optional parameter, or ``self.P`` stored from it)
        named = {n.value for a in value.args for n in walk_code(a.value) if isinstance(n, cst.Name)}
        named |= {n.attr.value for a in value.args for n in walk_code(a.value)
                  if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name)
                  and n.value.value == func.self_name}
        given = optional & named
        return bool(given) and any(
            isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name)
            and test.left.value in given and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.IsNot)
            and _is_none(test.comparisons[0].comparator)
            for branch_test in _tests_around(binding.ctx)
            for test in walk_code(branch_test))

    def _placeholder(self, binding: Binding) -> bool:
        """``self.overlap = torch.empty(0)``: an empty tensor (a literal 0 among its sizes)."""
        value = binding.value
        if not isinstance(value, cst.Call):
            return False
        qualified = self.kinds.qualname(value.func, binding.ctx.scope) or ""
        return qualified.startswith("torch.") and \
            makes_an_empty_tensor(value, qualified.rpartition(".")[2])

    def _made_where_given(self, value, binding: Binding) -> bool:
        """``x.new_zeros(n)``, ``torch.zeros_like(x)``, ``torch.zeros(n, device=d)``,
        ``t.to(d)``: a value made on a device its code names or takes from another tensor."""
        if not isinstance(value, cst.Call):
            return False
        func = value.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method.startswith("new_") or method in api.MOVE_METHODS or method == "type_as":
                return True
        qualified = self.kinds.qualname(func, binding.ctx.scope) or ""
        return qualified.endswith("_like") or keyword_value(value, "device") is not None

    def _given(self, binding: Binding) -> str:
        """`` (given by `Scaler(torch.tensor([1., 2.]))`)`` for ``self.NAME = PARAM`` of
        ``__init__``: the construction that passes the CPU tensor (the evidence), else ""."""
        value, scope = binding.value, binding.ctx.scope
        params = [b for b in scope.bindings.get(value.value, ()) if b.how == PARAM] \
            if isinstance(value, cst.Name) and scope is not None else []
        passed = self.kinds.caller_arguments(params[0]) if params else None
        return f" (given by `{source_of(passed[0][1].call)}`)" if passed else ""

    def _moved_elsewhere(self, info) -> Optional[str]:
        """What shows that the module meets an accelerator, as TDL007 asks it
        (``modules.accelerator_evidence``; else another file of the project that moves the
        class): "" when this file shows it, the words naming the other file when only that
        one does, None when nothing does (a script that moves nothing keeps it on the CPU)."""
        if self.analysis.modules.accelerator_evidence(info) is not None:
            return ""
        moved = self.analysis.class_moved_in_project(info.name) \
            if info.ctx.scope.kind == "module" else None
        return None if moved is None else f" (another file moves it to an accelerator: {moved})"

    # -- the value: a CPU tensor with at least one dimension --------------------------------

    def _parameter_of(self, value, binding: Binding) -> Optional[cst.BaseExpression]:
        """The tensor ``nn.Parameter(t)`` wraps, else None."""
        if isinstance(value, cst.Call) and value.args and value.args[0].keyword is None and \
                not value.args[0].star and \
                self.kinds.qualname(value.func, binding.ctx.scope) in api.PARAMETER_CLASSES:
            return value.args[0].value
        return None

    def _created_on_cpu(self, value, binding: Binding, depth: int = 0) -> bool:
        """``_made_on_cpu``, each value answered once: a chain of rebindings
        (``y = y.unsqueeze(0)`` read through a helper method of a helper) asks the earlier
        ones again and again. A node is read in one place, so its answer does not depend on
        who asks; a "no" found with less depth left is no "no" for one with more."""
        known = self._made.get(id(value))
        if known is not None and (known[0] or known[1] <= depth):
            return known[0]
        answer = self._made_on_cpu(value, binding, depth)
        self._made[id(value)] = (answer, depth)
        return answer

    def _made_on_cpu(self, value, binding: Binding, depth: int = 0) -> bool:
        """``value`` is created on the CPU by torch and is not 0-dim (a 0-dim CPU tensor
        combines with device tensors): a factory without ``device=`` whose shape has a
        dimension, and what indexing with a slice, dtype casts, reshapes, elementwise math
        and arithmetic make of one (broadcasting never drops a dimension, and a CPU tensor
        with one that was combined with another tensor while the module was built stayed on
        the CPU, or that would already have failed); a local name every assignment of which
        gives one."""
        # (each step reads an earlier binding or a helper: a chain ends. Twelve steps were too
        # few for a helper's Gaussian kernel: arange, float, subtract, power, negate, exp,
        # outer product by slices, normalise, expand, issue 28)
        if depth > 40:
            return False
        scope = binding.ctx.scope
        if isinstance(value, cst.Name):
            owner = scope.resolve(value.value)
            if owner is None or owner is not scope or owner.kind != "function":
                return False
            locals_ = owner.bindings.get(value.value, ())
            if len(locals_) == 1 and locals_[0].how == PARAM:
                # ``self.weight = weight`` of ``__init__(self, weight)``: what every
                # construction of the class in this file passes (``Scaler(torch.tensor([1.,
                # 2.]))``; ``KindInference.caller_arguments``)
                passed = self.kinds.caller_arguments(locals_[0])
                return bool(passed) and all(self._created_on_cpu(argument, site, depth + 1)
                                            for argument, site in passed)
            # the assignments before this read (``y = y.unsqueeze(0)`` reads the earlier ones),
            # none after it (one may run first in a loop),
            earlier = [b for b in locals_ if b.order < binding.order]
            return bool(earlier) and len(earlier) + sum(
                b.how == ASSIGN and not b.path and b.value is not None
                and reads_name(b.value, value.value) for b in locals_ if b not in earlier
            ) == len(locals_) and all(
                b.how == ASSIGN and (not b.path or (
                    len(b.path) == 1 and self.analysis.makes_tensor_parts(b.value, scope)))
                and self._created_on_cpu(b.value, b, depth + 1)
                for b in earlier)  # (``ys, xs = torch.meshgrid(...)``: each part, there)
        func = binding.ctx.func
        if func is not None and func.cls is not None and \
                func.name in self.analysis.modules.init_methods(func.cls) and \
                self.analysis.modules.buffer_snapshot(
                    self.analysis.module_state(func.cls), value, func.self_name):
            # a buffer taken while the module is built, on the CPU: ``.to()`` replaces the
            # buffer, the attribute (or list) keeps what it took
            return True
        if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) \
                and func is not None and func.cls is not None \
                and value.value.value == func.self_name:
            # ``self.tem = self.tem.permute(2, 0, 1)``: what the attribute held before
            earlier = [b for b in func.cls.attributes.get(value.attr.value, ())
                       if b.order < binding.order]
            return bool(earlier) and all(
                b.how == ASSIGN and not b.path and self._created_on_cpu(b.value, b, depth + 1)
                for b in earlier)
        if isinstance(value, cst.Call):
            helper = self.analysis.placement.method_called(value, scope)
            if helper is None:
                # ``self.pe = sinusoid_table(n, d)``: a plain function of this file
                helper = self.analysis.placement.helper_called(value, scope)
            if helper is not None:
                # ``self.pe = self._make_pe(d, n)``: every ``return`` of the helper gives one
                return bool(helper.returns) and all(returned is not None and self._created_on_cpu(
                    returned, _AtReturn(ctx), depth + 1) for returned, ctx in helper.returns)
        if isinstance(value, cst.Tuple):
            # an RNN's state, ``(torch.zeros(1, n, h), torch.zeros(1, n, h))``: all of it
            return bool(value.elements) and all(
                not isinstance(e, cst.StarredElement) and
                self._created_on_cpu(e.value, binding, depth + 1) for e in value.elements)
        inner = self.kinds.passed_through(value, scope)
        if inner is not None:  # ``Variable(torch.zeros(1, n))``: the tensor it wraps
            return self._created_on_cpu(inner, binding, depth + 1)
        if isinstance(value, cst.Subscript):
            keeps_a_dim = any(isinstance(e.slice, cst.Slice) or (
                isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Name)
                and e.slice.value.value == "None") for e in value.slice)
            return keeps_a_dim and self._created_on_cpu(value.value, binding, depth + 1)
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, _ARITHMETIC):
            return self._created_on_cpu(value.left, binding, depth + 1) or \
                self._created_on_cpu(value.right, binding, depth + 1)
        if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
            return self._created_on_cpu(value.expression, binding, depth + 1)
        if not isinstance(value, cst.Call):
            return False
        func = value.func
        qualified = self.kinds.qualname(func, scope) or ""
        if isinstance(func, cst.Attribute) and func.attr.value == "type" and \
                len(value.args) == 1 and self.analysis.is_dtype(value.args[0].value, scope):
            # ``mask.type(torch.float)``: a cast, where the tensor is (``.type(torch.cuda.
            # FloatTensor)`` is a move; customizedlinear's mask, devreports2)
            return self._created_on_cpu(func.value, binding, depth + 1)
        if isinstance(func, cst.Attribute) and not qualified.startswith("torch.") and (
                func.attr.value in _SHAPE_KEEPING or func.attr.value in _ELEMENTWISE):
            # a method (``torch.triu(x)`` and ``torch.exp(x)`` are functions, below)
            return self._created_on_cpu(func.value, binding, depth + 1) and not (
                func.attr.value == "view" and not value.args)
        if not qualified.startswith("torch."):
            return False
        tail = qualified.rpartition(".")[2]
        if qualified.count(".") != 1 and not (qualified.startswith("torch.nn.") and tail == "Buffer"):
            return False  # torch.cuda.FloatTensor, torch.Tensor's namespaces
        device = keyword_value(value, "device")
        if device is not None and not self._where_built(device, binding):
            return False
        if any(a.star for a in value.args):
            return False
        positional = [a.value for a in value.args if a.keyword is None]
        if tail in _OF_FIRST_ARGUMENT or tail in _ELEMENTWISE:
            return bool(positional) and self._created_on_cpu(positional[0], binding, depth + 1)
        if tail in api.TENSOR_TUPLE_FUNCTIONS:  # ``torch.meshgrid(torch.arange(n), ...)``
            items = positional_items(value)
            return bool(items) and all(not isinstance(item, cst.StarredElement) and
                                       self._created_on_cpu(item, binding, depth + 1)
                                       for item in items)
        if tail in api.JOINING_FUNCTIONS and positional and isinstance(positional[0], cst.Name):
            # ``torch.cat(pieces)`` of a list the method builds (``pieces = []``, then
            # ``pieces.append(torch.arange(...))`` under ``if``s; litgpt's LoRA ``lora_ind``)
            appends = self.analysis.appended_to(positional[0].value, scope, binding.order)
            return bool(appends) and all(self._created_on_cpu(site.call.args[0].value, binding,
                                                              depth + 1) for site in appends)
        if tail in api.JOINING_FUNCTIONS or tail == "outer":
            items = positional[0].elements if tail != "outer" and positional and isinstance(
                positional[0], (cst.List, cst.Tuple)) else [cst.Element(v) for v in positional]
            return bool(items) and all(not isinstance(e, cst.StarredElement) and
                                       self._created_on_cpu(e.value, binding, depth + 1)
                                       for e in items)
        if tail in api.DATA_FACTORIES and positional and \
                self._created_on_cpu(positional[0], binding, depth + 1):
            return True  # a copy of a CPU tensor with a dimension, where it is
        if tail == "from_numpy":
            return True  # a numpy array: 0-dim ones are all but unheard of in module state
        # a factory: with a dimension, by the one answer (a 0-dim one combines with any device)
        return tail in FACTORY_CALLS and factory_dimensions(
            value, tail, lambda data: self.kinds.is_sequence(data, scope)
            or self._numpy_with_dimension(data, binding)) is True

    def _where_built(self, device, binding: Binding) -> bool:
        """``device=self.weight.device`` (or ``next(self.parameters()).device``) while the
        module is built: where its parameters are then, the CPU unless it is built on a
        device, as a factory without ``device=`` (``.to(device)`` later moves the parameters
        and leaves the tensor; litgpt's LoRA ``lora_ind``, fixed with ``register_buffer``)."""
        func = binding.ctx.func
        if func is None or func.cls is None or func.self_name is None or \
                func.name not in self.analysis.modules.init_methods(func.cls):
            return False
        if not isinstance(device, cst.Attribute) or device.attr.value != "device":
            return False
        owner = device.value
        if isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name) and \
                owner.func.value == "next" and len(owner.args) == 1:
            owner = owner.args[0].value  # ``next(self.parameters())``
            return isinstance(owner, cst.Call) and not owner.args and \
                isinstance(owner.func, cst.Attribute) and owner.func.attr.value == "parameters" \
                and isinstance(owner.func.value, cst.Name) and owner.func.value.value == func.self_name
        if not (isinstance(owner, cst.Attribute) and isinstance(owner.value, cst.Name)
                and owner.value.value == func.self_name):
            return False
        state = self.analysis.module_state(func.cls)
        attribute = owner.attr.value
        return attribute in state.parameters or attribute in state.buffers or \
            attribute in api.MODULE_STATE_ATTRIBUTES

    def _attribute_rank(self, state: ModuleState, name: str) -> Optional[int]:
        """The fewest dimensions ``self.NAME`` is made with by its assignments while the module
        is built (``_rank``), or None when one of them does not tell."""
        ranks = [self._rank(b.value, b) for b in state.bindings(name)
                 if b.how == ASSIGN and not b.path and not _is_none(b.value)
                 and not self._none_by_default(b)]
        return min(ranks) if ranks and None not in ranks else None

    def _rank(self, value, binding, depth: int = 0) -> Optional[int]:
        """The number of dimensions of the CPU tensor ``value`` makes, where its making shows
        it: a factory given its sizes (``torch.zeros(a, b)``), data given as nested lists
        (``torch.tensor([[...]])``, ``torch.from_numpy(np.array([[...]]))``), a reshape
        (``.view(1, 3, 1, 1)``), ``unsqueeze``, and what casts and elementwise math keep; a
        local name bound once before. None otherwise."""
        if depth > 8 or value is None:
            return None
        scope = binding.ctx.scope
        if isinstance(value, cst.Name):
            owner = scope.resolve(value.value) if scope is not None else None
            locals_ = owner.bindings.get(value.value, ()) if owner is scope and owner else ()
            earlier = [b for b in locals_ if b.order < binding.order]
            if len(locals_) != 1 or len(earlier) != 1 or earlier[0].how != ASSIGN or earlier[0].path:
                return None
            return self._rank(earlier[0].value, earlier[0], depth + 1)
        if not isinstance(value, cst.Call):
            return None
        func = value.func
        qualified = self.kinds.qualname(func, scope) or ""
        if isinstance(func, cst.Attribute) and not qualified.startswith(("torch.", "numpy.")):
            return method_rank(value, self._rank(func.value, binding, depth + 1))
        inner = self.kinds.passed_through(value, scope)
        if inner is not None:
            return self._rank(inner, binding, depth + 1)
        tail = qualified.rpartition(".")[2]
        positional = [a.value for a in value.args if a.keyword is None and not a.star]
        if qualified.startswith("torch.") and tail in api.SIZE_FACTORIES and tail != "full":
            return sizes_rank(value)
        if qualified.startswith("torch.") and tail in api.FACTORY_RANKS:
            return api.FACTORY_RANKS[tail]  # (``torch.eye(n)``, whose rows have a dimension)
        if qualified in ("torch.tensor", "torch.as_tensor", "torch.from_numpy",
                         "numpy.array", "numpy.asarray") and positional:
            return literal_rank(positional[0]) or self._rank(positional[0], binding, depth + 1)
        return None

    def _numpy_with_dimension(self, value, binding, depth: int = 0) -> bool:
        """A numpy array with a dimension, by how it is made (``np.linspace(0, 1, n)``,
        ``np.zeros((d, d))``, ``np.array([...])``, and their ``.astype(...)`` /
        ``.reshape(...)``), a local name every earlier assignment of which (and none later)
        gives one, or what a plain function or method of the file returns when every
        ``return`` gives one (``fb = mel_filters(sr, n_fft, n_mels)``, auraloss's mel
        filterbank, devreports2): the data of ``torch.tensor(...)`` that makes a tensor with
        one."""
        if depth > 6 or value is None:
            return False
        scope = binding.ctx.scope
        if isinstance(value, cst.Name):
            owner = scope.resolve(value.value) if scope is not None else None
            if owner is None or owner is not scope or owner.kind != "function":
                return False
            locals_ = owner.bindings.get(value.value, ())
            earlier = [b for b in locals_ if b.order < binding.order]
            return bool(earlier) and len(earlier) == len(locals_) and all(
                b.how == ASSIGN and not b.path and self._numpy_with_dimension(b.value, b, depth + 1)
                for b in earlier)
        if not isinstance(value, cst.Call):
            return False
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value in api.NUMPY_SHAPE_KEEPING:
            return self._numpy_with_dimension(func.value, binding, depth + 1)
        like = api.NUMPY_ARRAY_FACTORIES.get(self.kinds.qualname(func, scope) or "")
        if like is not None:
            return factory_dimensions(
                value, like, lambda data: self.kinds.is_sequence(data, scope)) is True
        helper = self.analysis.placement.method_called(value, scope) or \
            self.analysis.placement.helper_called(value, scope)
        return helper is not None and bool(helper.returns) and all(
            returned is not None and self._numpy_with_dimension(returned, _AtReturn(ctx), depth + 1)
            for returned, ctx in helper.returns)

    # -- where it meets the module's device ---------------------------------------------------

    def _meeting(self, state: ModuleState, name: str, reads, init_methods: Set[str],
                 updates: List[Binding], container: bool = False):
        """(method, what it does, the error) for the first method (outside construction) that
        combines the attribute, as it is, with a tensor on the module's device; None when none
        does.

        With ``updates`` (the attribute's assignments in one method while the module runs),
        only that method counts, where the meeting must come first: before each update, not
        under a test that reads the attribute (``if self.h.size(0) != x.size(0): ...``), and
        each update must store a tensor on the module's device (``self.h = h.detach()``):
        the first call meets the CPU tensor from ``__init__``."""
        methods: List[FunctionInfo] = []
        for method, _ in reads:
            if method.name not in init_methods and method not in methods:
                methods.append(method)
        if updates:
            updater = updates[0].ctx.func
            methods = [method for method in methods if method is updater]
        for method in methods:
            devices = self.analysis.modules.on_module_device(state, method)
            stored_on_device = not updates or all(devices.carries(b.value) for b in updates)
            stays = _Stays(method, name, self.kinds, container,
                           None if container else self._attribute_rank(state, name))
            order: Dict[int, int] = {}
            tested = []  # the branches and loops whose test reads the attribute
            for node in walk_code(method.node.body, into_functions=True):
                order[id(node)] = len(order)
                if updates and isinstance(node, (cst.If, cst.IfExp, cst.While)) and any(
                        stays.is_attribute(n) for n in walk_code(node.test)):
                    tested.append(node)
            for node in walk_code(method.node.body, into_functions=True):
                where = self.analysis.modules.meeting(node, stays, devices)
                if where is None:
                    continue
                error = where.error
                if method.name == "forward" and devices.given and self.analysis.modules.meeting(
                        node, stays, self.analysis.modules.alone(state, method)) is None:
                    # the meeting rests on what the file's calls give ``forward``: name one
                    site = self.kinds.instance_call_sites(state.info)[0]
                    read = {n.value for n in walk_code(node) if isinstance(n, cst.Name)}
                    names = sorted(devices.given & read) or sorted(devices.given)
                    given = " and ".join(f"`{param}`" for param in names)
                    where += f" ({given} on an accelerator at every call in this file, as " \
                        f"`{source_of(site.call)}` gives {'them' if len(names) > 1 else 'it'})"
                if updates:
                    if any(holds(branch, node) for branch in tested):
                        continue
                    if stored_on_device and all(
                            order[id(node)] < order.get(id(b.node), -1) or holds(b.value, node)
                            for b in updates):
                        where += " before it stores a new value there (the first call meets " \
                            "the tensor built in `__init__`)"
                    elif not any(holds(branch, b.node) for branch in tested for b in updates) \
                            and reached_without(method.node.body, node, [b.node for b in updates]):
                        # (``if self.training: self.mean = m`` before ``x - self.mean``; not
                        # ``if self.cache.device != x.device: self.cache = ...``, where the
                        # path that skips it holds a tensor already there)
                        where += " on a path that skips its assignments to it (a call " \
                            "that takes that path meets the tensor built in `__init__`)"
                    else:
                        continue
                return method.name, where, error
        return None

    # -- the fix's safety ---------------------------------------------------------------------

    def _safe_fix(self, info, name: str, bindings: List[Binding]) -> bool:
        if len(bindings) != 1:
            return False
        binding = bindings[0]
        func = binding.ctx.func
        if func is None or func.name != "__init__" or info.scope is None \
                or name in info.scope.bindings:
            return False  # (a class attribute of that name makes register_buffer raise)
        if isinstance(binding.value, cst.Name) and any(
                b.how == PARAM for b in func.scope.bindings.get(binding.value.value, ())):
            return False  # ``self.weight = weight``: a caller in another file may pass a list
        return any(site.ctx.func is func and site.order < binding.order
                   for site in self.analysis.collected.calls_by_name.get("__init__", ()))


def _tests_around(ctx) -> Iterator[cst.BaseExpression]:
    """The tests of the ``if`` statements (and conditional expressions) in whose body, not
    their ``else``, code of ``ctx`` sits, within its function: ``Ctx.conditions``, which the
    traversal records, up to the function's name."""
    link = ctx.conditions
    while link is not None and not isinstance(link[0], str):
        if isinstance(link[0], cst.BaseExpression):
            yield link[0]
        link = link[1]


class _AtReturn:
    """A ``return`` of a helper method judged as a binding: its value is read after the
    helper's own assignments (a helper is straight-line code that builds what it returns)."""

    __slots__ = ("ctx", "order")

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.order = float("inf")


class _Stays:
    """Whether an expression of ``method`` is the attribute as it is (on the CPU, with a
    dimension): ``self.NAME``, its slices, casts and reshapes, comparisons of it with numbers,
    and local names every assignment of which gives one of those."""

    def __init__(self, method: FunctionInfo, name: str, kinds=None,
                 container: bool = False, rank: Optional[int] = None) -> None:
        self.self_name = method.self_name
        self.name = name
        self.kinds = kinds
        # the number of dimensions the attribute is made with, where it is known
        # (``TDL005._rank``): an index that leaves one keeps it a tensor with a dimension
        self.rank = rank
        # ``self.NAME`` holds CPU tensors in a list or dict: its items stay, not itself
        self.container = container
        self.locals: Set[str] = set()
        scope = self.scope = method.scope
        if scope is None:
            return
        assigned: Dict[str, list] = {n: b for n, b in scope.bindings.items()
                                     if b and n not in method.param_names}
        # the greatest fixed point, as for the values on the module's device
        self.locals = set(assigned)
        changed = True
        while changed:
            changed = False
            for local, bindings in assigned.items():
                if local in self.locals and not all(
                        b.how == ASSIGN and not b.path and self(b.value) for b in bindings):
                    self.locals.discard(local)
                    changed = True
        if container:  # ``for anchor in self.anchors:``, ``[x * p for p in self.params]``
            self.locals |= {local for local in self._items(method)
                            if all(b.how == FOR for b in scope.bindings.get(local, ()))}

    def _items(self, method: FunctionInfo) -> Set[str]:
        """The names a loop or comprehension of ``method`` binds to the container's items
        (``for p in self.NAME``, ``for i, p in enumerate(self.NAME)``)."""
        found = set()
        for node in walk_code(method.node.body, into_functions=True):
            if not isinstance(node, (cst.For, cst.CompFor)):
                continue
            iterable, target = node.iter, node.target
            if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and \
                    iterable.func.value == "enumerate" and len(iterable.args) == 1 and \
                    isinstance(target, cst.Tuple) and len(target.elements) == 2:
                iterable, target = iterable.args[0].value, target.elements[1].value
            if self.is_attribute(iterable) and isinstance(target, cst.Name):
                found.add(target.value)
        return found

    def _joins(self, call: cst.Call) -> bool:
        return self.scope is not None and api.is_sequence_join(
            self.kinds.qualname(call.func, self.scope) or "")

    def is_attribute(self, expr) -> bool:
        """``self.NAME`` itself."""
        return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and \
            expr.value.value == self.self_name and expr.attr.value == self.name

    def __call__(self, expr) -> bool:
        if isinstance(expr, cst.Name):
            return expr.value in self.locals
        if isinstance(expr, cst.Attribute):
            if isinstance(expr.value, cst.Name) and expr.value.value == self.self_name:
                return expr.attr.value == self.name and not self.container
            # (``.T``, ``.data``: the same values, or their view, where they are)
            return expr.attr.value in api.TENSOR_ATTRIBUTES and self(expr.value)
        if isinstance(expr, cst.Subscript):
            if self.container and self.is_attribute(expr.value):
                return all(isinstance(e.slice, cst.Index) for e in expr.slice)  # an item
            if self.rank is not None and not self.container and self.is_attribute(expr.value):
                # ``self.anchors[0]`` of a table made with two dimensions (issue 28)
                left = rank_after_index(self.rank, expr)
                if left is not None:
                    return left >= 1
            return any(isinstance(e.slice, cst.Slice) for e in expr.slice) and self(expr.value)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and (
                expr.func.attr.value in _SHAPE_KEEPING or expr.func.attr.value in _ELEMENTWISE):
            return self(expr.func.value)
        inner = None if self.kinds is None or self.scope is None else \
            self.kinds.passed_through(expr, self.scope)
        if inner is not None:  # ``Variable(self.pe[:, :n], requires_grad=False)``
            return self(inner)
        if isinstance(expr, cst.Call) and self.kinds is not None and self._joins(expr):
            # ``torch.cat([u * self.sign, v])``: as arithmetic, were a piece on the device the
            # meeting is the piece itself, or the join
            return any(isinstance(arg.value, (cst.List, cst.Tuple)) and any(
                self(e.value) for e in arg.value.elements) for arg in expr.args[:1])
        if isinstance(expr, cst.UnaryOperation):
            return self(expr.expression)
        if isinstance(expr, cst.IfExp):  # ``a if self.training else self.ab``: either may be
            return self(expr.body) or self(expr.orelse)
        if isinstance(expr, cst.Comparison):
            operands = [expr.left] + [c.comparator for c in expr.comparisons]
            return self(expr.left) and all(is_number(o) for o in operands[1:])
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _ARITHMETIC):
            # ``self.var + eps``: still on the CPU (were the other operand on the device, the
            # meeting is that operation itself, found there)
            return self(expr.left) or self(expr.right)
        return False


def _refines(binding: Binding, name: str) -> bool:
    """``self.NAME = self.NAME.permute(...)``: an assignment computed from the attribute's
    earlier value (once that one is a buffer, assigning a tensor to the name updates it)."""
    self_name = binding.ctx.func.self_name if binding.ctx.func is not None else None
    return any(isinstance(node, cst.Attribute) and node.attr.value == name
               and isinstance(node.value, cst.Name) and node.value.value == self_name
               for node in walk_code(binding.value))




def _is_none(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"

