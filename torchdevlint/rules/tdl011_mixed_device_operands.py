"""TDL011: a CPU tensor meets a tensor or a model on an accelerator in one operation.

``torch.randn(3, device="cuda") + torch.randn(3)`` and ``model.to("cuda")(torch.randn(2, 8))``
raise ``RuntimeError: Expected all tensors to be on the same device, but found at least two
devices, cuda:0 and cpu!``. Reported where the two meet (arithmetic, a torch function of both
such as ``torch.cat``/``torch.matmul``/``F.mse_loss``, a tensor method combining two tensors
such as ``a.add(b)``, the call of a model moved to a device, or gradients handed to autograd:
``autograd.grad(out, x, torch.ones(n))``, ``out.backward(g)``), and only where the analysis
has evidence for both sides at that point: ``analysis.on_cpu`` for the one (a factory without
``device=``, ``.cpu()``, ``torch.from_numpy``...) and ``analysis.on_accelerator`` (or a model
moved to a device) for the other, both flow-sensitive within the function (``x = x.to(device)``
first takes ``x`` off the CPU).

Silent: when either placement is unknown or the evidence conflicts; when the CPU tensor may be
0-dim (``torch.tensor(3.0)``, a reduction such as ``x.sum()``, an element ``x[0]``: a 0-dim
CPU tensor combines with any device); for plain indexing (``gpu[cpu_index]`` is no operation here);
inside a ``for`` loop over a data loader where its CPU operand reads a batch as the loop took
it (TDL004 reports those: ``engine.DEFERENCES``, asked about the violation's ``subject``); in
the methods of
``nn.Module`` classes (their state is TDL005/TDL007's); under ``pytest.raises`` /
``assertRaises`` and in ``try`` bodies (the failure may be the point); where the model is
called (or its output made) before the code moves it, in the order the code runs (a notebook
that moves its model in a later cell); where the CPU tensor's move is a discarded statement
(``x.to(device)`` alone: TDL001 reports that); where the CPU tensor is a factory under a
default device other than the CPU (``torch.set_default_device(device)`` in the file, ``with
torch.device(device):`` around it: ``Placement.on_default_device``), which creates there.

Fix: the CPU operand is moved at the use, ``x`` becoming ``x.to(device)``, with the device
expression the evidence names (or ``other.device`` for a tensor moved by ``.cuda()``); an
operand that is a torch factory call is created there instead, ``torch.randn(2, 3)`` becoming
``torch.randn(2, 3, device=device)`` (what TDL009 asks of ``torch.randn(2, 3).to(device)``).
Safe where that device is a plain name (or a string literal) defined in the same function and
the factory's values do not depend on the device (not a random one: see TDL009); unsafe where
it is another expression whose names are in scope; no fix otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, List, Optional

import libcst as cst

from torchdevlint.analysis import (
    ASSIGN, FOR, PARAM, INDEX_ARGUMENT_ERROR, INDEX_ERROR, RNN_STATE_ERROR, Analysis, Ctx, K, OnAccelerator, OnCPU, Scope, api,
    updates_itself,
    argument_for_parameter, call_argument, checked_index_operands,
    data_of_unknown_shape, exclusive_branches, is_elementwise_comparison, factory_dimensions, failure_expected_or_handled, holds, iter_children, keyword_value, last_name,
    move_device_argument, names_a_length, returns_torch_tensors, says_it_fails, walk_code,
    with_item_expects_failure,
)
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import (
    EachItem, FixContext, call_on, call_on_text, each_moved,
)
from torchdevlint.fixes.model import Edit, Fix, FixPlan
from torchdevlint.positions import code_for_node
from torchdevlint.rules import factories
from torchdevlint.rules.base import (
    CUDA_TENSOR_TYPE_TEXT, Message, Rule, Violation, method_call_text, source_of,
)
from torchdevlint.rules.prefilter import SCALAR_FACTORIES, SIZED_FACTORIES, mixed_devices_in

MIXED_ERROR = ("RuntimeError: Expected all tensors to be on the same device, but found at least "
               "two devices, cuda:0 and cpu!")

_ARITHMETIC = frozenset((cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide,
                         cst.Modulo, cst.Power, cst.MatrixMultiply))
# ``a += b``: an in-place operation of two tensors, as ``a + b`` is.
_AUGMENTED_TEXT = {cst.AddAssign: "+=", cst.SubtractAssign: "-=", cst.MultiplyAssign: "*=",
                   cst.DivideAssign: "/=", cst.FloorDivideAssign: "//=", cst.ModuloAssign: "%=",
                   cst.PowerAssign: "**=", cst.MatrixMultiplyAssign: "@="}
_NOT_ENTERED = frozenset((cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp,
                          cst.DictComp, cst.GeneratorExp))
# torch functions whose positional tensor arguments (or the elements of a list of them) must
# share one device.
_TORCH_FUNCTIONS = api.SAME_DEVICE_FUNCTIONS
_FUNCTIONAL = api.SAME_DEVICE_FUNCTIONAL
# Autograd's entry points: the gradients given must be on their outputs' device.
_GRADIENT_FUNCTIONS = api.GRADIENT_FUNCTIONS
GRADIENT_ERROR = "RuntimeError: invalid gradient at index 0 - expected device cuda:0 but got cpu"
# Tensor methods combining the receiver with their first positional argument.
_TENSOR_METHODS = api.BINARY_TENSOR_METHODS
# What may leave a 0-dim tensor (which combines with any device): reductions and the like.
_MAY_BE_SCALAR = api.MAY_BE_SCALAR_METHODS
_ASK = object()  # (``_violation``: the fix's safety is ``_fix_safety``'s)
_ADDS_A_DIMENSION = api.DIMENSION_ADDING_METHODS
_SEQUENCE_JOINS = api.SEQUENCE_JOINING_FUNCTIONS


# How many assignments ``_may_be_scalar`` follows back before it gives up (and answers "may
# be"): a diffusion schedule is five deep from its indexing (``sqrt_alphas_cumprod`` of
# ``alphas_cumprod`` of ``alphas`` of ``betas`` of ``torch.linspace``: issue 28).
_SCALAR_DEPTH = 6


@dataclass
class MoveOperand(FixPlan):
    """Move the CPU operand to the other's device, where it is used; an operand that is a
    torch factory call is created there instead (``device=``: a ``.to(device)`` on it is what
    TDL009 reports)."""

    operand: cst.BaseExpression
    device: str
    safe: bool
    factory: Optional[str] = None  # the factory's name (``randn``) when the operand is one

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        if self.factory is not None:
            edit = factories.with_arguments(ctx, self.operand, (("device", self.device),))
            return None if edit is None else Fix(
                finding.code, self.safe and factories.same_tensor(self.factory, self.operand, False),
                f"create the CPU operand on the other's device (`device={self.device}`)", (edit,))
        suffix = f".to({self.device})"
        return Fix(finding.code, self.safe,
                   f"move the CPU operand to the other's device (`{suffix}`)",
                   call_on(ctx, self.operand, suffix))


@dataclass
class CreateInMethod(FixPlan):
    """Create the CPU tensors a method returns on its module's device:
    ``device=next(self.parameters()).device`` added to each factory (``init_hidden``)."""

    factories: tuple
    device: str

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        edits = [factories.with_arguments(ctx, call, (("device", self.device),))
                 for call in self.factories]
        if not edits or any(edit is None for edit in edits):
            return None
        return Fix(finding.code, False, f"create them on the model's device (`device={self.device}`)",
                   tuple(edits))


@dataclass
class MoveModule(FixPlan):
    """Move the loss module where it is built: ``nn.CrossEntropyLoss(weight=w).to(device)``."""

    built: cst.Call
    device: str

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        end = ctx.span(self.built)[1]
        return Fix(finding.code, False, f"move the loss module there (`.to({self.device})`)",
                   (Edit(end, end, f".to({self.device})"),))


class MixedDeviceOperands(Rule):
    """
    ## What it does
    Reports an operation where a tensor known to be on the CPU meets a tensor or a model known to
    be on an accelerator (or on the device chosen at runtime):

    - arithmetic: `a + b`, `a * b`, `a @ b`, ... , in place too: `loss += F.l1_loss(x, y)`,
      `scores *= mask` (issue 28: PatchmatchNet's loss accumulator made by `torch.zeros(1)`;
      no fix when the CPU tensor is the target: `loss.to(d) += ...` is no code);
    - a torch function of both: `torch.cat`/`torch.stack` (of a list), `torch.matmul`,
      `torch.where`, `torch.maximum`, ..., and `F.linear`, `F.mse_loss`, `F.cross_entropy`, ...,
      the tensors given by keyword included (`weight=`, `pos_weight=`, `target=`: class
      weights left on the CPU, issue 28);
    - the call of a loss module given both, known by how it was built (`criterion =
      nn.CrossEntropyLoss()`, a class of the file deriving from a loss class; not by its name
      alone): `criterion(model(x), target)` with `target = torch.tensor([label])` (issue 28:
      a loop over hand-made samples, no data loader);
    - a tensor method combining two tensors: `a.add(b)`, `a.matmul(b)`, `a.masked_fill(mask, v)`;
    - a CPU tensor indexed with a tensor on an accelerator: `torch.eye(n)[labels]`, the
      one-hot idiom given the labels the code moved (issue 28), reported at the indexed tensor
      (in a loop over a data loader too: the index is the batch, moved, and the CPU table is no
      batch of TDL004's). Not a 0-dim index (`names[out[0].argmax()]`: torch reads it as a
      number), nor the other way round (`gpu[cpu_index]` works). An index shows a dimension
      by how it is made: a part of a data loader's batch (not of one built with
      `batch_size=None`), `squeeze(k)` of one for `k > 0` (the batch's dimension stays), or a
      helper's parameter that every call in the file gives one (ClimateNet's
      `torch.eye(num_classes)[true.squeeze(1)]` in a loss given the moved labels);
    - an index (or mask) and the tensor it indexes on two devices, in an operation that checks
      both: `gather`, `scatter`/`scatter_`/`scatter_add`, `index_select`, `index_add`,
      `index_copy`, `index_fill`, `take`, `put`, `masked_select`, `masked_scatter` (a tensor
      method, or the torch function of that name). Unlike plain indexing, these refuse a CPU
      index into a tensor on the device: a DQN's `q(obs).gather(1, actions)` given the replay
      buffer's `actions = torch.tensor(batch.action)`; and an index on the device into a CPU
      tensor: `torch.zeros(n, k).scatter_(1, labels, 1.0)` given the labels the code moved
      (issue 28). The message quotes torch's error, which names the argument ("got index is
      on cpu, different from other tensors on cuda:0"). No fix moves the CPU tensor of an
      in-place operation at the call (`out.to(d).scatter_(...)` would write into a copy);
    - the call of a model moved to a device (or of a registered submodule with weights of
      one: `model.embed(tokens)`) with a CPU tensor argument, or a tuple argument with one
      among its items: `model(x)`, `rnn(x, (h0, c0))` (where the model's class hands
      that argument to a recurrent layer as its state, or the model is a torch.nn `LSTM` /
      `GRU` / `RNN` given its state, the message names the error the layer raises: the
      seq2seq tutorial's `encoder(word, hidden)` of `hidden = encoder.initHidden()`, "Input
      and hidden tensors are not at the same device");
    - the call of a function of the file that calls one of its parameters with another's
      value (`def generate(model, idx): ... model(idx[:, -n:])`), given a moved model for the
      one and a CPU tensor for the other: `generate(model=gpt, idx=text_to_token_ids(text))`
      (issue 28: they meet in there; the finding and the fix are at the call, where the
      tensor is chosen);
    - the call of a function of the file whose body makes two of its parameters meet in one
      of the operations above (`def add_noise(signal, noise): return signal + noise`), given
      a tensor on an accelerator for the one and a CPU tensor for the other:
      `add_noise(signal, torch.randn(n))` (the message names the function and the operation);
      or indexes one with the other (`def _i(tensor, t, x): return tensor[t].view(...)`, a
      diffusion schedule given on the CPU with the timesteps on an accelerator: only that way
      round fails, and not with a 0-dim index);
    - the pieces a list collects with `.append()` and `torch.cat`/`torch.stack` joins: a CPU
      piece and an accelerator piece appended to one list (`pieces.append(torch.zeros(0))`
      beside `pieces.append(out)`), or at one position of the tuples a list collects, joined
      position by position (`[torch.cat(x, 0) for x in zip(*stats)]`, yolov5's `val.py`,
      issue 28). Reported at the CPU piece, where it is made; the list must be bound to `[]`
      in the same function, nothing taken out of it, and the two appends not the two
      branches of one `if` (`if cuda: ... else: ...` never collects both);
    - gradients handed to autograd for outputs on another device: `torch.autograd.grad(out, x,
      torch.ones(n, 1))`, `torch.autograd.backward(out, g)`, `out.backward(g)` (issue 28: the
      WGAN-div gradient penalty);
    - the call of a loss module built with a CPU tensor it keeps, given a tensor on an
      accelerator: `criterion = nn.CrossEntropyLoss(weight=torch.tensor([...]))` (or a
      `pos_weight=`), never moved (`criterion.to(device)`), then `criterion(model(x), y)`
      (issue 28: class weights left on the CPU). In a loop over a data loader too: the CPU
      side is the loss module's state, not a batch;
    - the initial state a method of a class of the file returns, made on the CPU, handed to
      the moved model: `hidden = model.init_hidden(n)` (`return torch.zeros(...),
      torch.zeros(...)`), then `model(x, hidden)` (issue 28: the RNN training loop). Its fix
      creates the method's tensors on the model's device. A plain function of the file that
      returns such a tuple (`hidden = init_hidden(n, h)`) has no model to ask: its fix moves
      each tensor where the model is called (`tuple(t.to(device) for t in hidden)`).

    The CPU side is a torch factory without `device=` (or with the CPU), `.cpu()`, `.to("cpu")`,
    `torch.from_numpy`, what a Hugging Face tokenizer or processor returns when asked for torch
    tensors (`tokenizer(text, return_tensors="pt")`, `tokenizer.encode(..., return_tensors=
    "pt")`: made on the CPU; spread into a moved model, `model.generate(**inputs)`, or read by
    key, `inputs["input_ids"]`; issue 28), the call of a top-level function of the file whose every `return`
    gives such a tensor (`def text_to_token_ids(t): return torch.tensor(...).unsqueeze(0)`),
    a module constant bound once, at module level, to such a tensor and read by a function
    (`MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)`, then `images - MEAN` in a
    helper every caller gives images on the device; issue 28: a function runs after the
    module's code; not a name a function declares `global`, and a 0-dim one combines with any
    device), the state an object that is no `nn.Module` keeps where every method of its class
    that stores it makes such a tensor (`self.total = torch.zeros(dim)` in `__init__`, then
    `self.total + batch.sum(0)` in the `add(batch)` every caller gives device outputs; an
    update of the attribute itself, `self.total = self.total + x`, keeps it; issue 28: a
    metric or meter built on the CPU), or what is computed from those; the accelerator side
    is a move
    (`.to(device)`, `.cuda()`, `.type(torch.cuda.FloatTensor)` of code written before torch
    0.4), a factory given a device, a moved model or its output, or what is
    computed from those. Both are judged where the operation is, following names in the order the
    code runs within the function (`x = x.to(device)` first takes `x` off the CPU). The finding is
    on the operation, and the message names both operands and the call that decided each one's
    placement.

    A `for` loop over a tensor on an accelerator takes its rows there (through `enumerate` and
    `zip`: `for i, row in enumerate(sims.t())`), and `row.topk(k)` (`sort`, `max`, ...) gives
    both its values and its indices there; a list the function fills with `.append(f.cpu())`
    alone is joined on the CPU (`feats = torch.cat(feats)`). BLIP's retrieval evaluation
    indexes such a host feature bank with a row's top-k indices: "indices should be either on
    cpu or on the same device as the indexed tensor".

    What a plain function of the file computes from one of its arguments, by tensor methods,
    slices and arithmetic with numbers (`len(labels)` among them), is where that argument is at
    the call (`acc = accuracy(out, labels)` of `return correct / len(labels)`, `correct` from
    `preds.eq(labels)` and `preds` from `.type_as(labels)`; a name rebound from itself,
    `correct = correct.sum()`, keeps its first value's: `Placement.returned_argument`). SSGC's
    `best_acc_val = torch.zeros((1))` compared with it fails: a CPU tensor with a dimension and
    a device tensor do not meet, whether the device one is 0-dim or not.

    A parameter has a placement where every call of the file gives it one: a plain function's
    calls, and a method's calls through instances of its class (`tracker.match(features,
    labels)` of `tracker = Tracker()`, `self._norms(features, labels)` in another of its
    methods), a class that is no `nn.Module` (issue 28: qdtrack's tracker given its labels on
    the CPU by the detector and its features by the model on the GPU). An instance handed to a
    function is one too where every call of the function passes an instance of the class
    (`train(agent, steps)` of `agent = Agent(4, 2)`, then `agent.act(torch.from_numpy(obs))`:
    DeepRL's DQN, whose network the program moved with `agent.q.to(device)`). A method is not
    followed when a call of its name is made on an object of unknown kind (it may be this
    method, given other values), when it is decorated, or when a class of the file derives
    from its class (an override may run instead). The message then names the value the first
    call passes (`made by torch.tensor([0, 1, 0])`) and says that every call passes one on an
    accelerator.

    Silent when:
    - either placement is unknown (a parameter its calls do not place, an attribute, a value
      from another function), or
      the evidence for an operand points both ways;
    - the CPU tensor may be 0-dim (`torch.tensor(2.0)`, `torch.zeros(())`, a reduction such as
      `x.sum()` or `x.max()`, one element `x[0]`, anywhere in what it is computed from): a 0-dim
      CPU tensor combines with a tensor on any device. Data of a shape the code does not show
      (`torch.from_numpy(obs)`, `torch.tensor(batch)`) may be one number too, except where it
      is given to a model: a model's input is a batch (an RL agent's
      `policy(torch.from_numpy(obs).float())`, issue 28). An empty tensor (`torch.tensor([])`)
      has a dimension, of size 0, and so has a tensor of a list (`torch.tensor(labels)` of
      `labels = [...]`, a comprehension included), and what `torch.cat`/`torch.stack` give: an
      evaluation loop's `preds = torch.cat((preds, out))` into `preds = torch.tensor([])` is
      reported. So has what keeps or makes a dimension whatever it is computed from: a slice
      (`x[:, -1]`), a mask (`x[x > 0]`), indices that have one (`labels[inds]` of `_, inds =
      scores[:, -1].sort()`, qdtrack's tracker), `x.view(-1, 1)`, `x.flatten()`. Only what
      is assigned before the operation (or later in a loop around it) is read, and a value on
      the accelerator is not the CPU side, 0-dim or not: the seq2seq tutorial's `out, hidden =
      encoder(x[i], hidden)` from `hidden = encoder.initHidden()`;
    - the CPU tensor is only an index in plain indexing (`gpu[cpu_index]` works), or the index
      on the accelerator may be 0-dim (any reduction or element access in what it is computed
      from);
    - the operation is inside a `for` loop over a data loader and its CPU operand reads a batch
      as the loop took it (a name its target binds, or one unpacked or indexed out of one):
      TDL004 reports the batches there. An operation of tensors the loop body made itself (a
      factory, a model's output) is checked as anywhere else (issue 28), and so is a CPU
      operand the body made, beside a batch: `model(tokens, state)` of `state =
      model.init_state(n)` mixes the state, whatever `tokens` is;
    - the operation is in a method of an `nn.Module` class (module state and tensors created in
      `forward` are TDL005's and TDL007's);
    - a comment on the line says it fails (`# this will error`, `# raises`, `# error!`: a
      deliberate error demo, issue 28);
    - it is under `pytest.raises` / `assertRaises`, or in a `try` body (the failure may be the
      point);
    - it is in a plain function of the file that is only called from such places, or from the
      methods of `nn.Module` classes (and no other file is expected to call it:
      `Analysis.holds_where_called`, issue 28).
    - the model is called, or the accelerator tensor made by it, before the code moves the model
      (in the order the code runs: a notebook that moves its model in a later cell);
    - the CPU tensor was "moved" by a discarded statement (`x.to(device)` alone): TDL001 reports
      that, and this operation is its consequence.
    - a factory without `device=` runs under a default device other than the CPU: the file calls
      `torch.set_default_device(<device>)` (the default is global, so anywhere in the file), or
      the factory is in the body of `with torch.device(<device>):`. It creates on that device, so
      it is no CPU evidence, and no fix adds a move that would do nothing (issue 28). Under
      `with torch.device("cpu"):` factories are on the CPU as before.

    ## Why is this bad
    Operations need all their tensors on one device. On a GPU:

    ```
    RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
    ```

    (or, for a model call, `... but got mat1 is on cpu, different from other tensors on cuda:0
    (when checking argument for argument mat1 in method wrapper_CUDA_addmm)`). On the `meta`
    device, which plays the GPU in this project's runtime tests:

    ```
    RuntimeError: Tensor on device cpu is not on the expected device meta!
    ```

    (or, depending on the operation, the other way round:)

    ```
    RuntimeError: Tensor on device meta is not on the expected device cpu!
    ```

    An RNN given an initial state on the CPU checks its input and state first, on a GPU and
    on `meta` alike:

    ```
    RuntimeError: Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor at cpu
    ```

    Gradients given to autograd must be on their outputs' device; on a GPU and on `meta`
    alike:

    ```
    RuntimeError: invalid gradient at index 0 - expected device cuda:0 but got cpu
    ```

    The code usually ran fine on a CPU-only machine, where both operands are on the CPU, and breaks
    the first time it runs on a GPU: an inference helper that builds its input with
    `torch.randn(...)`, a test that adds a constant tensor to the output of a moved model.

    ## Example
    ```python
    def predict(device):
        model = nn.Linear(128, 64).to(device)
        x = torch.randn(32, 128)
        return model(x)
    ```

    ## Use instead
    ```python
    def predict(device):
        model = nn.Linear(128, 64).to(device)
        x = torch.randn(32, 128)
        return model(x.to(device))
    ```

    or create it there: `x = torch.randn(32, 128, device=device)`.

    ## Fix safety
    `--fix` moves the CPU operand to the other's device where it is used: `x` becomes
    `x.to(device)` (a compound expression is parenthesized first), with the device expression of
    the evidence (the argument of the move, the factory's `device=`, the device the model was
    moved to), or `a.device` for a tensor `a` moved by `.cuda()`. An operand that is itself a
    torch factory call is created on that device instead: `model(torch.randn(2, 3))` becomes
    `model(torch.randn(2, 3, device=device))`, not `torch.randn(2, 3).to(device)`, which
    [TDL009](TDL009.md) would report.

    - Safe where the device expression is a plain name written in the same function (or module),
      or a string literal: the operand then lands exactly where the other one is. A factory
      operand whose values depend on the device that computes them (random factories,
      `linspace`: see TDL009's fix safety) makes the fix unsafe.
    - Unsafe where it is another expression (`self.device`, `args.device`, `a.device`) or a name
      written elsewhere whose names are still in scope: it may have changed since, or mean
      something else here.
    - A loss module's CPU weights: `.to(device)` appended where it is built
      (`nn.CrossEntropyLoss(weight=w).to(device)`), unsafe (the device's name must be bound
      there before it runs); none where the device is not a plain name in scope there.
    - The tensors a method returns (`init_hidden`): `device=next(self.parameters()).device`
      added to each factory of its tuple, unsafe (a module without parameters makes `next()`
      raise). Those a plain function returns: `tuple(t.to(device) for t in hidden)` where the
      model is called, unsafe (a copy on every call, where creating them there would make none).
    - No fix where the device expression names something out of scope, or there is none (a model
      moved by `.cuda()`).

    ## Known limits
    - Only what the file shows: tensors handed in from elsewhere, attributes and return values of
      other functions have no known placement (a top-level function of the file that always
      returns a CPU tensor, and a method of a class of the file called on an instance,
      `model.init_hidden(n)`, are the exceptions). A loss module is followed by its name
      only (not `self.criterion`), and its weights only when every assignment of the name
      builds a torch.nn loss class. A function that feeds its model parameter a
      tensor parameter is judged at its calls, not in its body, where both are parameters.
    - Placement is followed through a function in source order, visiting each branch once: a move
      in one branch of an `if` counts after it, except in the other branch of a later `if` on
      the same setting (a name or attribute chain such as `args.use_cuda`, not assigned in
      between: dino's `if args.use_cuda: features = features.cuda()`, then `if
      args.use_cuda: ... else: features.index_copy_(0, index.cpu(), ...)`, issue 28).
    - The 0-dim test is conservative (any reduction or element access in the CPU operand's history
      silences it), so some real mix-ups with reduced tensors go unreported.
    - Comparisons and functions outside the lists above are not checked.
    """

    # The kinds of finding (their messages, as data; the report fills the fields): the CPU
    # operand made by a torch factory (create it there), or otherwise (move it).
    _MIXES = ("{what} mixes `{operand}`, a tensor on the CPU (made by `{origin}`), with {other}: "
              "on a GPU this raises " + MIXED_ERROR + "; ")
    MIXED_FACTORY = Message(_MIXES + "create it there: `{callee}(..., device={device})`")
    MIXED_OPERAND = Message(_MIXES + "move it first: `{moved}`")
    # the state of a recurrent layer the model's ``forward`` hands it to (``encoder(word,
    # hidden)`` of ``hidden = encoder.initHidden()``, the seq2seq tutorial): the layer's error
    MIXED_STATE = Message(
        "{what} mixes `{operand}`, a tensor on the CPU (made by `{origin}`), with {other}, whose "
        "`forward` hands it to a recurrent layer as its state: on a GPU this raises "
        + RNN_STATE_ERROR + "; move it first: `{moved}`")
    # ... made by a factory there (``h0 = torch.zeros(layers, n, h)`` of ``rnn(x, (h0, c0))``,
    # the model a torch.nn LSTM itself): created there
    MIXED_STATE_FACTORY = Message(
        "{what} mixes `{operand}`, a tensor on the CPU (made by `{origin}`), with {other}, which "
        "takes it as a recurrent layer's state: on a GPU this raises " + RNN_STATE_ERROR +
        "; create it there: `{callee}(..., device={device})`")
    # a tuple of CPU tensors a method of the file returns (``hidden = model.init_hidden(n)``
    # handed to the moved model with its input, issue 28): made there, created there
    MIXED_TUPLE = Message(
        "{what} mixes `{operand}`, tensors on the CPU (made by `{origin}` in `{method}`, which "
        "returns them), with {other}: on a GPU this raises " + MIXED_ERROR + "; create them "
        "on the model's device there (`device={device}`)")
    # ... made by a plain function of the file, which has no model to ask for its device
    MIXED_TUPLE_MADE = Message(
        "{what} mixes `{operand}`, tensors on the CPU (made by `{origin}` in `{function}`, "
        "which returns them), with {other}: on a GPU this raises " + MIXED_ERROR + "; move "
        "each of them to the model's device (`{moved}`), or create them there")
    # a loss module built with CPU class weights, called on accelerator tensors (issue 28)
    MIXED_HELD = Message(
        "the call of `{criterion}` mixes `{operand}`, a tensor on the CPU that `{criterion}` "
        "was built with (made by `{origin}`), with `{other}`, on an accelerator ({evidence}): "
        "on a GPU this raises " + MIXED_ERROR + "; move the loss module there: "
        "`{criterion}.to({device})`")
    # a CPU tensor indexed with one on an accelerator (``torch.eye(n)[labels]``, issue 28)
    _INDEXED = ("{what} `{operand}`, a tensor on the CPU (made by `{origin}`), with {other}: on a "
                "GPU this raises " + INDEX_ERROR + "; ")
    INDEXED_FACTORY = Message(_INDEXED + "create it there: `{callee}(..., device={device})`")
    INDEXED_OPERAND = Message(_INDEXED + "move it first: `{moved}`")
    # an index and the tensor it indexes in an operation that checks both devices
    # (``q(obs).gather(1, actions)`` given CPU actions; ``torch.zeros(n, k).scatter_(1, labels,
    # 1)`` given the device's labels): torch's own error, which names the argument
    _INDEX_ARGUMENT = ("{what} mixes `{operand}`, a tensor on the CPU (made by `{origin}`), with "
                       "{other}: on a GPU this raises {error}; ")
    INDEX_ARGUMENT_FACTORY = Message(_INDEX_ARGUMENT + "create it there: `{callee}(..., device={device})`")
    INDEX_ARGUMENT_OPERAND = Message(_INDEX_ARGUMENT + "move it first: `{moved}`")
    # gradients handed to autograd (``autograd.grad(..., grad_outputs=...)``, ``out.backward(g)``)
    _GRADIENT_MIXES = ("{what} mixes `{operand}`, a tensor on the CPU (made by `{origin}`), with "
                       "{other}: on a GPU this raises " + GRADIENT_ERROR + "; ")
    GRADIENT_FACTORY = Message(_GRADIENT_MIXES + "create it there: `{callee}(..., device={device})`")
    GRADIENT_OPERAND = Message(_GRADIENT_MIXES + "move it first: `{moved}`")

    code = "TDL011"
    name = "mixed-device-operands"
    summary = "A CPU tensor meets a tensor or a model on an accelerator in one operation"
    fixable = True
    facts = frozenset(("kinds", "placement", "devices", "modules"))
    # Evidence of an accelerator needs a move (``.to(`` / ``.cuda(``) or a ``device=``.
    # And evidence of the CPU: a torch factory, ``.cpu()``, or the word "cpu" (``.to("cpu")``;
    # ``Devices.is_cpu_device`` knows it in lower case only, and a search without ``(?i)``
    # takes half the time).
    required_text = (rf"{method_call_text('to', 'cuda')}|\bdevice\b|{CUDA_TENSOR_TYPE_TEXT}",
                     r"cpu|_like\b|\b(?:" + "|".join(sorted(api.FACTORIES)) + r")\b|"
                     + api.RETURN_TENSORS_KEYWORD)
    valid = (
        # moved first
        "import torch\n\n\ndef f(device):\n    a = torch.randn(3, device=device)\n"
        "    b = torch.randn(3)\n    b = b.to(device)\n    return a + b\n",
        # a 0-dim CPU tensor (a reduction) combines with any device
        "import torch\n\n\ndef f(device):\n    a = torch.randn(3, device=device)\n"
        "    return a * torch.randn(3).sum()\n",
        # the other operand's placement is unknown
        "import torch\n\n\ndef f(x, device):\n    y = torch.randn(3).to(device)\n"
        "    return x + y, x * torch.randn(3)\n",
        # a discarded move: TDL001 reports it, this call is its consequence
        "import torch\n\n\ndef f(device):\n    model = torch.nn.Linear(3, 3).to(device)\n"
        "    x = torch.randn(2, 3)\n    x.to(device)\n    return model(x)\n",
        # used as an index
        "import torch\n\n\ndef f(device):\n    a = torch.randn(3, device=device)\n"
        "    return a[torch.tensor([0, 2])]\n",
    )
    invalid = (
        ("import torch\n\n\ndef f(device):\n    a = torch.randn(3, device=device)\n"
         "    b = torch.randn(3)\n    return a + b\n", ((7, 12),)),
        ("import torch\nimport torch.nn as nn\n\n\ndef f(device):\n"
         "    model = nn.Linear(4, 2).to(device)\n    x = torch.randn(8, 4)\n"
         "    return model(x)\n", ((8, 12),)),
        # a CPU tensor indexed with labels on the device: made there, or moved first
        ("import torch\n\n\ndef f(device):\n    y = torch.randint(0, 3, (8,)).to(device)\n"
         "    return torch.eye(3)[y]\n", ((6, 12),)),
        ("import torch\n\n\ndef f(device):\n    y = torch.randint(0, 3, (8,)).to(device)\n"
         "    table = torch.eye(3) * 0.9\n    return table[y]\n", ((7, 12),)),
        # an index and its tensor on two devices, where the operation checks both: the
        # replay buffer's CPU actions into the device's Q-values; the device's labels
        # scattered into a CPU table (made there)
        ("import torch\n\n\ndef f(device):\n    q = torch.randn(5, 3).to(device)\n"
         "    actions = torch.tensor([0, 1, 2, 1, 0])\n"
         "    return q.gather(1, actions.unsqueeze(1))\n", ((7, 12),)),
        ("import torch\n\n\ndef f(device):\n    y = torch.tensor([0, 2, 1]).to(device)\n"
         "    return torch.zeros(3, 3).scatter_(1, y.unsqueeze(1), 1.0)\n", ((6, 12),)),
    )

    could_report_in = staticmethod(mixed_devices_in)  # (in prefilter: no LibCST there)

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        self.analysis = analysis
        # the name bindings whose dimension ``_has_dimension`` is deciding (one that reads
        # itself keeps what the others give)
        self._dimension_pending: set = set()
        collected = analysis.collected
        both_sides = _with_accelerator_origins(analysis, _making_cpu_tensors(analysis))
        for info in collected.functions:
            if info.scope is None or id(info.scope) not in both_sides:
                continue
            if info.cls is not None and analysis.kinds.class_is_module(info.cls) is not False:
                continue  # module state and forward-created tensors: TDL005 / TDL007
            if info.cls is None and analysis.holds_where_called(
                    Ctx(info.scope, None, info, None), self._left_alone, "TDL011 silent"):
                continue  # a helper only called where this rule is silent (issue 28)
            body = info.node.body
            statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
            yield from self._check_block(statements, info.scope, info.node)
        module = collected.module_scope
        if module is not None and id(module) in both_sides:
            yield from self._check_block(list(module.node.body), module, module.node)

    def _left_alone(self, ctx: Ctx) -> bool:
        """Code this rule leaves alone: where a failure is expected or caught on purpose, and
        in the methods of module classes (TDL005 / TDL007)."""
        return failure_expected_or_handled(ctx) or (
            ctx.cls is not None and self.analysis.kinds.class_is_module(ctx.cls) is not False)

    # -- finding the operations -------------------------------------------------------

    def _check_block(self, statements, scope: Scope, owner) -> Iterator[Violation]:
        # (those in a loop over a data loader that read its batches are TDL004's: the engine
        # drops them, ``engine.DEFERENCES``)
        for node in self._operations(statements):
            yield from self._check_operation(node, scope, owner)

    def _operations(self, statements) -> List[cst.CSTNode]:
        """The operations of a block."""
        found: List[cst.CSTNode] = []
        stack = list(reversed(statements))
        while stack:
            node = stack.pop()
            kind = type(node)  # exact types: isinstance of libcst's ABCs is slow here
            if kind in _NOT_ENTERED:
                if kind in (cst.ListComp, cst.GeneratorExp) and _zip_join(node) is not None:
                    found.append(node)  # ``[torch.cat(x) for x in zip(*stats)]``
                continue  # runs later, or binds its own names: no evidence there
            if kind is cst.With and any(with_item_expects_failure(item.item) for item in node.items):
                continue  # the failure is expected
            if kind is cst.SimpleStatementLine and says_it_fails(node):
                continue  # "a + b  # this will error": a deliberate error demo
            if kind is cst.Try:
                children = list(node.handlers) + [s for s in (node.orelse, node.finalbody) if s]
                stack.extend(reversed(children))
                continue  # the failure may be caught on purpose
            if (kind is cst.BinaryOperation and type(node.operator) in _ARITHMETIC) \
                    or kind is cst.Call or is_elementwise_comparison(node) \
                    or (kind is cst.AugAssign and type(node.operator) in _AUGMENTED_TEXT) \
                    or (kind is cst.Subscript
                        and any(type(e.slice) is cst.Index for e in node.slice)):
                found.append(node)
            stack.extend(reversed(list(iter_children(node))))
        return found

    # -- one operation ----------------------------------------------------------------

    def _check_operation(self, node, scope: Scope, owner) -> Iterator[Violation]:
        analysis = self.analysis
        if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
            yield from self._check_zip_join(node, scope, owner)
            return
        if isinstance(node, cst.Subscript):
            yield from self._check_index(node, scope, owner)
            return
        if isinstance(node, cst.BinaryOperation):
            operands = [node.left, node.right]
            what = "arithmetic"
        elif isinstance(node, cst.Comparison):
            # ``torch.arange(n)[None, :] < lengths[:, None]``: a sequence mask made on the CPU
            # for lengths on the device (issue 28)
            operands = [node.left] + [c.comparator for c in node.comparisons]
            what = "a comparison"
        elif isinstance(node, cst.AugAssign):
            # ``loss += F.smooth_l1_loss(...)`` into ``loss = torch.zeros(1)`` (issue 28:
            # PatchmatchNet's loss, qdtrack's ``scores *= mask``)
            operands = [node.target, node.value]
            what = f"`{source_of(node.target)} {_AUGMENTED_TEXT[type(node.operator)]} ...`"
        else:
            func = node.func
            model = self._moved_model_at(node, func, scope)
            if model is not None and not analysis.placement.scatters(func, scope) \
                    and analysis.kind_of(func, scope) is not K.TENSOR:
                yield from self._check_model_call(node, model, scope, owner)
                return
            held = analysis.placement.tensors_held(func, scope) if isinstance(func, cst.Name) \
                else None
            if held:
                yield from self._check_criterion_call(node, held, scope, owner)
                return
            joined = self._joined_list(node, scope)
            if joined is not None:
                order = self._site_order(node)
                sites = None if order is None else analysis.appended_to(joined.value, scope, order)
                if sites:
                    yield from self._check_pieces(
                        node, joined.value, [[(s.call.args[0].value, s) for s in sites]],
                        scope, owner)
                    return
            helper = analysis.helper_called(node, scope)
            if helper is not None:
                yield from self._check_helper_call(node, helper, scope, owner)
                return
            indexed = self._index_argument(node, scope)
            if indexed is not None:
                yield from self._check_index_argument(node, *indexed, scope, owner)
                return
            operands = self._call_operands(node, scope)
            if not operands:
                return
            what = None  # the callee's text: generated only for a violation
        cpu = acc = None
        site = self._site(node) if isinstance(node, cst.Call) else None
        for operand in operands:
            if cpu is None:
                evidence = self._cpu(operand, scope, at=site)
                if evidence is not None:
                    cpu = (operand, evidence)
                    continue
            if acc is None:
                evidence = self._accelerator(operand, scope)
                if evidence is not None:
                    acc = (operand, evidence)
        if cpu is None or acc is None:
            return
        cpu_operand, cpu_evidence = cpu
        acc_operand, acc_evidence = acc
        if what is None:
            what = f"`{source_of(node.func)}()`"
        device = _partner_device(acc_operand, acc_evidence)
        violation = self._violation(node, what, cpu_operand, cpu_evidence,
                                    f"`{source_of(acc_operand)}`, on an accelerator "
                                    f"({acc_evidence.describe()})", device, scope, owner)
        if isinstance(node, cst.AugAssign) and isinstance(violation.fix, MoveOperand) and \
                violation.fix.operand is node.target:
            violation = Violation(violation.node, violation.message)  # (no ``x.to(d) += y``)
        yield violation

    def _check_index(self, node: cst.Subscript, scope: Scope, owner) -> Iterator[Violation]:
        """``torch.eye(n)[labels]``: a CPU tensor indexed with a tensor on an accelerator
        (issue 28: the one-hot idiom given the device's labels). A 0-dim integer index is read
        as a number and works, so the index must not be one (``_may_be_scalar``); the other
        way round, ``gpu[cpu_index]``, works too."""
        indexes = [e.slice.value for e in node.slice if isinstance(e.slice, cst.Index)]
        cpu = self._cpu(node.value, scope)
        if cpu is None:
            return
        for index in indexes:
            acc = self._accelerator(index, scope)
            if acc is None or self._may_be_scalar(index, scope, 0, device_side=True):
                continue
            # (at the indexed tensor, which starts where the subscript does: in a loop over a
            # data loader, the batch is the index, moved; TDL004 leaves this CPU tensor alone)
            yield self._violation(node.value, "indexing", node.value, cpu,
                                  f"`{source_of(index)}`, on an accelerator ({acc.describe()})",
                                  _partner_device(index, acc), scope, owner, indexed=True)
            return

    def _index_argument(self, call: cst.Call, scope: Scope):
        """``q(obs).gather(1, actions)``, ``torch.index_select(x, 0, idx)``: the tensor and the
        index (or mask) that the operation checks against each other's device, and the word
        torch's error names the index by (``checked_index_operands``); or None."""
        func = call.func
        qualified = self.analysis.qualname(func, scope)
        if qualified is not None:
            head, _, name = qualified.rpartition(".")
            return checked_index_operands(call, name, True) if head == "torch" else None
        if isinstance(func, cst.Attribute):
            return checked_index_operands(call, func.attr.value, False)
        return None

    def _check_index_argument(self, call: cst.Call, tensor, index, word, scope: Scope,
                              owner) -> Iterator[Violation]:
        """Either one on the CPU and the other on an accelerator: a CPU index into a tensor on
        the device (which ``tensor[index]`` takes) or the device's index into a CPU tensor (a
        0-dim index on the device is left alone, as ``_check_index`` does)."""
        site = self._site(call)
        cpu = self._cpu(tensor, scope, at=site)
        if cpu is not None:
            acc = self._accelerator(index, scope)
            if acc is None or self._may_be_scalar(index, scope, 0, device_side=True):
                return
            cpu_operand, acc_operand, devices = tensor, index, ("cuda:0", "cpu")
        else:
            cpu, acc = self._cpu(index, scope, at=site), self._accelerator(tensor, scope)
            if cpu is None or acc is None:
                return
            cpu_operand, acc_operand, devices = index, tensor, ("cpu", "cuda:0")
        error = MIXED_ERROR if word is None else INDEX_ARGUMENT_ERROR.format(
            word=word, index_device=devices[0], other=devices[1])
        violation = self._violation(
            call, f"`{source_of(call.func)}()`", cpu_operand, cpu,
            f"`{source_of(acc_operand)}`, on an accelerator ({acc.describe()})",
            _partner_device(acc_operand, acc), scope, owner, error=error)
        plan = violation.fix
        if cpu_operand is tensor and isinstance(plan, MoveOperand) and plan.factory is None \
                and plan.operand is tensor and isinstance(call.func, cst.Attribute) \
                and api.updates_in_place(call.func.attr.value):
            # (``out.to(d).scatter_(...)`` would scatter into a copy and leave ``out`` as it was)
            violation = Violation(violation.node, violation.message)
        yield violation

    def _site_order(self, call: cst.Call) -> Optional[int]:
        site = self._site(call)
        return None if site is None else site.order

    def _site(self, call: cst.Call):
        return self.analysis.site_of(call)

    def _moved_model_at(self, call: cst.Call, callee, scope: Scope):
        """The model called, if it was moved to a device before this call (in the order the
        code runs: a notebook that moves its model in a later cell calls it on the CPU)."""
        order = self._site_order(call)
        return None if order is None else \
            self.analysis.placement.moved_model(callee, scope, before=order)

    def _check_model_call(self, call: cst.Call, model, scope: Scope, owner) -> Iterator[Violation]:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        for arg in call.args:
            if arg.star == "*" or (arg.star == "**" and not self._preprocessed(arg.value, scope)):
                continue
            operand = arg.value
            evidence = self._cpu(operand, scope, model_input=True, at=self._site(call))
            if evidence is None and isinstance(operand, cst.Tuple) and not arg.star:
                # an LSTM's state, ``rnn(x, (h0, c0))``: the first item made on the CPU
                operand, evidence = next(
                    ((e.value, found) for e in operand.elements
                     if not isinstance(e, cst.StarredElement)
                     for found in [self._cpu(e.value, scope, model_input=True,
                                             at=self._site(call))] if found is not None),
                    (operand, None))
            if evidence is None:
                continue
            keyword = arg.keyword.value if arg.keyword is not None else None
            if arg.star:  # ``**inputs``: every keyword it spreads
                index, keyword = -1, "**"
            else:
                index = next(i for i, a in enumerate(positional) if a is arg) if keyword is None else -1
            if self.analysis.model_wants_on_cpu(call, index, keyword, scope):
                continue  # ``model(x, lengths)``: packing wants the lengths on the CPU
            target, device = model
            where = device
            safety = _ASK
            as_state = self.analysis.model_takes_as_rnn_state(call, index, keyword, scope)
            if device is None or self._fix_safety(device, scope, owner) is None:
                # the device it was moved to is not a name of this code (``self.policy =
                # ... .to(device)`` in ``__init__``): the model's own, read where it is called
                where = cst.parse_expression(f"next({_code(target)}.parameters()).device")
                safety = False
            yield self._violation(
                call, f"the call of `{source_of(call.func)}`", operand, evidence,
                f"the model `{source_of(target)}`, moved to "
                f"{'`' + source_of(device) + '`' if device is not None else 'a device'}"
                f"{self._moved_by_callers(target, scope)}",
                where, scope, owner, safety, as_state)
            return

    def _moved_by_callers(self, target, scope: Scope) -> str:
        """`` (every call of `train` in this file passes it moved: `train(model, loader, device)`)``
        where the model is a parameter its function's calls place (the evidence), else ""."""
        if not isinstance(target, cst.Name):
            return ""
        # (a parameter the function never rebinds: ``model = model.to(device)`` moves it here)
        params = scope.bindings.get(target.value, ())
        passed = self.analysis.kinds.caller_arguments(params[0]) \
            if len(params) == 1 and params[0].how == PARAM else None
        if not passed:
            return ""
        call = passed[0][1].call
        return f" (every call of `{source_of(call.func)}` in this file passes it moved: " \
            f"`{source_of(call, 60)}`)"

    def _preprocessed(self, expr, scope: Scope) -> bool:
        """``inputs`` bound once, in this function, to ``tokenizer(text, return_tensors="pt")``:
        spread into a model (``model.generate(**inputs)``) it gives its tensors as they are;
        or that call itself."""
        if isinstance(expr, cst.Call):
            return returns_torch_tensors(expr)
        if not isinstance(expr, cst.Name):
            return False
        bindings = scope.lookup(expr.value)
        return len(bindings) == 1 and bindings[0].how == ASSIGN and not bindings[0].path and \
            isinstance(bindings[0].value, cst.Call) and returns_torch_tensors(bindings[0].value)

    def _check_criterion_call(self, call: cst.Call, held, scope: Scope, owner
                              ) -> Iterator[Violation]:
        """``criterion(out, y)`` where ``criterion = nn.CrossEntropyLoss(weight=w)`` holds
        ``w`` on the CPU and ``out`` is on an accelerator (issue 28)."""
        cpu = next(((tensor, evidence) for tensor, tensor_scope in held
                    for evidence in [self._cpu(tensor, tensor_scope)] if evidence is not None),
                   None)
        if cpu is None:
            return
        met = [(arg.value, evidence) for arg in call.args
               if not arg.star and arg.keyword is None
               for evidence in [self._accelerator(arg.value, scope)] if evidence is not None]
        if not met:
            return
        tensor, cpu_evidence = cpu
        other, evidence = met[0]
        # the device to move it to: the first that a plain name gives (``y.to(device)``)
        device = next((e.device for _, e in met if isinstance(e.device, cst.Name)),
                      evidence.device)
        plan = None
        built = self.analysis.placement.bindings_of(call.func, scope)
        if isinstance(device, cst.Name) and len(built) == 1 and \
                built[0][1].resolve(device.value) is not None:
            plan = MoveModule(built[0][0], device.value)  # (unsafe: bound before it?)
        yield Violation(call, self.MIXED_HELD(
            criterion=source_of(call.func), operand=source_of(tensor),
            origin=source_of(cpu_evidence.origin), other=source_of(other),
            evidence=evidence.describe(),
            device=source_of(device, 60) if device is not None else "device"), plan)

    def _joined_list(self, call: cst.Call, scope: Scope) -> Optional[cst.Name]:
        """``torch.cat(pieces)`` / ``torch.stack(pieces, 1)``: the name of the list joined."""
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if not api.is_sequence_join(self.analysis.qualname(call.func, scope) or "") or \
                not positional or not isinstance(positional[0], cst.Name):
            return None
        return positional[0]

    def _check_zip_join(self, comprehension, scope: Scope, owner) -> Iterator[Violation]:
        """``[torch.cat(x, 0) for x in zip(*stats)]`` where ``stats`` collects tuples
        (``stats.append((correct, conf, cls))``): each position's pieces are joined."""
        join, listed = _zip_join(comprehension)
        if self._joined_list(join, scope) is None:
            return
        order = self._site_order(join)
        sites = None if order is None else self.analysis.appended_to(listed, scope, order)
        if not sites:
            return
        positions: List[list] = []
        for site in sites:
            for index, piece in enumerate(self._tuple_pieces(site.call.args[0].value, scope)):
                if index == len(positions):
                    positions.append([])
                positions[index].append((piece, site))
        yield from self._check_pieces(join, listed, positions, scope, owner)

    def _tuple_pieces(self, value, scope: Scope) -> list:
        """The tensors a tuple appended to a list puts at each position: its elements, a
        starred CPU factory of a literal first size (``*torch.zeros((3, 0))``) as that many
        pieces of it; the positions after a starred element of unknown length are unknown."""
        if not isinstance(value, (cst.Tuple, cst.List)):
            return []
        pieces = []
        for element in value.elements:
            if not isinstance(element, cst.StarredElement):
                pieces.append(element.value)
                continue
            count = _first_size(element.value)
            if count is None or self.analysis.on_cpu(element.value, scope) is None:
                break
            pieces += [element.value] * count
        return pieces

    def _check_pieces(self, join: cst.Call, listed: str, positions: List[list], scope: Scope,
                      owner) -> Iterator[Violation]:
        """Pieces appended to ``listed`` (by position) that ``join`` joins: a CPU piece and
        an accelerator piece at one position, appended where both may run (not the two
        branches of one ``if``), meet there. Reported at the CPU piece, where it is made."""
        reported = set()
        for pieces in positions:
            cpu = [(piece, site, evidence) for piece, site in pieces
                   for evidence in [self._cpu(piece, site.ctx.scope)] if evidence is not None]
            acc = [(piece, site, evidence) for piece, site in pieces
                   for evidence in [self._accelerator(piece, site.ctx.scope)]
                   if evidence is not None]
            for cpu_piece, cpu_site, cpu_evidence in cpu:
                if id(cpu_piece) in reported:
                    continue
                other = next(((piece, evidence) for piece, site, evidence in acc
                              if not exclusive_branches(site.ctx, cpu_site.ctx)), None)
                if other is None:
                    continue
                acc_piece, acc_evidence = other
                reported.add(id(cpu_piece))
                device = acc_evidence.device
                yield self._violation(
                    cpu_piece, f"`{source_of(join)}` of what `{listed}` collects", cpu_piece,
                    cpu_evidence, f"`{source_of(acc_piece)}`, appended to `{listed}` too, on an "
                    f"accelerator ({acc_evidence.describe()})", device, scope, owner)

    def _check_helper_call(self, call: cst.Call, helper, scope: Scope, owner) -> Iterator[Violation]:
        """``generate(model=gpt, idx=token_ids)``: a function of this file that feeds one of
        its parameters to the call of another (``Analysis.fed_to_model``), given a model
        moved to a device for the one and a CPU tensor for the other: they meet in there."""
        for tensor_name, model_name in self.analysis.fed_to_model(helper):
            model_arg = argument_for_parameter(call, helper, model_name)
            tensor_arg = argument_for_parameter(call, helper, tensor_name)
            if model_arg is None or tensor_arg is None or \
                    not isinstance(model_arg, (cst.Name, cst.Attribute)):
                continue
            model = self._moved_model_at(call, model_arg, scope)
            if model is None or self.analysis.placement.scatters(model_arg, scope):
                continue
            evidence = self._cpu(tensor_arg, scope)
            if evidence is None:
                continue
            target, device = model
            moved_to = "`" + source_of(device) + "`" if device is not None else "a device"
            yield self._violation(
                call, f"the call of `{source_of(call.func)}`", tensor_arg, evidence,
                f"the model `{source_of(target)}`, moved to {moved_to}, which "
                f"`{helper.name}` calls with it (`{model_name}({tensor_name})`)",
                device, scope, owner)
            return
        # ``add_noise(signal, noise)`` whose body computes ``signal + noise``: the two
        # arguments meet in there (``CalleeSummary.meets``)
        for first, second, operation in self.analysis.callee_summary(helper).meets:
            arguments = [argument_for_parameter(call, helper, name) for name in (first, second)]
            if None in arguments:
                continue
            indexed = isinstance(operation, cst.Subscript)
            # (an index: only the indexed tensor on the CPU and the index on a device fails,
            # and not with a 0-dim index, which torch reads as a number)
            for cpu_arg, acc_arg in (arguments,) if indexed else (arguments, arguments[::-1]):
                evidence = self._cpu(cpu_arg, scope)
                acc_evidence = self._accelerator(acc_arg, scope) if evidence is not None else None
                if acc_evidence is None or (indexed and self._may_be_scalar(
                        acc_arg, scope, 0, device_side=True)):
                    continue
                yield self._violation(
                    call, f"the call of `{source_of(call.func)}`", cpu_arg, evidence,
                    f"`{source_of(acc_arg)}`, on an accelerator ({acc_evidence.describe()}), "
                    f"which {'indexes it' if indexed else 'it meets'} in "
                    f"`{source_of(operation, 50)}` in `{helper.name}`",
                    _partner_device(acc_arg, acc_evidence), scope, owner,
                    error=INDEX_ERROR if indexed else None)
                return

    def _call_operands(self, call: cst.Call, scope: Scope) -> List[cst.BaseExpression]:
        func = call.func
        qualified = self.analysis.qualname(func, scope)
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if qualified in _GRADIENT_FUNCTIONS:
            return [value for where in _GRADIENT_FUNCTIONS[qualified]
                    for value in _spread(call_argument(call, *where))]
        if qualified is not None:
            head, _, tail = qualified.rpartition(".")
            if (head == "torch" and tail in _TORCH_FUNCTIONS) or \
                    (head == "torch.nn.functional" and tail in _FUNCTIONAL):
                values = []
                for value in positional:
                    if isinstance(value, (cst.List, cst.Tuple)):
                        values += [e.value for e in value.elements if not isinstance(e, cst.StarredElement)]
                    else:
                        values.append(value)
                # ``F.cross_entropy(out, y, weight=w)``: the tensors given by keyword
                return values + _tensor_keywords(call)
        if self.analysis.loss_evidence(func, scope, by_name=False) is not None:
            # ``criterion(model(x), target)`` of an ``nn.CrossEntropyLoss()``: a loss module
            # computes where its inputs are, and both must be on one device; lengths it may
            # take on the CPU (``nn.CTCLoss``'s ``input_lengths``, ``target_lengths``)
            return [value for value in positional + _tensor_keywords(call)
                    if not names_a_length(value)]
        if qualified is not None:
            return []
        if isinstance(func, cst.Attribute) and func.attr.value in _TENSOR_METHODS and positional:
            return [func.value, positional[0]]
        if isinstance(func, cst.Attribute) and func.attr.value == "backward" and \
                self.analysis.kind_of(func.value, scope) not in K.MODULE_LIKE:
            gradient = call_argument(call, 0, "gradient")  # ``loss.backward(torch.ones(n))``
            return [func.value] + _spread(gradient) if gradient is not None else []
        return []

    def _cpu(self, expr, scope: Scope, model_input: bool = False, at=None) -> Optional[OnCPU]:
        """CPU evidence for ``expr`` where it is an operand. ``model_input``: it is given to a
        model, whose input is a batch, not a number: a data factory of data this code does
        not show (``torch.from_numpy(obs)``) is then not taken for a 0-dim tensor (an RL
        agent's ``policy(torch.from_numpy(obs).float())``). ``at``: the call site of the
        operation, where known: what is assigned after it (outside a loop around both) is no
        value it reads (``out, hidden = encoder(x, hidden)`` does not make the ``hidden`` it
        is given 0-dim)."""
        evidence = self.analysis.on_cpu(expr, scope)
        if evidence is None or self.analysis.on_accelerator(expr, scope) is not None:
            return None
        if self._may_be_scalar(expr, scope, 0, model_input=model_input, at=at) or \
                self._move_discarded(expr, scope):
            return None
        return evidence

    def _move_discarded(self, expr, scope: Scope) -> bool:
        """``x.to(device)`` as a statement on this name in this function: the move was meant,
        its result thrown away (TDL001 reports it; this is its consequence)."""
        if not isinstance(expr, cst.Name):
            return False
        for name in api.ACCELERATOR_MOVE_METHODS:
            for site in self.analysis.collected.calls_by_name.get(name, ()):
                func = site.call.func
                if site.statement is not None and site.ctx.scope is scope and \
                        isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                        and func.value.value == expr.value:
                    return True
        return False

    def _accelerator(self, expr, scope: Scope) -> Optional[OnAccelerator]:
        evidence = self.analysis.on_accelerator(expr, scope)
        if evidence is None or self.analysis.on_cpu(expr, scope) is not None:
            return None
        origin = evidence.origin
        if origin is None:
            return evidence  # a parameter every call passes on an accelerator
        func = origin.func
        # (``x.type(torch.cuda.FloatTensor)`` is a move too: the placement's one answer)
        moved = self.analysis.placement.device_of_move(origin, scope)[0]
        created = keyword_value(origin, "device") is not None
        if not moved and not created:
            # the output of a model: moved before that call?
            if self._moved_model_at(origin, func, scope) is None and not (
                    isinstance(func, cst.Attribute)
                    and self._moved_model_at(origin, func.value, scope) is not None):
                return None
        return evidence

    def _may_be_scalar(self, expr, scope: Scope, depth: int, seen: Optional[set] = None,
                       model_input: bool = False, at=None, device_side: bool = False) -> bool:
        """Whether ``expr``'s value may be a 0-dim tensor (then it combines with any device).
        Conservative: any reduction, element access or scalar-made tensor in what it is
        computed from, through the assignments of the names it reads (each assignment once:
        ``out, hidden = model(x, hidden)`` in a loop reads its own target). ``device_side``:
        ``expr`` is on the accelerator (an index, ``pred = out.argmax()``), so what is
        computed on the device counts too."""
        if depth > _SCALAR_DEPTH:
            return True
        seen = set() if seen is None else seen
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.Lambda, cst.FunctionDef)):
                continue
            if isinstance(node, (cst.Call, cst.Subscript)) and \
                    self._has_dimension(node, scope, depth):
                continue  # ``x.unsqueeze(0)``, ``x[mask]`` has a dimension, whatever ``x`` is
            if isinstance(node, cst.Call) and last_name(node.func) in _SEQUENCE_JOINS:
                continue  # ``torch.cat(...)``, ``torch.stack(...)``: so has a join
            if isinstance(node, cst.Call) and last_name(node.func) in SIZED_FACTORIES:
                # its arguments are sizes and numbers, not tensors it is computed from
                stack.extend(a.value for a in node.args
                             if last_name(node.func).endswith("_like") and a is node.args[0])
            elif not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute)
                      and node.value.attr.value == "shape"):
                stack.extend(iter_children(node))
            if isinstance(node, cst.Subscript):
                if all(isinstance(e.slice, cst.Index) and not _is_full_slice_marker(e.slice.value)
                       and not isinstance(e.slice.value, cst.SimpleString) for e in node.slice):
                    return True  # ``x[0]``, ``x[i, j]``: may be one element (not
                    # ``inputs["input_ids"]``, a key)
            elif isinstance(node, cst.Call):
                name = last_name(node.func)
                if name in _MAY_BE_SCALAR:
                    return True
                helper = self.analysis.helper_called(node, scope)
                if helper is None:  # ``model.init_hidden(n)``: a method of a class of the file
                    helper = self.analysis.placement.method_called(node, scope)
                    if helper is not None and helper.name == "forward":
                        helper = None  # (a model's output: judged as the model's)
                if helper is not None and any(  # what a function of the file returns
                        value is None or self._may_be_scalar(value, ctx.scope, depth + 1,
                                                             model_input=model_input)
                        for value, ctx in helper.returns):
                    return True
                if (name in SCALAR_FACTORIES or name in SIZED_FACTORIES) and \
                        factory_dimensions(node, name, lambda data: self.analysis.kinds.is_sequence(
                            data, scope)) is False and \
                        not (model_input and data_of_unknown_shape(node, name)):
                    return True  # a factory that may make a 0-dim tensor (the one answer)
            elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
                # ``self.count`` that its object keeps (``placement.object_state``): what its
                # class's (and its bases') methods store there (``torch.tensor(0.)`` is 0-dim)
                func = scope.code_owner().func
                if func is None or func.cls is None or func.self_name != node.value.value:
                    continue
                for binding in self.analysis.kinds.attribute_bindings(func.cls, node.attr.value):
                    method = binding.ctx.func
                    if binding.value is None or method is None or method.scope is None or \
                            id(binding) in seen or \
                            updates_itself(binding.value, method.self_name, node.attr.value):
                        continue  # (``self.total = self.total + x`` keeps its dimensions)
                    seen.add(id(binding))
                    if self._may_be_scalar(binding.value, method.scope, depth + 1, seen):
                        return True
            elif isinstance(node, cst.Name):
                owner = scope.resolve(node.value)
                if owner is not None and owner is not scope and owner.kind == "module":
                    # a module constant read in a function (``EPS = torch.tensor(1e-8)``):
                    # what the module bound it to, before the function runs
                    for binding in owner.bindings.get(node.value, ()):
                        if binding.how != ASSIGN or binding.value is None or id(binding) in seen:
                            continue
                        seen.add(id(binding))
                        if self._may_be_scalar(binding.value, owner, depth + 1, seen):
                            return True
                    continue
                if owner is None or owner is not scope:
                    continue
                for binding in owner.bindings.get(node.value, ()):
                    if binding.how == ASSIGN and binding.value is not None and \
                            binding.value is not expr and id(binding) not in seen:
                        seen.add(id(binding))
                        if at is not None and binding.order > at.order and not (
                                at.loop is not None
                                and at.loop.start <= binding.order <= at.loop.end):
                            continue  # assigned after the operation: not what it reads
                        if not device_side and isinstance(binding.value, cst.Call) and \
                                self.analysis.on_accelerator(binding.value, scope) is not None:
                            continue  # (on the device, 0-dim or not: not the CPU side)
                        if self._may_be_scalar(binding.value, scope, depth + 1, seen,
                                               model_input, at, device_side):
                            return True
        return False

    def _has_dimension(self, expr, scope: Scope, depth: int) -> bool:
        """Whether ``expr`` is surely a tensor with at least one dimension (never 0-dim),
        whatever it is computed from: ``x.unsqueeze(0)``, ``x.view(-1, 1)``, ``x.flatten()``;
        a subscript that keeps a dimension (``x[:, -1]``, ``x[1:]``) or indexes with a mask
        (``x[x > 0]``, a comparison: boolean indexing gives one dimension) or with indices
        that have one (``labels[inds]`` of ``_, inds = scores[:, -1].sort()``, ``x[[0, 2]]``,
        ``x[torch.arange(n)]``: issue 28, qdtrack's tracker reorders its CPU labels so);
        a factory whose arguments show a dimension; a name every assignment of which is one
        of these. Conservative: False where it cannot tell."""
        if depth > _SCALAR_DEPTH:
            return False
        if isinstance(expr, cst.Subscript):
            if any(isinstance(e.slice, cst.Slice) for e in expr.slice):
                return True  # (a slice keeps its dimension)
            if len(expr.slice) != 1:
                return False
            index = expr.slice[0].slice.value
            if isinstance(index, cst.List):
                return bool(index.elements)
            if is_elementwise_comparison(index):
                return True
            return not isinstance(index, (cst.Integer, cst.SimpleString, cst.UnaryOperation)) \
                and self._has_dimension(index, scope, depth + 1)
        if isinstance(expr, cst.Name):
            owner = scope.resolve(expr.value)
            bindings = owner.bindings.get(expr.value, ()) if owner is scope else ()
            if len(bindings) == 1 and bindings[0].how == PARAM:
                # ``def jaccard_loss(logits, true)``: what every call of the function in this
                # file passes (and no other file calls it: what those pass is not known here)
                return self.analysis.placement.every_caller(
                    expr.value, scope, lambda argument, site: self._has_dimension(
                        argument, site.ctx.scope, depth + 1), ()) is not None
            # (``labels = torch.tensor(labels.numpy()).cuda()`` in a loop over batches reads
            # its own binding: that one keeps what the others give)
            pending = self._dimension_pending
            checked = False
            for binding in bindings:
                if id(binding) in pending:
                    continue
                pending.add(id(binding))
                try:
                    if not ((binding.how == ASSIGN and binding.value is not None
                             and self._bound_with_dimension(binding, scope, depth + 1))
                            or (binding.how == FOR and self._batch_part(binding, scope))):
                        return False
                finally:
                    pending.discard(id(binding))
                checked = True
            return checked
        if not isinstance(expr, cst.Call):
            return False
        if isinstance(expr.func, cst.Attribute) and \
                self.analysis.qualname(expr.func, scope) is None:
            method = expr.func.attr.value
            if method in _ADDS_A_DIMENSION:
                return method != "repeat" or bool(expr.args)
            if method in api.RESHAPING_METHODS:
                sizes = [a.value for a in expr.args if a.keyword is None and not a.star]
                return len(sizes) > 1 or (len(sizes) == 1 and (
                    isinstance(sizes[0], cst.Integer) or (
                        isinstance(sizes[0], cst.UnaryOperation)
                        and isinstance(sizes[0].expression, cst.Integer))))
            if method == "squeeze" and len(expr.args) == 1 and \
                    isinstance(expr.args[0].value, cst.Integer) and \
                    int(expr.args[0].value.value) > 0:
                # ``true.squeeze(1)``: the first dimension stays (a tensor of one dimension
                # has no dimension 1 to squeeze: that raises)
                return self._has_dimension(expr.func.value, scope, depth + 1)
            if method == "argsort" or method in api.SHAPE_KEEPING_METHODS or \
                    method in api.ARGUMENT_DEVICE_METHODS or method in api.ACCELERATOR_MOVE_METHODS:
                # (the receiver's dimensions at least, on another device or in another dtype;
                # not ``squeeze``, which may leave none)
                return self._has_dimension(expr.func.value, scope, depth + 1)
            return False
        qualified = self.analysis.qualname(expr.func, scope)
        if qualified is None or not qualified.startswith("torch."):
            return False
        name = qualified.rpartition(".")[2]
        data = expr.args[0].value if expr.args and expr.args[0].keyword is None and \
            not expr.args[0].star else None
        if qualified.count(".") == 1 and (name in api.DATA_FACTORIES or name == "from_numpy") \
                and data is not None:
            # ``torch.tensor(labels.numpy())``: the array of a tensor, of its shape
            if isinstance(data, cst.Call) and isinstance(data.func, cst.Attribute) and \
                    data.func.attr.value == "numpy" and not data.args:
                data = data.func.value
            if self._has_dimension(data, scope, depth + 1):
                return True
        return factory_dimensions(expr, name, lambda data: self.analysis.kinds.is_sequence(
            data, scope)) is True

    def _batch_part(self, binding, scope: Scope) -> bool:
        """A loop target bound to a batch of a data loader, or a part of one (``for features,
        labels in loader``): collated, it has the batch's dimension. Not for a loader built
        with ``batch_size=None``, which yields the dataset's items as they are."""
        for path, loader in self.analysis.loader_paths(binding.value, scope):
            if binding.path[:len(path)] != path:
                continue
            made = loader
            if isinstance(loader, cst.Name):
                found = scope.lookup(loader.value)
                made = found[0].value if len(found) == 1 else None
            size = keyword_value(made, "batch_size") if isinstance(made, cst.Call) else None
            if isinstance(size, cst.Name) and size.value == "None":
                continue
            return True
        return False

    def _bound_with_dimension(self, binding, scope: Scope, depth: int) -> bool:
        """``_has_dimension`` of what an assignment binds: its value, or the values or the
        indices ``x.sort()`` gives (``_, inds = x.sort()``: each of ``x``'s shape)."""
        if not binding.path:
            return self._has_dimension(binding.value, scope, depth)
        value = binding.value
        return len(binding.path) == 1 and binding.path[0] in (0, 1) and \
            isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
            value.func.attr.value in api.SORTING_METHODS and \
            self._has_dimension(value.func.value, scope, depth)

    # -- the report ---------------------------------------------------------------------

    def _violation(self, node, what: str, cpu_operand, cpu_evidence: OnCPU, other: str,
                   device, scope: Scope, owner, safety=_ASK, as_state: bool = False,
                   indexed: bool = False, error: Optional[str] = None) -> Violation:
        """``safety``: the fix's, where the caller knows it (``_ASK``: ``_fix_safety``)."""
        plan = None
        shown_device = "device"
        if device is not None:
            shown_device = source_of(device, 60)
        shown = cpu_operand  # (the message names the operand as the code writes it)
        bound = self._factory_bound_for(cpu_operand, cpu_evidence, device, scope)
        if bound is not None:
            # ``padding = torch.zeros(n, 4)`` read only here: created on the device where it
            # is made (moving it at the use is the create-then-move TDL009 reports)
            cpu_operand = bound
        factory = factories.factory_name(
            cpu_operand, self.analysis.qualname(cpu_operand.func, scope)
            if isinstance(cpu_operand, cst.Call) else None)
        made = self.analysis.placement.gives_a_tuple(cpu_operand, scope)
        if made is not None:
            # ``hidden = model.init_hidden(n)``: a tuple of CPU tensors, made in the method
            method, calls = made
            if method.cls is None or method.self_name is None:
                # ``hidden = init_hidden(n)``, a plain function: it has no model to ask, and
                # the name of the device where the model is called may mean nothing in it:
                # each tensor is moved where the model is called (unsafe, as every move)
                safety = self._fix_safety(device, scope, owner) if device is not None else None
                moved = each_moved(source_of(cpu_operand), shown_device)
                return Violation(node, self.MIXED_TUPLE_MADE(
                    what=what, operand=source_of(cpu_operand),
                    origin=source_of(calls[0] if calls else cpu_evidence.origin), other=other,
                    function=method.name, moved=moved),
                    EachItem(cpu_operand, f".to({_code(device)})", "move each of them to the "
                             "model's device", into_tuple=True) if safety is not None else None,
                    subject=shown)
            device = f"next({method.self_name}.parameters()).device"
            return Violation(node, self.MIXED_TUPLE(
                what=what, operand=source_of(cpu_operand), origin=source_of(cpu_evidence.origin),
                other=other, method=method.name, device=device),
                CreateInMethod(tuple(calls), device) if calls else None, subject=shown)
        if device is not None:
            if safety is _ASK:
                safety = self._fix_safety(device, scope, owner)
            if safety is not None:
                plan = MoveOperand(cpu_operand, _code(device), safety, factory)
        extra = {}
        if error is not None:
            kind = self.INDEX_ARGUMENT_FACTORY if factory is not None else self.INDEX_ARGUMENT_OPERAND
            extra["error"] = error
        elif indexed:
            kind = self.INDEXED_FACTORY if factory is not None else self.INDEXED_OPERAND
        elif _gives_gradients(node, self.analysis, scope):
            kind = self.GRADIENT_FACTORY if factory is not None else self.GRADIENT_OPERAND
        else:
            kind = (self.MIXED_STATE_FACTORY if as_state else self.MIXED_FACTORY) \
                if factory is not None else self.MIXED_STATE if as_state else self.MIXED_OPERAND
        return Violation(
            node,
            kind(what=what, operand=source_of(shown), origin=source_of(cpu_evidence.origin),
                 other=other, device=shown_device,
                 # (the fix's own text: ``(a * 2).to(device)``, not ``a * 2.to(device)``)
                 moved=call_on_text(source_of(cpu_operand), cpu_operand, f".to({shown_device})"),
                 callee=source_of(cpu_operand.func) if factory is not None else None, **extra),
            plan, subject=shown)

    def _factory_bound_for(self, operand, evidence: OnCPU, device, scope: Scope):
        """The factory call ``operand`` names, when the fix can create it on the device where it
        is made: ``operand`` is a local name bound once, to that call, by a statement of the
        function's own body, and read nowhere else, and the device is a string or a parameter
        of the function (there before the call)."""
        origin = evidence.origin
        if not isinstance(operand, cst.Name) or not isinstance(origin, cst.Call) \
                or not (isinstance(device, cst.SimpleString) or isinstance(device, cst.Name)):
            return None
        bindings = scope.lookup(operand.value)
        if len(bindings) != 1 or bindings[0].how != ASSIGN or bindings[0].value is not origin \
                or bindings[0].path:
            return None
        func = bindings[0].ctx.func
        if func is None or bindings[0].ctx.scope is not scope:
            return None
        if isinstance(device, cst.Name) and device.value not in func.param_names:
            return None
        if factories.factory_name(origin, self.analysis.qualname(origin.func, scope)) is None:
            return None
        if not any(isinstance(statement, cst.SimpleStatementLine) and any(
                isinstance(small, cst.Assign) and small.value is origin for small in statement.body)
                for statement in func.node.body.body):
            return None  # (made under a ``with torch.device("cpu"):``, a branch or a loop)
        uses = sum(1 for node in walk_code(func.node.body, into_functions=True)
                   if isinstance(node, cst.Name) and node.value == operand.value)
        return origin if uses == 2 else None  # the assignment's target and this read

    def _fix_safety(self, device, scope: Scope, owner) -> Optional[bool]:
        """True: a plain name of this function (or a string); False: other names all in
        scope; None: no fix."""
        if isinstance(device, cst.SimpleString):
            return True
        names = [n for n in walk_code(device) if isinstance(n, cst.Name)]
        if isinstance(device, cst.Attribute):
            names = [n for n in names if n is not device.attr]
        if any(scope.resolve(n.value) is None for n in names):
            return None
        if isinstance(device, cst.Name):
            return holds(owner, device)
        return False


def _tensor_keywords(call: cst.Call) -> List[cst.BaseExpression]:
    """The values of the keyword arguments of ``call`` that torch's functions and losses take
    as tensors on the device of their input (``weight=``, ``pos_weight=``, ``target=``)."""
    return [a.value for a in call.args
            if a.keyword is not None and a.keyword.value in api.TENSOR_KEYWORD_ARGUMENTS]


def _partner_device(operand, evidence: OnAccelerator):
    """The device the fix moves the CPU operand to: the one the accelerator operand was put
    on, else that operand's own ``.device``, or the device of the tensor a chain of tensor
    methods (or subscripts) starts from (``predicted.float()``, ``lengths[:, None]``:
    ``predicted.device``, ``lengths.device``)."""
    if evidence.device is None:
        root = operand
        while (isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute) and
               root.func.attr.value in api.TENSOR_METHODS and
               root.func.attr.value not in api.ACCELERATOR_MOVE_METHODS and
               root.func.attr.value not in api.OFF_ACCELERATOR_METHODS) or \
                isinstance(root, cst.Subscript):
            root = root.func.value if isinstance(root, cst.Call) else root.value
        if isinstance(root, cst.Name):
            return cst.Attribute(root, cst.Name("device"))
    return evidence.device


def _making_cpu_tensors(analysis: Analysis) -> set:
    """ids of the scopes (functions, the module) whose own code makes a tensor on the CPU.

    A CPU operand is evidence found in the body that reads it: a factory (``torch.zeros``,
    ``*_like``), ``.cpu()`` or a ``.to()`` whose device is the CPU (``placement.call_on_cpu``),
    in that very function (names bound elsewhere give no evidence, but for a module constant
    made on the CPU), so a function without such a call cannot report and is not walked. Most functions have none: in torch's
    sources, where ``.to(device)`` and ``.to(dtype)`` are everywhere and ``.to("cpu")`` is
    rare, asking ``.to()`` for its device spares the walk of most of them."""
    owners = set()
    # the plain functions of the file (one of them may return a CPU tensor: issue 28)
    helpers = {info.name: info for info in analysis.collected.functions
               if info.cls is None and not info.opaque_return and info.returns}
    # and the methods of its classes (``model.init_hidden(n)`` may return CPU tensors)
    methods = {info.name for info in analysis.collected.functions
               if info.cls is not None and info.name != "forward" and info.returns}
    # and the loss modules it builds with CPU class weights (``criterion(out, y)``)
    if any(name is not None and name.endswith("Loss") for name in analysis.collected.calls_by_name):
        for sites in analysis.collected.calls_by_name.values():
            for site in sites:
                scope = site.ctx.scope.code_owner()
                if id(scope) not in owners and isinstance(site.call.func, cst.Name) and \
                        analysis.placement.tensors_held(site.call.func, site.ctx.scope):
                    owners.add(id(scope))
    # and the methods of plain classes whose every call passes a CPU tensor (``tracker.match(
    # bboxes, labels)`` of labels made on the CPU: ``placement.parameters_on_cpu``)
    # and those that read the CPU tensors their object keeps (``self.mat`` of ``__init__``'s
    # ``torch.zeros(n, n)``: ``placement.object_state``)
    for info in analysis.collected.functions:
        if info.cls is not None and info.scope is not None and info.name != "forward" and \
                analysis.kinds.class_is_module(info.cls) is False and (
                    analysis.placement.parameters_on_cpu(info.scope)
                    or analysis.placement.object_state(info.scope, "cpu")):
            owners.add(id(info.scope))
    for name, sites in analysis.collected.calls_by_name.items():
        if name is None:
            continue
        # ``tokenizer(text, return_tensors="pt")``: a preprocessor's tensors, on the CPU
        owners.update(id(site.ctx.scope.code_owner()) for site in sites
                      if returns_torch_tensors(site.call))
        to_cpu = name == "to"
        if not (to_cpu or name == "cpu" or name in api.FACTORIES or name.endswith("_like")
                or name in helpers or name in methods):
            continue
        for site in sites:
            scope = site.ctx.scope.code_owner()  # judged with the function around it
            if name in methods and isinstance(site.call.func, cst.Attribute) and \
                    not (to_cpu or name == "cpu" or name in api.FACTORIES):
                if id(scope) in owners or \
                        analysis.placement.method_called(site.call, site.ctx.scope) is None \
                        or analysis.on_cpu(site.call, site.ctx.scope) is None:
                    continue
            elif name in helpers:
                if id(scope) in owners or \
                        analysis.helper_called(site.call, site.ctx.scope) is not helpers[name] \
                        or analysis.on_cpu(site.call, site.ctx.scope) is None:
                    continue
            elif name in methods and not (to_cpu or name == "cpu" or name in api.FACTORIES
                                          or name.endswith("_like")):
                continue
            elif to_cpu:
                device = move_device_argument(site.call)
                if device is None or not analysis.is_cpu_device(device, scope):
                    continue
            owners.add(id(scope))
    # and the functions that read a module constant made on the CPU (``MEAN = torch.tensor(
    # [...]).view(1, 3, 1, 1)``, ``placement.module_constants_on_cpu``)
    module = analysis.collected.module_scope
    constants = analysis.placement.module_constants_on_cpu(module) if module is not None else {}
    # (only those the text names again, where it has the text: most are never read but where
    # they are made)
    constants = {name for name in constants
                 if analysis.mentions(name) is None or analysis.mentions(name) > 1}
    if constants:
        for info in analysis.collected.functions:
            if info.scope is not None and id(info.scope) not in owners and any(
                    type(node) is cst.Name and node.value in constants
                    for node in walk_code(info.node.body)):
                owners.add(id(info.scope))
    return owners


def _with_accelerator_origins(analysis: Analysis, scopes: set) -> set:
    """ids of those of ``scopes`` whose own code also has a call where a value on an
    accelerator may come from (``placement.accelerator_origin``): the only ones where the two
    sides can meet. In torch's sources most functions that make CPU tensors create the others
    on another tensor's device (``device=x.device``) or move nothing."""
    found = set()
    placement = analysis.placement
    for sites in analysis.collected.calls_by_name.values():
        for site in sites:
            scope = site.ctx.scope.code_owner()
            key = id(scope)
            if key in scopes and key not in found and \
                    placement.accelerator_origin(site.call, scope):
                found.add(key)
    for scope in analysis.collected.scopes:  # or a parameter that every call passes on one
        if id(scope) in scopes and id(scope) not in found and (
                placement.parameters_on_accelerator(scope)
                or placement.object_state(scope, "accelerator")):  # or its object keeps one
            found.add(id(scope))
    return found


def _zip_join(comprehension) -> Optional[tuple]:
    """``[torch.cat(x, 0) ... for x in zip(*stats)]``: (the join call, "stats"), else None
    (the join is any call in the element given ``x`` first; which one is torch's is asked
    with the scope)."""
    if comprehension.for_in.inner_for_in is not None or comprehension.for_in.ifs:
        return None  # one ``for``, every tuple
    target, iterable = comprehension.for_in.target, comprehension.for_in.iter
    if not isinstance(target, cst.Name) or not isinstance(iterable, cst.Call) or \
            not isinstance(iterable.func, cst.Name) or iterable.func.value != "zip" or \
            len(iterable.args) != 1 or iterable.args[0].star != "*" or \
            not isinstance(iterable.args[0].value, cst.Name):
        return None
    for node in walk_code(comprehension.elt):
        if isinstance(node, cst.Call) and node.args and node.args[0].keyword is None and \
                not node.args[0].star and isinstance(node.args[0].value, cst.Name) and \
                node.args[0].value.value == target.value and \
                last_name(node.func) in _SEQUENCE_JOINS:
            return node, iterable.args[0].value.value
    return None


def _first_size(factory) -> Optional[int]:
    """The literal first size of a torch factory call (``torch.zeros((3, 0))``,
    ``torch.zeros(3, 0)``): how many tensors unpacking it gives."""
    if not isinstance(factory, cst.Call) or last_name(factory.func) not in api.FACTORIES \
            or not factory.args or factory.args[0].keyword is not None:
        return None
    first = factory.args[0].value
    if isinstance(first, (cst.Tuple, cst.List)) and first.elements:
        first = first.elements[0].value
    if isinstance(first, cst.Integer):
        return int(first.value, 0)
    return None


def _spread(value) -> list:
    """A tuple or list of tensors as its elements; one tensor as itself; nothing as none."""
    if value is None:
        return []
    if isinstance(value, (cst.List, cst.Tuple)):
        return [e.value for e in value.elements if not isinstance(e, cst.StarredElement)]
    return [value]


def _gives_gradients(node, analysis: Analysis, scope: Scope) -> bool:
    """An autograd call given gradients (``autograd.grad``, ``.backward(gradient)``)."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    return analysis.qualname(func, scope) in _GRADIENT_FUNCTIONS or (
        isinstance(func, cst.Attribute) and func.attr.value == "backward"
        and analysis.qualname(func, scope) is None)


def _is_full_slice_marker(expr) -> bool:
    return isinstance(expr, (cst.Ellipsis,)) or (isinstance(expr, cst.Name) and expr.value == "None")


def _code(node: cst.CSTNode) -> str:
    return code_for_node(node)

