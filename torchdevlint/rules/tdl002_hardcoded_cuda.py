"""TDL002: a hard-coded CUDA device where no availability check protects it.

Fix: choose the device at runtime.

- A ``"cuda"`` (or ``"cuda:0"``) literal in a device position becomes
  ``"cuda" if torch.cuda.is_available() else "cpu"``; from ``torch-version`` 2.6 on, ``"cuda"``
  becomes PyTorch's accelerator idiom instead, ``torch.accelerator.current_accelerator().type
  if torch.accelerator.is_available() else "cpu"``, which is ``"cuda"`` wherever CUDA is
  (``"cuda:0"`` keeps the CUDA form: the accelerator's device is the current one, which need
  not be device 0). Safe when torch uses the literal as a
  device right there (``device=``/``map_location=`` of a torch call, ``.to()``): where CUDA is
  available nothing changes (device 0 exists whenever CUDA is available), elsewhere torch
  raised an error. Unsafe for ``torch.device("cuda")`` (a value that may be compared), a
  parameter default, a variable or another function's ``device=``. Other indices
  (``"cuda:1"``, ``torch.device("cuda", i)``) get no fix: availability does not say the
  device exists.
- ``x.cuda()`` becomes ``x.to(device)``, ``device`` being a guarded device variable in scope,
  or else one module-level ``device = torch.device("cuda" if torch.cuda.is_available() else
  "cpu")`` (from torch 2.6 on, ``device = torch.accelerator.current_accelerator().type if
  torch.accelerator.is_available() else "cpu"``) added after the imports (under a name the file does not use, with ``import torch``
  if needed). Safe when ``x`` is known to be a tensor or a module, whose ``.to(device)`` does
  what ``.cuda()`` does; unsafe otherwise (another class may have ``.cuda()`` but no ``.to()``).
  Where ``x`` is a torch factory call whose tensor is the same wherever it is computed
  (``torch.zeros(3).cuda()``, see TDL009), the device goes into the factory instead:
  ``torch.zeros(3, device=device)`` (safe), which creates no CPU tensor to copy.
  ``.cuda(...)`` with arguments (a device index, ``non_blocking=``) gets no fix, and neither
  does a ``.cuda()`` statement whose result is discarded (the rule gives no payload): the
  rewrite would still discard it.
- ``torch.cuda.FloatTensor`` and friends get no fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, List, Optional

import libcst as cst

from torchdevlint.analysis import (
    ASSIGN, PARAM, K, Analysis, CallSite, Ctx, Scope, api, decorator_callee, is_device_name,
    iter_children, keyword_value, last_name, move_device_argument, string_value, walk_code,
)
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext, accelerator_device, literal_quote
from torchdevlint.fixes.model import Edit, Fix, FixPlan
from torchdevlint.rules import factories
from torchdevlint.rules.base import (
    CUDA_TENSOR_TYPE_TEXT, Message, Rule, Violation, method_call_text, source_of,
)
from torchdevlint.rules.prefilter import hardcoded_cuda_in
from torchdevlint.torch_version import has_accelerator_api

# The literals whose fix chooses at runtime; another index need not exist where CUDA does.
FIXABLE_LITERALS = ("cuda", "cuda:0")
CRASH = "fails on a machine without CUDA (Torch not compiled with CUDA enabled)"
# Calls whose ``device=`` keyword is configuration, not a device that is used right there:
# argparse defaults, and the namespaces and dicts that carry settings to where they are used
# (which the analysis does not follow: ``args = SimpleNamespace(device="cuda")``).
_CONFIG_CALLS = frozenset(
    "add_argument set_defaults add_argument_group Namespace SimpleNamespace dict EasyDict "
    "edict".split())
# Uses of a device string that only inspect it (``getattr(torch, device)``, ``device.startswith``).
_INSPECTING_CALLS = frozenset("getattr hasattr str isinstance repr print len".split())
_STRING_METHODS = frozenset("startswith endswith lower upper split replace strip format".split())


@dataclass
class CudaLiteral(FixPlan):
    """A "cuda" literal and the scope its expression is evaluated in."""

    literal: cst.BaseExpression
    scope: Scope

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        literal = self.literal
        if not isinstance(literal, cst.SimpleString) or string_value(literal) not in FIXABLE_LITERALS:
            return None
        if _with_explicit_index(literal, self, ctx):
            return None
        start, end = ctx.span(literal)
        torch = ctx.torch_reference(self.scope, start)
        if torch is None:
            return None
        alias, needs_import = torch
        text = runtime_choice(literal, ctx.text(literal), alias, ctx.analysis.torch_version)
        if isinstance(ctx.parent(literal), cst.IfExp):
            text = f"({text})"  # a conditional expression inside another one
        edits = (Edit(start, end, text),)
        if needs_import:
            edits = (ctx.import_torch_edit(),) + edits
        description = "use the accelerator only when there is one" \
            if _uses_accelerator(literal, ctx.analysis.torch_version) \
            else "choose CUDA only when it is available"
        return Fix(finding.code, _torch_device_argument(literal, self, ctx), description, edits)


@dataclass
class CudaCall(FixPlan):
    """A ``.cuda()`` call whose result is used (or whose receiver is a module)."""

    site: CallSite

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        call, scope = self.site.call, self.site.ctx.scope
        if call.args or not isinstance(call.func, cst.Attribute):
            return None
        call_start, call_end = ctx.span(call)
        closing = call_end - sum(len(ctx.text(paren)) for paren in call.rpar) - 1
        if ctx.source[closing] != ")":
            return None
        device = ctx.guarded_device_variable(scope, call_start)
        edits = ()
        if device is None:
            defined = ctx.module_device(scope, call_start)
            if defined is None:
                return None
            device, definition = defined
            edits = (definition,)
        receiver = call.func.value
        tail = factories.factory_name(receiver, ctx.analysis.qualname(receiver.func, scope)) \
            if isinstance(receiver, cst.Call) else None
        if tail is not None and factories.same_tensor(tail, receiver, with_dtype=False):
            # ``torch.zeros(3).cuda()``: create it on the device (TDL009), the same tensor
            into = factories.into_factory(ctx, receiver, call, (("device", device),))
            if into is not None:
                return Fix(finding.code, True,
                           f"create the tensor with `device={device}` instead of `.cuda()`",
                           edits + into)
        attr_start, attr_end = ctx.span(call.func.attr)
        edits += (Edit(attr_start, attr_end, "to"), Edit(closing, closing, device))
        kind = ctx.analysis.kind_of(receiver, scope)
        safe = kind is K.TENSOR or ctx.analysis.kinds.is_module(kind)
        return Fix(finding.code, safe, f"replace `.cuda()` with `.to({device})`", edits)


class HardcodedCudaDevice(Rule):
    """
    ## What it does
    Reports a CUDA device hard-coded where no availability check protects it:

    - the string literals `"cuda"` and `"cuda:N"` used as a device: the argument of
      `torch.device(...)`, any `device=` keyword, `.to("cuda")`, `map_location="cuda..."` (also
      positional), `torch.set_default_device("cuda")`;
    - a default value `"cuda..."` of a parameter named `device` or ending in `_device`, and a
      `device`-named variable or attribute assigned such a literal;
    - a name bound to such a literal and then used as a device (reported at the literal);
    - every `.cuda(...)` call;
    - the legacy `torch.cuda.*Tensor` types, also given to `.type()` under a name every binding
      of which is one (`dtype = torch.cuda.FloatTensor`, then `x.type(dtype)`: reported at the
      name; a choice, `... if use_cuda else torch.FloatTensor`, is another binding).

    Code is protected when it sits in an `if` block or conditional expression whose test involves
    `torch.cuda.is_available()` (directly, or through a variable computed from it such as
    `use_cuda = not args.no_cuda and torch.cuda.is_available()`), `torch.cuda.device_count()`,
    `x.is_cuda`, a comparison of a device with `"cuda"`/`"cpu"` (`device.type == "cuda"`,
    `"cuda" in str(device)`), or an explicit opt-in flag whose name mentions CUDA or a GPU
    (`args.cuda`, `use_gpu`, `args.gpu is not None`; also an attribute an object sets from one,
    `self.dp = conf["use_gpu"]`, and `is_available()` imported from `torch.cuda`), or a flag that
    chooses the CPU (`if not args.use_cpu:`; not a count of cores, `num_cpus`). The `else` of a
    test that holds only where CUDA is there or asked for (`if use_gpu: ... else: x.cuda()`) is
    the CPU path and is still reported; after an early exit on such a test
    (`if not torch.cuda.is_available(): return` / `raise` / `pytest.skip(...)`) or an
    `assert torch.cuda.is_available()`; in the block of a test that the file itself ties to CUDA
    (elsewhere an `if` with the same test stops the program unless CUDA is available: `if
    opt.device == 0: assert torch.cuda.is_available()`), not in its `else`; in functions and
    classes decorated with such a test
    (`@unittest.skipIf(not torch.cuda.is_available(), ...)`) or whose name mentions CUDA or a GPU
    (`def to_cuda(...)`, `class CudaTests`), and in modules with a CUDA `pytestmark` skip.
    Test-suite guards through the project's own helpers count too: a decorator or mark whose
    name or keyword speaks of CUDA or GPUs (`@RunIf(min_cuda_gpus=1)`, `@requires_cuda`,
    `skipif(not HAS_GPU)`), and the values of `pytest.param(..., marks=...)` with such marks.
    Distributed code after `if not dist.is_initialized(): return` or under `world_size > 1` is
    multi-process GPU code; so is code after a project's own wrapper of that test, imported
    from another module (dinov2's `if not distributed.is_enabled(): return`, where
    `is_enabled()` returns `dist.is_available() and dist.is_initialized()`;
    `fixtures/projects/guard_across_imports`). `if device is None: device = "cuda"` is no guard.

    Only a check that proves CUDA makes a hard-coded CUDA device safe. Two checks that look alike
    do not:

    - `torch.accelerator.is_available()` (and `torch.accelerator.device_count()`) is true on any
      accelerator: Apple MPS and Intel XPU as well as CUDA. Under it the accelerator's own device,
      `torch.accelerator.current_accelerator()`, is safe; `"cuda"` still fails on a Mac.
      `device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available()
      else "cpu"` is a device chosen at runtime (the fix uses it, see below), and a test that also
      checks the accelerator's type (`torch.accelerator.current_accelerator().type == "cuda"`)
      proves CUDA.
    - `torch.backends.mps.is_available()` (also `is_built()`, and `torch.xpu.is_available()`) proves
      that device, which this rule never reports: `"mps"` under it is safe. It says nothing of
      CUDA: `if torch.backends.mps.is_available(): x.to("cuda")` fails on every Mac, and
      `device = "cuda"` in its `else:` fails on every machine without MPS or CUDA. Both are reported.

    Where the caller decides, the rule is silent too, because this file cannot show that a machine
    without CUDA gets there:
    - a worker started once per GPU (`mp.spawn(main_worker, nprocs=torch.cuda.device_count())`);
    - a private function or method (or any function of a script, of a test module, or of a
      program whose top-level code calls its own functions) whose every call in the file is guarded and which is
      never handed on as a value (MobileSAM's `self._setup_ddp(world_size)` under `if
      world_size > 1`; a helper called only under `if torch.cuda.is_available():`, issue 28);
    - `.cuda(gpu)` where `gpu` is a parameter of the enclosing function, or `self.device` that the
      constructor only sets from one of its parameters (ResNeSt's `torch_dist_sum(gpu, ...)`):
      which GPU to use is the caller's choice;
    - a `device="cuda"` default that the class only stores as `self.device` and that neither the
      class nor a subclass in the file reads.

    A file that says itself that it needs CUDA is not reported at all: an `assert
    torch.cuda.is_available()` or an exit/raise without CUDA at the top level of the module or of
    one of its functions (also dino's `if ...: elif torch.cuda.is_available(): ... else:
    sys.exit(1)`), an NCCL process group (`init_process_group("nccl")`), an import of Triton, or
    an op module of a compiled CUDA extension (mmcv's `ext_module = ext_loader.load_ext(...)`).
    Nor is a program of a project whose own code says that it runs only on a GPU: it calls a
    project helper which stops without CUDA (dino's `utils.init_distributed_mode(args)`); it
    imports a CUDA-only package at its top level (Apex, FlashAttention, xFormers, bitsandbytes,
    Transformer Engine, MS-AMP, PyCUDA, CuPy: `torch_api.CUDA_ONLY_PACKAGES`; an import in
    `try:` is optional and proves nothing); or it is a notebook whose metadata asks for a GPU
    runtime (Colab's `"accelerator": "GPU"`), whose markdown says so ("Make sure you're running
    a GPU runtime") or that runs `!nvidia-smi`, and none of whose cells checks for an
    accelerator or chooses the CPU; or none of its code (the file and the project modules it
    imports) has a CPU path (an availability check, the CPU chosen as a device, a device
    option such as `--device` or `--no-cuda`) and the README at the project's root states a
    GPU requirement ("runs on a GPU with at least 10GB VRAM", "you'll also need an NVIDIA
    GPU"; a README that only mentions GPUs, their memory or how many a run used states none).
    A program that imports a module with a CPU path, or has a device option, would run on the
    CPU but for the hard-coded device: it is reported. The run names such programs once, with
    the evidence, and
    `require-accelerator = false` turns the rule back on there. Loading to the CPU
    (`map_location="cpu"`), moving results there (`.to("cpu")`) and creating a tensor there
    (`device="cpu"`) are no CPU path: GPU-only programs do all three. Choosing the CPU as the
    device (`device = "cpu"`, `"cuda" if ... else "cpu"`, an option's default) is one.
    Nor is a Python file beside a `setup.py` that builds a CUDA extension (`CUDAExtension(...)`
    with no `CppExtension` fallback): the extension's wrappers and unit tests run only where CUDA
    is (Swin-Transformer's `kernels/window_process`, Deformable-DETR's `models/ops`). This one
    fact is read from the file system, as a per-file ignore would be, so every front end (the
    command, flake8, standard input with `--stdin-filename`) applies it.
    A GPU-only project where this is said in another file sets `require-accelerator = true` in
    `[tool.torchdevlint]`, which turns this rule off.

    A device type name given to an API that accepts it on any machine is not a device use:
    `torch.amp.GradScaler(device="cuda")`, `torch.get_autocast_dtype("cuda")`,
    `torch.is_autocast_enabled("cuda")` and the others in `torch_api.DEVICE_TYPE_TOLERANT_CALLS`,
    each proven to run without CUDA by the runtime suite. `torch.device("cuda")` alone fails
    nowhere: it is reported where it is used as a device (passed where a device goes, a `with`
    block's default device, returned, kept in a device-named variable, a parameter's default),
    not when it is only built, compared or handed to code the analysis does not follow. A
    `device="cuda"` stored in a settings object (`SimpleNamespace(...)`, `dict(...)`,
    `argparse` defaults) is configuration, and a `device="cuda"` default (or a `device =
    "cuda"` the function assigns) that the function replaces with `"cpu"` when it must (`if not
    available: device = "cpu"`, or `if device.type == "cuda" and not
    torch.cuda.is_available(): return torch.device("cpu")`: `Guards.falls_back_to_cpu`) is
    only a first choice. A `"cuda"` default of a parameter that
    every call in the file passes is not reported when no other file is expected to call the
    function (it is private, or the file is a script with a `__main__` entry point, a test
    module, or a program whose top-level code calls its own functions:
    `Guards.expects_no_other_callers`), or, for a public function or class of a library, when
    the project's other files call it and every call of the project passes the argument (the
    project index's calls, also `Model(**cfg, device=device)`; with no call anywhere, a user's
    call may take the default, and it is reported).

    A line whose comment (on it, or on the line right above it) says that it fails, as the
    deliberate error demos of teaching notebooks do (`# this will error`, `# raises`, `# error!`,
    `# RuntimeError: ...`), is treated as the body of `pytest.raises` is: the failure is the
    point (`analysis.model.says_it_fails`, issue 28). A comment that only mentions an error
    (`# mean squared error`) changes nothing.

    CUDA memory statistics of a device (`torch.cuda.max_memory_allocated(device="cuda")`,
    `memory_allocated`, `memory_reserved`, `max_memory_reserved`, `memory_stats`) return 0 (an
    empty dict) where CUDA never ran: no crash, no finding. A device-named variable set to
    `"cuda"` whose every use comes after a guard (`device = "cuda"`, then `if not
    torch.cuda.is_available(): return`, then `model.to(device)`) is not reported either. A test
    read backwards guards nothing: the body of `if t.device != torch.device("cuda"):` (also
    `device.type != "cuda"`, `"cuda" not in str(d)`, and the first branch of `x.to("cuda") if
    x.device.type != "cuda" else x`) runs where the tensor is *not* on CUDA, a machine without
    CUDA included, so a hard-coded CUDA device there is reported (the `else` branch, and the code
    after `if device.type != "cuda": return`, stay guarded:
    `fixtures/TDL002/negative/backwards_guard_else.py`).

    The fallback of the accelerator idiom of many example folders,
    `torch.accelerator.current_accelerator().type if hasattr(torch, "accelerator") else "cuda"`,
    runs only on a torch without the accelerator API (before 2.6). There `"cuda"` is a hard-coded
    device like any other, and it is reported where the project's torch may be older than 2.6
    (`torch-version` below 2.6, the default 2.0 included). Where the project targets 2.6 or later
    the branch is dead code and is not reported (`Guards.live_branches` decides, for any
    conditional expression whose test is `hasattr(torch, "accelerator")`, or `not` it). The bigger
    bug of that line, `.type` of the None that `current_accelerator()` returns on every machine
    without an accelerator, is TDL012's, which reports it in either case.

    ## Why is this bad
    The script crashes on every machine without a CUDA GPU: a laptop, a CPU-only CI runner, an
    Apple-silicon Mac. With a CPU-only build of PyTorch:

    ```
    AssertionError: Torch not compiled with CUDA enabled
    ```

    with a CUDA build on a machine without the NVIDIA driver:

    ```
    RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
    ```

    and with a CUDA build that sees no GPU (for example with `CUDA_VISIBLE_DEVICES=""`):

    ```
    RuntimeError: No CUDA GPUs are available
    ```

    ## Example
    ```python
    model = Net().cuda()
    inputs = torch.zeros(8, 3, device="cuda")
    ```

    ## Use instead
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    inputs = torch.zeros(8, 3, device=device)
    ```

    or, from PyTorch 2.6 on, the device of whichever accelerator the machine has (CUDA, Apple MPS,
    Intel XPU, ...), as PyTorch's tutorials choose it:

    ```python
    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
    ```

    ## Fix safety
    `--fix` makes the device a runtime choice. Which choice depends on the torch version the
    project targets, `torch-version` (see [configuration](../configuration.md); by default the
    lowest version the project's `torch` requirement allows, else 2.0):

    - below 2.6, CUDA if it is available, else the CPU: `"cuda" if torch.cuda.is_available() else
      "cpu"`;
    - from 2.6 on, the accelerator if there is one, else the CPU: `torch.accelerator.current_accelerator().type
      if torch.accelerator.is_available() else "cpu"`. On a machine with CUDA the accelerator is
      CUDA, so the value is the same `"cuda"`; a Mac now runs on MPS where the code raised.

    In what follows the first form is written; from torch 2.6 on, the second replaces it wherever
    a `"cuda"` literal or a new module-level device is written. The safety is the same for both.

    - A `"cuda"` or `"cuda:0"` literal in a device position becomes
      `"cuda" if torch.cuda.is_available() else "cpu"`, keeping the literal's quotes. **Safe** when
      torch uses the literal as a device right there: the `device=` or `map_location=` keyword of
      a torch call (`torch.zeros(3, device="cuda")`, `torch.load(f, map_location="cuda")`) or the
      argument of `.to()`. On a machine with CUDA the value is the same (device 0 exists whenever
      CUDA is available); elsewhere torch raised an error. **Unsafe** for `torch.device("cuda")`,
      a `device` parameter's default, a device variable (`DEVICE = "cuda"`) and the `device=`
      keyword of a function that is not torch's: these are values that may be compared
      (`torch.device("cuda") in devices`, `x.device.type == device`) rather than used, so code that
      worked on a machine without CUDA may behave differently there. `import torch` is added after
      the imports when the file does not import `torch` (an alias such as `import torch as T` is
      used when there is one). `"cuda:0"` keeps the CUDA form at every torch version: the
      accelerator's device is the current one, which is device 0 only until the program picks
      another (`torch.cuda.set_device`).
    - `x.cuda()` becomes `x.to(device)`. `device` is a variable in scope that is already chosen
      from `torch.cuda.is_available()` (or is the accelerator idiom above) and bound before the
      call; when there is none, one
      module-level definition is added after the imports:
      `device = torch.device("cuda" if torch.cuda.is_available() else "cpu")` (from torch 2.6 on,
      `device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available()
      else "cpu"`), under a name the file does not use yet (`device`, else `default_device`, ...). **Safe** when `x` is known to
      be a tensor or an `nn.Module`, whose `.to(device)` does what `.cuda()` does; **unsafe**
      otherwise, since another class may define `.cuda()` but no `.to()`.
    - **No fix** for a `.cuda()` statement whose result is thrown away (`batch["input"].cuda()`)
      unless the receiver is known to be a module, which moves in place. `.to(device)` would keep
      the copy discarded, so the message says the result is unused instead; where TDL001 reports
      the same statement, its fix assigns the result first and the next pass of `--fix` rewrites
      `.cuda()`.
    - **No fix** for an explicit other device index (`"cuda:1"`, `torch.device("cuda", i)`: CUDA
      being available does not mean that device exists), for `.cuda(...)` with arguments (`.cuda(0)`, `.cuda(rank)`,
      `.cuda(non_blocking=True)`), for concatenated strings, and for `torch.cuda.FloatTensor` and
      the other CUDA tensor types (rewrite them as `torch.tensor(..., device=device)` by hand).

    ## Known limits
    Not reported: `argparse` defaults (`add_argument(..., default="cuda")`, `set_defaults`),
    and their like, a field of a dataclass of settings that the file hands to a command-line
    parser (`device: str = "cuda"` of a class that `@pyrallis.wrap()`, `tyro.cli` or
    `HfArgumentParser` reads: `api.CONFIG_CLI_PARSERS`; CORL's `TrainConfig`),
    `torch.autocast(device_type="cuda")` and `torch.autocast("cuda")`, which do not crash on a
    CPU-only machine, comparisons such as `"cuda" in str(device)`, dictionary keys
    (`map_location={"cuda:0": "cpu"}`), the type argument of `isinstance`, and f-strings such as
    `f"cuda:{rank}"` (distributed code where the device index comes from the launcher). A flag
    such as `if use_gpu:` is trusted as a guard because the user opted in to CUDA. The torch
    version test `hasattr(torch, "accelerator")` is read as dead code only in a conditional
    expression; an `if hasattr(torch, "accelerator"): ... else: device = "cuda"` statement is
    reported at every torch version.
    """

    # The kinds of finding (their messages, as data; the report fills the fields).
    DEVICE_VARIABLE = Message("`{name}` is set to hard-coded {literal}: " + CRASH + "; use "
                              "`{choice}`")
    PARAMETER_DEFAULT = Message("parameter `{name}` defaults to hard-coded {literal}: " + CRASH
                                + "; default to `{choice}`")
    CUDA_CALL = Message("`.cuda()` hard-codes the CUDA device: " + CRASH + "; use `.to(device)` "
                        "with a device chosen at runtime")
    CUDA_CALL_UNUSED = Message("`.cuda()` hard-codes the CUDA device: " + CRASH + "; its result "
                               "is unused, so {unmoved}: assign the result and use `.to(device)` "
                               "with a device chosen at runtime")
    CUDA_TENSOR_TYPE = Message("`{qualified}` is a CUDA-only tensor type: " + CRASH + "; use "
                               "`torch.tensor(..., device=device)`")
    CUDA_TENSOR_TYPE_ALIAS = Message(
        "`{name}` is `{qualified}`, a CUDA-only tensor type: " + CRASH + "; use `.to(device)` "
        "with a device chosen at runtime")
    DEVICE_LITERAL = Message("hard-coded CUDA device {literal}: " + CRASH + "; use `{choice}`")

    code = "TDL002"
    fixable = True
    facts = frozenset(("kinds", "placement", "guards"))
    valid = (
        "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "x = torch.zeros(2, device=device)\n",
        # a worker started once per GPU: without one, spawn(nprocs=0) starts nothing
        "import torch\nimport torch.multiprocessing as mp\n\n\n"
        "def main_worker(gpu):\n    torch.zeros(2).cuda(gpu)\n\n\n"
        "def main():\n    ngpus = torch.cuda.device_count()\n    mp.spawn(main_worker, nprocs=ngpus)\n",
        "import torch\nif torch.cuda.is_available():\n    x = torch.zeros(2).cuda()\n",
        # only a comparison, never used as a device
        "import torch\n\n\ndef on_gpu(t):\n    return t.device.type == 'cuda'\n",
        # PyTorch's accelerator idiom (torch 2.6+) hard-codes nothing
        "import torch\ndevice = torch.accelerator.current_accelerator().type "
        "if torch.accelerator.is_available() else 'cpu'\nmodel = torch.nn.Linear(2, 2).to(device)\n"
        "if device == 'cuda':\n    torch.backends.cudnn.benchmark = True\n",
        # the CUDA tensor type chosen where CUDA is there
        "import torch\ndtype = torch.cuda.FloatTensor if torch.cuda.is_available() else "
        "torch.FloatTensor\nx = torch.zeros(2).type(dtype)\n",
        # an accelerator checked to be CUDA proves CUDA
        "import torch\nif torch.accelerator.is_available() and "
        "torch.accelerator.current_accelerator().type == 'cuda':\n"
        "    model = torch.nn.Linear(2, 2).cuda()\n",
    )
    invalid = (
        ("import torch\nx = torch.zeros(2, device='cuda')\n", ((2, 27),)),
        ("import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n", ((2, 31),)),
        # an accelerator or MPS is no CUDA: a Mac has both checks true and no CUDA
        ("import torch\nif torch.backends.mps.is_available():\n    x = torch.zeros(2).to('cuda')\n",
         ((3, 27),)),
        ("import torch\nif torch.accelerator.is_available():\n"
         "    model = torch.nn.Linear(2, 2).cuda()\n", ((3, 35),)),
        ("import torch\ndevice = 'cuda' if torch.accelerator.is_available() else 'cpu'\n"
         "x = torch.zeros(2, device=device)\n", ((2, 10),)),
        # a private helper that is also handed on as a callback runs unguarded there
        ("import torch\n\n\ndef _up(x):\n    return x.cuda()\n\n\n"
         "def run(x):\n    if torch.cuda.is_available():\n        _up(x)\n"
         "    return list(map(_up, [x]))\n", ((5, 14),)),
        # the stored default is read: it is the device the module uses
        ("import torch\n\n\nclass M(torch.nn.Module):\n"
         "    def __init__(self, device='cuda'):\n        super().__init__()\n"
         "        self.device = device\n\n    def forward(self, x):\n"
         "        return x.to(self.device)\n", ((5, 31),)),
        # the caller's check lets a run that did not ask for CUDA go on
        ("import torch\n\n\ndef _stylize(x):\n    return x.to(torch.device('cuda'))\n\n\n"
         "def main(args, x):\n    if args.cuda and not torch.cuda.is_available():\n"
         "        raise ValueError('no CUDA')\n    return _stylize(x)\n", ((5, 30),)),
        # an index the function picks itself is no caller's choice
        ("import torch\n\n\ndef run(x):\n    gpu = 0\n    return x.cuda(gpu)\n", ((6, 14),)),
        # the CUDA tensor type of old code, under a name of its own
        ("import torch\ndtype = torch.cuda.FloatTensor\nx = torch.zeros(2).type(dtype)\n",
         ((3, 25),)),
        ("import torch\nx = torch.zeros(2).type(torch.cuda.FloatTensor)\n", ((2, 25),)),
    )
    name = "hardcoded-cuda-device"
    summary = "Hard-coded CUDA device with no torch.cuda.is_available() guard"
    # A "cuda"/"cuda:N" literal, a .cuda() call or a torch.cuda.XTensor type.
    required_text = (rf"[\"']cuda\b|{method_call_text('cuda')}"
                     rf"|{CUDA_TENSOR_TYPE_TEXT}")
    could_report_in = staticmethod(hardcoded_cuda_in)  # (in prefilter: no LibCST there)

    def _option_default(self, ctx) -> bool:
        """``device: str = "cuda"`` in the body of a dataclass that the file hands to a
        command-line parser (``api.CONFIG_CLI_PARSERS``: ``@pyrallis.wrap()`` of a function
        taking it, ``tyro.cli(TrainConfig)``, ``HfArgumentParser(TrainConfig)``): the default
        of an option, as argparse's ``default="cuda"`` is (CORL's ``TrainConfig``)."""
        cls = ctx.cls
        if cls is None or ctx.func is not None or ctx.scope is not cls.scope:
            return False
        if not any(last_name(decorator_callee(d.decorator)) == "dataclass"
                   for d in cls.node.decorators):
            return False
        analysis, name = self.analysis, cls.name
        for node in walk_code(analysis.module):
            if isinstance(node, cst.FunctionDef) and any(
                    analysis.qualname(decorator_callee(d.decorator), ctx.scope.module())
                    in api.CONFIG_CLI_PARSERS
                    for d in node.decorators) and any(
                    p.annotation is not None and isinstance(p.annotation.annotation, cst.Name)
                    and p.annotation.annotation.value == name for p in node.params.params):
                return True
            if isinstance(node, cst.Call) and analysis.qualname(
                    node.func, ctx.scope.module()) in api.CONFIG_CLI_PARSERS and any(
                    isinstance(n, cst.Name) and n.value == name
                    for arg in node.args for n in walk_code(arg.value)):
                return True
        return False

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        self.analysis = analysis
        self.reported: set = set()
        collected = analysis.collected
        if analysis.requires_cuda_throughout():
            return  # the file stops without CUDA: GPU-only by design, as it says itself
        # Assignments first: a literal that is both set to a device-named variable and used
        # as a device gets the message that names the variable, whichever use comes first.
        for target, literal, ctx in collected.devices.literal_assignments:
            name = target.value if isinstance(target, cst.Name) else None
            if name and is_device_name(name) and self._is_cuda(literal) \
                    and not self._option_default(ctx) \
                    and not analysis.is_guarded(ctx) \
                    and not analysis.guards.read_only_where_guarded(name, ctx) \
                    and not analysis.guards.falls_back_to_cpu(name, ctx.func):
                yield from self._report(literal, self.DEVICE_VARIABLE(
                    name=name, literal=_quote(literal),
                    choice=self._runtime_choice(literal, ctx.scope)),
                                        CudaLiteral(literal, ctx.scope))
        for site in self._device_call_sites():
            if analysis.is_guarded(site.ctx):
                continue
            for value in self._device_arguments(site):
                yield from self._check_device_value(value, site.ctx, 0)
        # ``torch.device("cuda")`` alone fails nowhere; it is reported where it is used as a
        # device: passed where a device goes (above, through names), the default device of a
        # ``with`` block, returned to callers, or kept in a device-named variable.
        for call, ctx, name in collected.devices.constructed_used:
            if (name is None or is_device_name(name)) and not analysis.is_guarded(ctx):
                yield from self._check_device_value(call, ctx, 0)
        for param, literal, ctx in collected.devices.param_defaults:
            if isinstance(literal, cst.Call):  # device=torch.device("cuda")
                if not analysis.is_guarded(ctx) \
                        and not analysis.default_always_overridden(param.name.value, ctx.func) \
                        and self._param_used_as_device(param.name.value, ctx.func):
                    yield from self._check_device_value(literal, ctx, 0)
                continue
            if self._is_cuda(literal) and not analysis.is_guarded(ctx) \
                    and not analysis.default_always_overridden(param.name.value, ctx.func) \
                    and not analysis.guards.falls_back_to_cpu(param.name.value, ctx.func) \
                    and self._param_used_as_device(param.name.value, ctx.func):
                # a default is evaluated where the def statement runs, outside the body
                outer = ctx.scope.parent or ctx.scope
                yield from self._report(
                    literal, self.PARAMETER_DEFAULT(
                        name=param.name.value, literal=_quote(literal),
                        choice=self._runtime_choice(literal, outer)),
                    CudaLiteral(literal, outer))
        for site in collected.calls_by_name.get("cuda", ()):
            func = site.call.func
            if keyword_value(site.call, "device") is not None:
                continue  # a custom ``cuda(x, device=...)`` helper: the device is passed in
            if not isinstance(func, cst.Attribute) or analysis.is_guarded(site.ctx):
                continue
            if self._index_from_caller(site):
                continue
            receiver_kind = analysis.kind_at(func.value, site)
            if site.statement is not None and not analysis.kinds.is_module(receiver_kind):
                # A module moves in place; anything else returns a copy that this statement
                # throws away. Rewriting it to ``.to(device)`` would keep the result discarded,
                # so there is no fix here: TDL001's assignment comes first where it applies.
                unmoved = "the tensor does not move" if receiver_kind is K.TENSOR else \
                    f"unless `{source_of(func.value)}` is a module nothing moves"
                yield from self._report(func.attr, self.CUDA_CALL_UNUSED(unmoved=unmoved))
                continue
            yield from self._report(func.attr, self.CUDA_CALL(),
                                    CudaCall(site))
        for attribute, ctx in collected.devices.cuda_tensor_types:
            if analysis.is_guarded(ctx):
                continue
            qualified = analysis.qualname(attribute, ctx.scope)
            if qualified and api.CUDA_TENSOR_TYPE_RE.match(qualified):
                yield from self._report(attribute, self.CUDA_TENSOR_TYPE(qualified=qualified))
        for site in collected.calls_by_name.get("type", ()):
            # ``x.type(dtype)`` of ``dtype = torch.cuda.FloatTensor``: the alias of old code
            # (its choice, ``... if use_cuda else torch.FloatTensor``, is another binding)
            given = site.call.args[0].value if site.call.args else None
            if not isinstance(site.call.func, cst.Attribute) or not isinstance(given, cst.Name) \
                    or analysis.is_guarded(site.ctx):
                continue
            qualified = self._cuda_type_alias(given, site.ctx.scope)
            if qualified is not None:
                yield from self._report(given, self.CUDA_TENSOR_TYPE_ALIAS(
                    name=given.value, qualified=qualified))

    def _cuda_type_alias(self, name: cst.Name, scope: Scope) -> Optional[str]:
        """The CUDA tensor type every binding of ``name`` gives (``dtype =
        torch.cuda.FloatTensor``), else None."""
        bindings = scope.lookup(name.value)
        found = None
        for binding in bindings:
            if binding.how != ASSIGN or binding.path or \
                    not isinstance(binding.value, cst.Attribute):
                return None
            found = self.analysis.qualname(binding.value, binding.ctx.scope)
            if not found or not api.CUDA_TENSOR_TYPE_RE.match(found):
                return None
        return found

    def _index_from_caller(self, site: CallSite) -> bool:
        """``x.cuda(gpu)`` where ``gpu`` is a parameter of the enclosing function, or
        ``self.device`` that ``__init__`` only ever sets from one of its parameters: which GPU
        to use is the caller's choice, so the function is written for a GPU by contract
        (ResNeSt's ``torch_dist_sum(gpu, ...)``, its ``MixUpWrapper(..., device)``). Whether a
        machine without CUDA ever reaches it is decided by the caller, which this file may not
        show; a finding here could not be proven."""
        positional = [a.value for a in site.call.args if a.keyword is None and not a.star]
        if not positional:
            return False
        index, scope = positional[0], site.ctx.scope
        if isinstance(index, cst.Name):
            return _is_parameter(index.value, scope)
        if isinstance(index, cst.Attribute) and isinstance(index.value, cst.Name):
            owner = self.analysis.kind_of(index.value, scope)
            if not isinstance(owner, K.Instance):
                return False
            bindings = owner.info.attributes.get(index.attr.value, ())
            return bool(bindings) and all(
                b.how == ASSIGN and not b.path and isinstance(b.value, cst.Name)
                and _is_parameter(b.value.value, b.ctx.scope) for b in bindings)
        return False

    # -- where a device is expected ------------------------------------------------------

    def _device_call_sites(self) -> List[CallSite]:
        collected = self.analysis.collected
        sites = list(collected.devices.keyword_calls)
        sites += self.analysis.call_sites(
            api.DEVICE_TAKING_CALL_NAMES,
            ("torch.device", "torch.set_default_device", *api.MAP_LOCATION_FUNCTIONS))
        return sites

    def _device_arguments(self, site: CallSite):
        call, scope = site.call, site.ctx.scope
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if self._takes_device_keyword(call, scope):
            for key in ("device", "map_location"):
                if key in keywords:
                    yield keywords[key]
        qualified = self.analysis.qualname(call.func, scope)
        if qualified == "torch.device":
            return  # built, not used: reported where it is used (_check_device_value)
        if qualified == "torch.set_default_device":
            if positional:
                yield positional[0]
        elif qualified in api.MAP_LOCATION_FUNCTIONS:
            index = api.MAP_LOCATION_FUNCTIONS[qualified]
            if len(positional) > index:
                yield positional[index]
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "to":
            device = move_device_argument(call)
            if device is not None:
                yield device

    def _takes_device_keyword(self, call: cst.Call, scope) -> bool:
        """Whether ``device=`` in this call is a device that gets used, not configuration."""
        callee = last_name(call.func) or ""
        if callee in _CONFIG_CALLS or "skip" in callee.lower():
            return False
        if callee == "partial" and call.args and "skip" in (last_name(call.args[0].value) or "").lower():
            return False
        if self.analysis.qualname(call.func, scope) in api.DEVICE_TYPE_TOLERANT_CALLS:
            return False  # torch.amp.GradScaler(device="cuda") only warns without CUDA
        kind = self.analysis.kind_of(call.func, scope)
        if isinstance(kind, K.FuncRef):  # a function in this file: look at what it does with it
            return self._param_used_as_device("device", kind.info)
        return True

    def _param_used_as_device(self, name: str, func) -> bool:
        """False when a function only inspects its ``device`` parameter (compares it, takes
        ``getattr(torch, device)``, calls string methods on it) or never uses it."""
        if func is None or name not in func.param_names:
            return True
        scope = func.scope

        def tolerant(call: cst.Call) -> bool:  # get_autocast_dtype(device): a type name only
            return self.analysis.qualname(call.func, scope) in api.DEVICE_TYPE_TOLERANT_CALLS

        for parent, _ in _name_uses(func.node.body, name, tolerant):
            if isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.FormattedStringExpression)):
                continue
            if isinstance(parent, cst.Call) and last_name(parent.func) in _INSPECTING_CALLS:
                continue
            if isinstance(parent, cst.Attribute) and parent.attr.value in _STRING_METHODS:
                continue
            if isinstance(parent, cst.Assign) and self._stored_never_read(parent, func):
                continue
            return True
        return False  # only inspected, or never used

    def _stored_never_read(self, assign: cst.Assign, func) -> bool:
        """``self.device = device`` where neither the class nor a subclass of it in this
        file reads ``self.device`` (Stable Diffusion's ``BERTEmbedder`` keeps its
        ``device="cuda"`` and never uses it)."""
        self_name, cls = func.self_name, func.cls
        if self_name is None or cls is None or not all(
                isinstance(t.target, cst.Attribute) and isinstance(t.target.value, cst.Name)
                and t.target.value.value == self_name for t in assign.targets):
            return False
        names = {t.target.attr.value for t in assign.targets}
        stores = set()
        classes = [cls.node] + [info.node for info in self.analysis.collected.classes
                                if info is not cls and any(
                                    last_name(base.value) == cls.name for base in info.node.bases)]
        for node in (n for root in classes for n in walk_code(root, into_functions=True)):
            if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) \
                    else [node.target]
                stores.update(id(t) for t in targets)
                if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Attribute) \
                        and node.target.attr.value in names:
                    return False  # self.device += ... reads it
            elif isinstance(node, cst.Attribute) and node.attr.value in names and \
                    id(node) not in stores:
                return False
            elif isinstance(node, (cst.SimpleString, cst.ConcatenatedString)) and \
                    string_value(node) in names:
                return False  # getattr(self, "device")
        return True

    def _check_device_value(self, value: cst.BaseExpression, ctx: Ctx, depth: int):
        analysis = self.analysis
        if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
            if self._is_cuda(value):
                yield from self._report(value, self.DEVICE_LITERAL(
                    literal=_quote(value), choice=self._runtime_choice(value, ctx.scope)),
                                        CudaLiteral(value, ctx.scope))
        elif isinstance(value, cst.Call) and analysis.qualname(value.func, ctx.scope) == "torch.device":
            if id(value) in analysis.collected.devices.inspected:
                return  # torch.device("cuda") in devices / (...).type: built, never used
            for arg in value.args:
                if arg.keyword is None or arg.keyword.value == "type":
                    yield from self._check_device_value(arg.value, ctx, depth)
                    break
        elif isinstance(value, cst.IfExp):
            if not analysis.is_guard_test(value.test, ctx.scope):
                # (``X if hasattr(torch, "accelerator") else "cuda"``: the fallback only where
                # the project's torch may lack the accelerator API, see docs/rules/TDL002.md)
                for branch in analysis.live_branches(value, ctx.scope):
                    yield from self._check_device_value(branch, ctx, depth)
        elif isinstance(value, cst.Attribute) and depth < 4:
            owner = analysis.kind_of(value.value, ctx.scope)
            if isinstance(owner, K.Instance):  # self.device = "cuda" ... x.to(self.device)
                for binding in owner.info.attributes.get(value.attr.value, ()):
                    if not analysis.is_guarded(binding.ctx):
                        yield from self._check_device_value(binding.value, binding.ctx, depth + 1)
        elif isinstance(value, cst.Name) and depth < 4:
            # A name bound to a literal and then used as a device: report the literal.
            for binding in ctx.scope.lookup(value.value):
                if binding.how == ASSIGN and not binding.path and \
                        isinstance(binding.value, cst.BaseExpression) and \
                        not analysis.is_guarded(binding.ctx):
                    yield from self._check_device_value(binding.value, binding.ctx, depth + 1)

    # -- helpers -------------------------------------------------------------------------

    def _runtime_choice(self, literal: cst.BaseExpression, scope: Scope) -> str:
        """The expression the message proposes: for ``"cuda"``/``"cuda:0"``, what --fix
        writes (the literal as written, the file's name for torch); for other literals,
        which get no fix, the general form."""
        if isinstance(literal, cst.SimpleString) and string_value(literal) in FIXABLE_LITERALS:
            return runtime_choice(literal, literal.value, self.analysis.torch_alias_at(scope),
                                  self.analysis.torch_version)
        return '"cuda" if torch.cuda.is_available() else "cpu"'

    @staticmethod
    def _is_cuda(literal: cst.BaseExpression) -> bool:
        value = string_value(literal)
        return value is not None and bool(api.CUDA_DEVICE_RE.match(value))

    def _report(self, node: cst.CSTNode, message: str, fix=None):
        if id(node) not in self.reported:
            self.reported.add(id(node))
            yield Violation(node, message, fix)


def runtime_choice(literal: cst.SimpleString, written: str, torch: str,
                   torch_version) -> str:
    """What a fixable ``"cuda"``/``"cuda:0"`` literal becomes (the message proposes the same):
    chosen at runtime, with the literal's quotes and the file's name for torch."""
    quote = literal_quote(literal)
    if _uses_accelerator(literal, torch_version):
        return accelerator_device(torch, quote)
    return f"{written} if {torch}.cuda.is_available() else {quote}cpu{quote}"


def _uses_accelerator(literal: cst.SimpleString, torch_version) -> bool:
    """From torch 2.6 on, ``"cuda"`` becomes the accelerator's device. ``"cuda:0"`` does
    not: the accelerator's device is the current one, device 0 only until the program picks
    another (``torch.cuda.set_device``)."""
    return has_accelerator_api(torch_version) and string_value(literal) == "cuda"


def _is_parameter(name: str, scope: Scope) -> bool:
    """``name`` in ``scope`` is a parameter of its function that the body never rebinds."""
    owner = scope.resolve(name)
    bindings = owner.bindings.get(name, ()) if owner is not None else ()
    return owner is not None and owner.kind == "function" and bool(bindings) and \
        all(b.how == PARAM for b in bindings)


def _quote(literal: cst.BaseExpression) -> str:
    return f'"{string_value(literal)}"'


def _name_uses(root, name: str, skipped_call):
    """(parent, Name) for every load of ``name`` under ``root``; positional arguments are
    reported with their Call as parent so that ``getattr(torch, device)`` reads naturally.
    The arguments of a call for which ``skipped_call`` is true are not uses."""
    stack = [(None, root)]
    while stack:
        parent, node = stack.pop()
        if isinstance(node, cst.Name) and node.value == name:
            yield parent, node
            continue
        if isinstance(node, cst.Call) and skipped_call(node):
            continue
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and node is not root:
            continue
        if isinstance(node, cst.Attribute):  # ``t.device``: the attribute name is not a use
            stack.append((node, node.value))
            continue
        for child in iter_children(node):
            if isinstance(node, cst.Arg) and parent is not None:
                stack.append((parent if node.keyword is None else node, child))
            else:
                stack.append((node, child))


# -- fix helpers ----------------------------------------------------------------------------


def _torch_device_argument(literal: cst.BaseExpression, payload: CudaLiteral,
                           ctx: FixContext) -> bool:
    """Whether torch uses the literal as a device right there (``torch.zeros(...,
    device="cuda")``, ``x.to("cuda")``, ``torch.load(f, map_location="cuda")``): without CUDA
    that raised, so choosing at runtime changes nothing that worked. ``torch.device("cuda")``
    is only a value (it may be compared: ``torch.device("cuda") in devices``), and a default,
    a variable or another function's keyword may be compared or stored rather than used."""
    arg = ctx.parent(literal)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(call, cst.Call) or arg.star:
        return False
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "to":
        return True
    qualified = ctx.analysis.qualname(call.func, payload.scope) or ""
    return qualified.startswith("torch.") and arg.keyword is not None and \
        arg.keyword.value in ("device", "map_location")


def _with_explicit_index(literal: cst.BaseExpression, payload: CudaLiteral,
                         ctx: FixContext) -> bool:
    """``torch.device("cuda", index)``: the index is explicit, as in ``"cuda:1"``."""
    arg = ctx.parent(literal)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(call, cst.Call) or \
            ctx.analysis.qualname(call.func, payload.scope) != "torch.device":
        return False
    return len(call.args) > 1
