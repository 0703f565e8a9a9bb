"""TDL003: torch.load (and friends) without map_location.

Fix: pass ``map_location=``. The location is a device variable in scope (``device``, ``*_device``; never one that may be
None) or else ``"cpu"``, quoted as the call's own strings are (else the file's). Safe when the loaded object goes straight into ``load_state_dict()``,
which copies every tensor onto the device of the module's (or optimizer's) own parameters;
unsafe anywhere else, where the loaded tensors would now live on another device than the one
they were saved from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, List, Optional

import libcst as cst

from torchdevlint.analysis import (
    ASSIGN, K, Analysis, CallSite, FunctionInfo, Scope, api, dotted_name, holds, keyword_value,
    last_name, root_name, walk_code,
)
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext
from torchdevlint.fixes.model import Edit, Fix, FixPlan
from torchdevlint.rules.base import Message, Rule, Violation
from torchdevlint.rules.prefilter import unmapped_load_in

_LOAD_NAMES = api.LOAD_CALL_NAMES


@dataclass
class MapLocationFix(FixPlan):
    """The load call that gets ``map_location=``."""

    site: CallSite

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        call = self.site.call
        if not call.args or any(arg.star for arg in call.args) or any(
                arg.keyword is not None and arg.keyword.value == "map_location" for arg in call.args):
            return None
        start, _ = ctx.span(call)
        quote = ctx.quote_near(call)
        location = ctx.device_variable(self.site.ctx.scope, start) or f"{quote}cpu{quote}"
        end = ctx.span(call.args[-1].value)[1]
        return Fix(finding.code, _feeds_load_state_dict(call, ctx),
                   f"load with `map_location={location}`",
                   (Edit(end, end, f", map_location={location}"),))



class LoadWithoutMapLocation(Rule):
    """
    ## What it does
    Reports a call to `torch.load` without `map_location`, through any import form
    (`import torch as T`, `from torch import load`, `from torch import load as L`,
    `torch.serialization.load`), and likewise `torch.jit.load`,
    `torch.hub.load_state_dict_from_url` and `torch.utils.model_zoo.load_url`, which take the same
    argument. A second positional argument (the third for the `hub`/`model_zoo` functions) counts
    as `map_location`.

    ## Why is this bad
    `torch.load` restores every storage onto the device it was saved from. A checkpoint written on a
    GPU fails to load on a machine without CUDA:

    ```
    RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.
    ```

    `weights_only=True` does not help: it restricts what may be unpickled, not where storages go.

    ## Example
    ```python
    model.load_state_dict(torch.load("checkpoint.pt"))
    ```

    ## Use instead
    ```python
    model.load_state_dict(torch.load("checkpoint.pt", map_location="cpu"))
    ```

    `load_state_dict` copies into the module's own parameters, wherever they live, so loading onto
    the CPU is always right there. Elsewhere, pass the device the tensors should end up on.

    ## Fix safety
    `--fix` adds `map_location=` as the last argument: a device variable in scope (`device`,
    `*_device`, bound before the call and never possibly `None`) when there is one, else
    `"cpu"`, in the quotes the call's own strings use (else the file's first one-line string's),
    as TDL002's fix follows the literal it rewrites: `torch.load('m.pt', map_location='cpu')`.

    - **Safe** when the loaded object goes straight into `load_state_dict()`
      (`model.load_state_dict(torch.load(path))`, also `torch.load(path)["model"]`):
      `load_state_dict` copies every tensor onto the device of the module's (or optimizer's) own
      parameters, so where the checkpoint is loaded to does not matter.
    - **Unsafe** anywhere else: the loaded tensors now live on the CPU (or the chosen device)
      instead of on the GPU they were saved from, which can change where later computations run.
    - **No fix** when the call has no arguments or passes `*args`/`**kwargs` (the rule is silent
      then anyway).

    ## Known limits
    A call that passes `*args` or `**kwargs` may carry `map_location` and is not reported. A load
    is not reported when the file itself shows it cannot meet GPU tensors:

    - it reads from a temporary directory the run made (pytest's `tmp_path`, `tmp_path_factory`,
      also through a fixture of the file that returns such a path; `tempfile.mkdtemp()`,
      `TemporaryDirectory()`);
    - a round trip to the same target: an earlier `torch.save` (or another saving call such as
      `fabric.save(path, ...)`, or a helper of the file that saves to its parameter, or a method
      of a class of the file that saves: `stopper.step(score, model)`, whose
      `save_checkpoint` writes `es_checkpoint.pt`) in the same
      function, script or notebook, or, in a test module, in a fixture or helper; or an earlier
      call there of a helper or a class of another file of the project that writes the file
      (`utils.save_model(model, "models", model_name=path)` in one notebook cell, the load of
      `models/<path>` in the next: the project index's `writers`), also an object called
      (`early_stopping(loss, model, path)`, whose `__call__` saves) and a method that saves
      through its base class's helper (`trainer.save(path, model_filename="m.pt")`);
    - it reads the checkpoint Lightning's `ModelCheckpoint` names after the run's own
      `trainer.fit` (`torch.load(checkpoint.best_model_path)`; `api.RUN_CHECKPOINT_PATHS`);
    - the path is built from a value that differs from run to run (`datetime.now()`,
      `time.time()`, `uuid4()`): only the run that named the file can have written it;
    - the file writes that target, or a file of the same name, only from CPU data (`.cpu()`,
      `.numpy()`, `.tolist()`, NumPy arrays, torch factories without `device=`, plain values
      (also a number attribute of an object of a class of the file: every assignment and
      every augmented assignment of it is a Python number, as pfrl's step counters; a value
      restored by the load itself changes nothing; a list attribute is filled by calls its
      assignments do not show, and stays unknown),
      `{k: v.cpu() ...}` (a list or dict is what the code puts into it: `outs = []` then
      `outs.append(model(x))` holds device tensors, and one handed to another call may be
      filled there), FSDP's `full_optim_state_dict`, the `state_dict()` of a data loader, an LR
      scheduler or a GradScaler);
    - the target is a named setting (an attribute with a distinctive name, such as
      `self.mel_statistics_path`) that the file writes through another object
      (`trainer.config.mel_statistics_path`), and every such write is CPU data (issue 28);
    - what a local save helper (`def save_to(obj, path): torch.save(obj, path)`) writes is what
      each call passes, so `save_to({"mean": m.item()}, "stats.pt")` is CPU data and
      `save_to(model.state_dict(), "weights.pt")` is device state, still reported;
    - every save of the project to a file of that name (in the same folder: the project
      index's `saves`) writes CPU data, also a save by a program that puts nothing on an
      accelerator: its file names no device, CUDA or GPU, moves nothing, starts no launcher
      (`Trainer`, `Accelerator`), reads nothing that may hold device tensors itself
      (`torch.load` without `map_location`, `from_pretrained`), and saves in its own code or
      in a function of no parameters (no caller hands it a model), and no project module it
      imports (three deep) puts anything on an accelerator either: ogb's `sgc.py`, which
      writes the `sgc_dict.pt` of CPU embeddings that `mlp.py` loads
      (`fixtures/projects/writer_provenance`);
    - it reads bytes (`torch.load(io.BytesIO(data))`) and every `torch.save` of the file to an
      in-memory buffer writes CPU data: what the program serialised for another of its
      processes (`fixtures/TDL003/negative/memory_buffer.py`); host copies made by mapping a
      collection (`apply_to_collection(x, Tensor, lambda t: t.cpu())`, `tree_map`, `map`) are
      CPU data;
    - it is a method of a `Dataset` (or `Database`) class reading its own storage;
    - what the file does with the loaded value shows it is data: it goes to `torch.from_numpy`,
      whole into the `load_state_dict` of a scheduler, a GradScaler (numbers only) or a data
      loader (its position, on the CPU; known by its kind, not its name), or is assigned
      to a name that calls it a dataset artifact (`train_data`, `data_lists`, `vocab.vectors`,
      `triples`, `tokens`, `cache`: data pipelines produce CPU tensors) or a data loader
      (`train_loader = torch.load(path)`: a pickled DataLoader, its dataset and sampler;
      loss-landscape's `trainloader.dat`), or the function caches it
      (`if exists: x = torch.load(p) else: build x; torch.save(x, p)`);
    - it is test code of a pytest or unittest module (`test_*` functions and `_test` helpers,
      fixtures, `Test*` classes): a suite reads what it wrote or its own CPU fixtures, and its CI
      runs it where it has to pass. A module that imports neither is one when pytest's default
      discovery collects it: a `test_*.py` (or `*_test.py`) file in a `tests` folder with a
      top-level `test*` function and no `__main__` entry point (`testcode.collected_by_pytest`);
    - a function of the file loads, and every `torch.save` of the file writes a CPU state dict
      (after `model.cpu()`, or FSDP's `offload_to_cpu=True`): the file's own checkpoints are
      CPU data.

    A load is not reported either where no machine without CUDA reaches it (issue 28;
    `fixtures/TDL003/negative/cuda_branch.py`), or where the file is known to hold CPU storages:

    - it runs only in the branch where CUDA is there or asked for: the body of `if
      torch.cuda.is_available():` (also `device_count() > 0`, a name bound to such a test, an
      `and` with one, `device.type == "cuda"`), of a flag that asks for CUDA (`if use_cuda:`,
      `if args.cuda:`: without CUDA the user turns it off, as the program's own `.cuda()` fails
      otherwise), after an early exit that proves such a test, or in a worker the file starts
      once per GPU (`mp.spawn(main_worker, nprocs=torch.cuda.device_count())`) and never calls
      otherwise. The `else` of such a test, `if args.gpu is None:`, `if args.no_cuda:` and a
      worker also called directly are still reported (`fixtures/TDL003/positive/cpu_branch.py`);
    - it follows, in its function (or the module, or the notebook), a statement that every run
      reaching it has run and that fails without CUDA: an unconditional `model.cuda()` (also
      `RGAT(...).cuda()`), `x.to("cuda")` (also `x.to(device)` where every binding of `device`
      is `"cuda"` or `torch.device("cuda")`), `torch.cuda.set_device(i)`,
      `torch.set_default_tensor_type("torch.cuda.FloatTensor")`, Lightning's
      `L.Fabric(accelerator="cuda")` or `Trainer(accelerator="gpu")` (they raise without CUDA;
      lit-llama's finetune scripts) (the hard-coded CUDA is TDL002's finding); a move to a
      device chosen at run time or a conditional one proves nothing. The same holds for a load
      in a top-level helper when every call of it that can reach the load, in this file or in
      another file of the project, follows such a statement in its own function: BigGAN's
      `utils.load_weights(G, D, ...)`, called by `train.py` and `sample.py` after
      `G = Generator(**config).cuda()`. A call that passes `None` for a parameter the load
      runs only when it is not None (`if G is not None:`) does not reach it
      (`fixtures/projects/load_after_cuda_use`);
    - it reads published weights known to hold CPU storages (`torch_api.CPU_RELEASE_URL_PREFIXES`:
      PyTorch's own under `https://download.pytorch.org/models/`, Cadene's pretrainedmodels,
      lukemelas' EfficientNet releases; their libraries load them without `map_location` on
      CPU-only machines), also read from a table of the file whose every URL is one
      (`model_urls[f"resnet{n}"]`, `pretrained_settings["xception"][name]["url"]`:
      `fixtures/TDL003/negative/release_tables.py`).
    - it reads a checkpoint the project ships, at a relative path fixed in the code
      (`"models/cifar.pt"`, `os.path.join(os.path.dirname(__file__), "models", "cifar.pt")`,
      beside the file or from the project's root; also a helper's parameter that every call of
      the helper passes such a path), whose storages were all saved on the CPU:
      every storage `torch.save` pickles names its device, read here from the pickle's opcodes
      without torch or running it (`torchdevlint/checkpoints.py`; captum's tutorials,
      pytorch3d's camera graph). One saved on a GPU is reported, and the message names it
      (`fixtures/projects/shipped_checkpoints`); a Git LFS pointer or a file that is not there
      proves nothing.

    What holds at every call of a helper holds in it (issue 28): a load in a function that is
    only called (by a function of the file never handed on as a value, which no other file is
    expected to call) where CUDA is there, by a `Dataset`'s method, or by tests, is judged as
    if it stood there; so is a read of a fixed path, or of a parameter, from caller to caller,
    and a save in a helper happens at each of its calls (`fixtures/TDL003/negative/through_callers.py`).

    These rules come from reviewing every TDL003 finding on 27 public repositories
    ([docs/precision.md](../precision.md)); each is a fixture in
    `fixtures/TDL003/negative/round_trips.py`.

    A save *after* the load (a run that resumes, then saves over the file) is no evidence: the
    load reads what an earlier run wrote, possibly on a GPU. `pickle.load`, `json.load`, `yaml.load`, `np.load` and
    methods named `load` are never reported; a local function or variable named `torch` is not
    mistaken for the module.
    """

    # The kind of finding (its message, as data; the report fills the fields).
    NO_MAP_LOCATION = Message(
        "`{function}()` without `map_location`: a checkpoint saved on a GPU fails to load on a "
        "machine without CUDA (RuntimeError: Attempting to deserialize object on a CUDA "
        "device); pass `map_location=` (for example \"cpu\" or the target device){writer}")

    code = "TDL003"
    fixable = True
    facts = frozenset(("kinds", "devices", "targets", "placement", "project", "guards"))
    valid = (
        "import torch\nstate = torch.load('model.pt', map_location='cpu')\n",
        # a round trip: the file was just written by this function
        "import torch\n\n\ndef roundtrip(t):\n    torch.save(t, 'x.pt')\n"
        "    return torch.load('x.pt')\n",
    )
    invalid = (
        ("import torch\nstate = torch.load('model.pt')\n", ((2, 9),)),
        # bytes the file serialised itself, from device state
        ("import io\nimport torch\n\n\ndef send(model):\n    buffer = io.BytesIO()\n"
         "    torch.save(model.state_dict(), buffer)\n    return buffer.getvalue()\n\n\n"
         "def receive(data):\n    return torch.load(io.BytesIO(data))\n", ((12, 12),)),
    )
    name = "load-without-map-location"
    summary = "torch.load() without map_location fails on a CPU-only machine for GPU checkpoints"
    # The loader is named in the file (torch.load, `from torch.hub import load_url as f`) and
    # qualified names come from an import of torch.
    required_text = (r"\bload(?:_url|_state_dict_from_url)?\b", r"\btorch\b")
    required_calls = api.LOAD_CALL_NAMES  # (every finding is such a call, or an alias of one)
    could_report_in = staticmethod(unmapped_load_in)  # (in prefilter: no LibCST there)

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        # What the file writes, worked out once per file and only when a load is a candidate.
        self._file_saves: Optional[List[_Save]] = None
        self._cpu_file: Optional[bool] = None
        for site in analysis.call_sites(_LOAD_NAMES, api.MAP_LOCATION_FUNCTIONS):
            call = site.call
            qualified = analysis.qualname(call.func, site.ctx.scope)
            if qualified not in api.MAP_LOCATION_FUNCTIONS:
                continue
            if any(arg.star for arg in call.args):
                continue  # *args / **kwargs may carry map_location: unknown
            if any(arg.keyword is not None and arg.keyword.value == "map_location"
                   for arg in call.args):
                continue
            positional = [a for a in call.args if a.keyword is None]
            if len(positional) > api.MAP_LOCATION_FUNCTIONS[qualified]:
                continue  # map_location passed positionally
            if analysis.runs_only_with_cuda(site.ctx):
                continue  # ``if torch.cuda.is_available(): torch.load(p)``: CUDA is there
            if analysis.reached_after_cuda_use(call, site.ctx):
                continue  # ``model = RGAT(...).cuda()`` the line before (or before every call
                # of the helper around it, in any file): no run without CUDA gets here
            if self._reads_what_this_file_wrote(analysis, site):
                continue
            writers = _project_writers(analysis, site)
            if writers and all(kind == "cpu" for kind, _ in writers):
                continue  # every save of the project to that file writes CPU data
            written = [where for kind, where in writers if kind == "device"]
            target = _argument(call, 0, "f")
            shipped = analysis.shipped_checkpoint(target, site.ctx.scope, site.ctx) \
                if target is not None else None
            if shipped is not None and not shipped[1]:
                continue  # the project ships the file, and its storages are on the CPU
            evidence = f" (written from device state in {written[0]})" if written else ""
            if shipped is not None:
                evidence = f" (the project ships {shipped[0]}, whose tensors were saved on " \
                           f"{' and '.join(sorted(shipped[1]))})"
            short = qualified.replace("torch.serialization.", "torch.")
            yield Violation(
                call,
                self.NO_MAP_LOCATION(function=short, writer=evidence),
                fix=MapLocationFix(site),  # --fix adds map_location=
            )

    # -- what the file itself wrote ------------------------------------------------------

    def _reads_what_this_file_wrote(self, analysis: Analysis, load: CallSite) -> bool:
        """The evidence that a load cannot meet GPU tensors, all from this file:

        - it reads from a temporary directory this run made (pytest's ``tmp_path`` and
          ``tmp_path_factory``, also through a fixture of this file; ``tempfile``);
        - it is a round trip: the same function saved to the same target before, or, in a
          test module, a fixture or helper of it did (the same process wrote it, on the
          devices it has);
        - the file writes that target (the same path, or a file of the same name) only from
          CPU data: ``.cpu()`` tensors, NumPy arrays, plain Python values;
        - it is a dataset's own storage (a method of a ``Dataset`` class reading its files).

        A save elsewhere that can hold device tensors is no evidence: resuming a checkpoint
        an earlier run wrote on a GPU is exactly the failure this rule is about.
        """
        target = _argument(load.call, 0, "f")
        if target is None:
            return False
        if analysis.targets.is_cpu_release(analysis.targets.canonical(target, load.ctx.scope)):
            return True  # torchvision's release weights: CPU storages
        urls = analysis.targets.released_urls(target, load.ctx.scope)
        if urls and all(analysis.targets.is_cpu_release(repr(url)) for url in urls):
            return True  # ``model_urls[name]``: every weight of the table is such a release
        if isinstance(target, cst.Attribute) and target.attr.value in api.RUN_CHECKPOINT_PATHS:
            return True  # ``checkpoint.best_model_path``: what this run's ``fit`` saved
        if analysis.holds_where_called(
                load.ctx, lambda ctx: ctx.cls is not None and _is_dataset_class(ctx.cls),
                "dataset"):
            return True  # (also in a helper only a ``Dataset`` method calls)
        if analysis.in_test_code(load.ctx):
            return True
        if _holds_no_device_tensors(analysis, load):
            return True
        if self._reads_own_buffer(analysis, target, load.ctx.scope):
            return True
        func = load.ctx.func
        if self._read_is_own(analysis, target, load.ctx.scope, func, load.order):
            return True
        if _stamped_by_this_run(analysis, target, load.ctx.scope):
            return True
        if _written_earlier_by_project(analysis, load) is not None:
            return True
        return self._file_saves_only_cpu_data(analysis) and func is not None

    def _reads_own_buffer(self, analysis: Analysis, target, scope: Scope) -> bool:
        """``torch.load(io.BytesIO(data))`` in a file whose every ``torch.save`` to an
        in-memory buffer writes CPU data: the bytes are what the file serialised itself, for
        another process of the same program (Lightning's launcher saves
        ``apply_to_collection(metrics, Tensor, lambda t: t.cpu())`` to a buffer in the worker
        and loads the bytes in the main process). Without such a save the bytes come from
        elsewhere: still reported."""
        if not _is_memory_buffer(analysis, target, scope):
            return False
        buffered = [save for save in self._saves(analysis)
                    if save.site is not None and save.value is not None
                    and _is_memory_buffer(analysis, _argument(save.site.call, 1, "f"), save.scope)]
        return bool(buffered) and all(_cpu_only_where_saved(analysis, save) for save in buffered)

    def _read_is_own(self, analysis: Analysis, target, scope: Scope, func, order: int,
                     depth: int = 0) -> bool:
        """``_read_is_here``, or judged where the function is called, from caller to
        caller: ``def load_checkpoint(path): return torch.load(path)`` reads what each call
        passes; a load of a fixed path in a helper reads it at each call of the helper."""
        if self._read_is_here(analysis, target, scope, func, order):
            return True
        if func is None or func.cls is not None or depth > 3:
            return False
        if isinstance(target, cst.Name) and target.value in func.param_names \
                and len(scope.lookup(target.value)) == 1:
            callers = self._callers_reads(analysis, func, target.value)
            return bool(callers) and all(
                self._read_is_own(analysis, *read, depth=depth + 1) for read in callers)
        if any(isinstance(node, cst.Name) and node.value in func.param_names
               for node in walk_code(target)):
            return False  # (a path built from a parameter: judged by that parameter alone)
        sites = analysis.guards.only_call_sites(func.name)
        return bool(sites) and all(
            self._read_is_own(analysis, target, scope, site.ctx.func, site.order, depth + 1)
            for site in sites)

    def _read_is_here(self, analysis: Analysis, target, scope: Scope, func, order: int) -> bool:
        targets = analysis.targets
        read = targets.canonical(target, scope)
        if targets.is_fresh_temp(read):
            return True
        read_names = set(targets.file_names(read))
        test_module = analysis.is_test_module()
        for save in self._saves(analysis):
            # ``copy = io.BytesIO(buf.getvalue())`` reads the buffer ``buf`` was written to
            same = save.target == read or (save.owner is not None and save.target in read)
            if same and save.func is func and save.order < order:
                # saved earlier in the same function (or the same script or notebook body)
                return True
            if same and test_module and save.func is not None and func is not None:
                return True
            if save.value is not None and (same or read_names & set(targets.file_names(save.target))) \
                    and _cpu_only(analysis, save.value, save.scope):
                return True
        # The same setting, carried by another object (``self.stats_path`` read,
        # ``trainer.config.stats_path`` written): own data when every write of it is CPU data.
        setting = targets.setting_name(read)
        written = [save for save in self._saves(analysis)
                   if setting is not None and targets.setting_name(save.target) == setting]
        return bool(written) and all(_cpu_only_where_saved(analysis, save) for save in written)

    @staticmethod
    def _callers_reads(analysis: Analysis, func, name: str):
        index = func.param_names.index(name)
        reads = []
        for site in analysis.collected.calls_by_name.get(func.name, ()):
            callee = analysis.kind_of(site.call.func, site.ctx.scope)
            if not (isinstance(callee, K.FuncRef) and callee.info is func):
                continue
            passed = _argument(site.call, index, name)
            if passed is None:
                return []  # a call we cannot match: no evidence
            reads.append((passed, site.ctx.scope, site.ctx.func, site.order))
        return reads

    def _file_saves_only_cpu_data(self, analysis: Analysis) -> bool:
        """The file's own checkpoints are all CPU data (neural_style saves after
        ``transformer.eval().cpu()``; FSDP full state dicts with ``offload_to_cpu=True``):
        what a function of the same file loads is, by the file's evidence, its own format."""
        memo = self._cpu_file
        if memo is None:
            written = [save for save in self._saves(analysis) if save.value is not None]
            memo = bool(written) and all(
                _is_state_dict(save.value, save.scope) and
                _cpu_only(analysis, save.value, save.scope, site=save) for save in written)
            self._cpu_file = memo
        return memo

    def _saves(self, analysis: Analysis) -> List[_Save]:
        """Every write of this file: ``torch.save(value, target)``, and the target of other
        saving calls (``fabric.save(path, state)``, ``save_checkpoint(state, path)``); a
        helper that saves to its parameter writes what each of its calls passes."""
        if self._file_saves is not None:
            return self._file_saves
        targets = analysis.targets
        saves: List[_Save] = []
        for name, sites in analysis.collected.calls_by_name.items():
            if "save" not in name.lower():
                continue
            for site in sites:
                scope = site.ctx.scope
                qualified = analysis.qualname(site.call.func, scope)
                if qualified in api.SAVE_FUNCTIONS:
                    value, written = _argument(site.call, 0, "obj"), [_argument(site.call, 1, "f")]
                else:
                    value, written = None, [a.value for a in site.call.args if not a.star]
                for expr in written:
                    if expr is None:
                        continue
                    text = targets.canonical(expr, scope)
                    save = _Save(text, value, scope, site.ctx.func, site.order,
                                 _owner_id(expr, scope), site)
                    saves.append(save)
                    saves.extend(_at_callers(analysis, save, expr))
                    saves.extend(self._through_callers(analysis, site.ctx.func, expr, value))
        self._file_saves = saves
        return saves

    @classmethod
    def _through_callers(cls, analysis: Analysis, func, expr, value,
                         depth: int = 0) -> List[_Save]:
        """``def save_weights(model, path): torch.save(..., path)``: each call of the helper
        in this file writes the path it passes, where the call is; a call that passes its
        own parameters on is followed to its callers in turn (issue 28: the function that
        writes, whatever wraps it)."""
        if func is None or not isinstance(expr, cst.Name) or expr.value not in func.param_names \
                or func.cls is not None or depth > 3:
            return []
        index = func.param_names.index(expr.value)
        found = []
        for call_site in analysis.collected.calls_by_name.get(func.name, ()):
            callee = analysis.kind_of(call_site.call.func, call_site.ctx.scope)
            if not (isinstance(callee, K.FuncRef) and callee.info is func):
                continue
            passed = _argument(call_site.call, index, expr.value)
            if passed is not None:
                scope = call_site.ctx.scope
                # what the helper saves, when that is a parameter too: what the call passes
                saved = None
                if isinstance(value, cst.Name) and value.value in func.param_names:
                    saved = _argument(call_site.call, func.param_names.index(value.value),
                                      value.value)
                found.append(_Save(analysis.targets.canonical(passed, scope), saved, scope,
                                   call_site.ctx.func, call_site.order, _owner_id(passed, scope)))
                found.extend(cls._through_callers(analysis, call_site.ctx.func, passed,
                                                  saved, depth + 1))
        return found


def _at_callers(analysis: Analysis, save: "_Save", target, depth: int = 0) -> List["_Save"]:
    """A save to a fixed target in a helper happens at each call of the helper, where the call
    is (``def write(): torch.save(state, "ckpt.pt")`` called before a load of ``ckpt.pt``),
    from caller to caller; so does one in a method of a class of the file, at each call of the
    method (an early-stopping object's ``step()``, which calls ``self.save_checkpoint(model)``:
    dgl's examples); a target built from a parameter (or from ``self``) is
    ``_through_callers``'s."""
    func = save.func
    if func is None or depth > 3 or any(
            isinstance(node, cst.Name) and node.value in func.param_names
            for node in walk_code(target)):
        return []
    if func.cls is None:
        sites = analysis.guards.only_call_sites(func.name) or ()
    else:
        sites = [site for site in analysis.collected.calls_by_name.get(func.name, ())
                 if analysis.placement.method_run(site.call, site.ctx.scope) is func]
    found = []
    for site in sites:
        moved = _Save(save.target, save.value, save.scope, site.ctx.func, site.order,
                      save.owner, save.site)
        found.append(moved)
        found.extend(_at_callers(analysis, moved, target, depth + 1))
    return found


def _stamped_by_this_run(analysis: Analysis, target, scope: Scope, depth: int = 0) -> bool:
    """The path read is built from a value that differs from run to run (a timestamp, a
    random id: ``api.RUN_STAMP_CALLS``), directly or through every binding of a name or
    ``self`` attribute it uses: only the run that made the name can have written the file
    (dgl's HAN ``EarlyStopping``: ``early_stop_{date}_{hour}-{minute}-{second}.pth``)."""
    if depth > 3:
        return False
    nodes = list(walk_code(target))
    attributes = {id(node.attr) for node in nodes if isinstance(node, cst.Attribute)}
    for node in nodes:
        if isinstance(node, cst.Call) and \
                analysis.qualname(node.func, scope) in api.RUN_STAMP_CALLS:
            return True
        if (isinstance(node, cst.Name) and id(node) not in attributes) or (
                isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)):
            bindings = analysis.placement.bindings_of(node, scope)
            if bindings and all(
                    not path and _stamped_by_this_run(analysis, value, value_scope, depth + 1)
                    for value, value_scope, path, _ in bindings):
                return True
    return False


def _written_earlier_by_project(analysis: Analysis, load: CallSite) -> Optional[str]:
    """``file:line`` of a save in another file of the project that the code of the load ran
    before it, in the same function (or script, or notebook): a call of a project helper that
    writes the file read, to a fixed name or to one the call passes
    (``utils.save_model(model, target_dir="models", model_name=path)``), or a call of a
    method of an object of a project class that writes it (``stopper = EarlyStopping();
    stopper.step(acc, model)``, whose ``save_checkpoint`` writes ``es_checkpoint.pt``; or
    ``stopper(loss, model, path)``). What
    the same run wrote on the same machine: a round trip, as within one file. None when
    there is none (``ProjectView.written_by``)."""
    project = analysis.project
    target = _argument(load.call, 0, "f")
    if project is None or target is None:
        return None
    read = _file_names(analysis, target, load.ctx.scope)
    if not read:
        return None
    for sites in analysis.collected.calls_by_name.values():
        for site in sites:
            if site.ctx.func is not load.ctx.func or site.order >= load.order:
                continue
            scope = site.ctx.scope
            callees = [analysis.qualname(site.call.func, scope)]
            # a method of an object the code made, or the object itself called (``stopper =
            # EarlyStopping(); stopper(loss, model, path)``, whose ``__call__`` saves: the
            # Informer family's ``exp_main.py``, issue 28)
            receiver = site.call.func.value if isinstance(site.call.func, cst.Attribute) \
                else site.call.func
            if isinstance(receiver, cst.Name):
                callees += [analysis.qualname(value.func, value_scope)
                            for value, value_scope, path, _ in
                            analysis.placement.bindings_of(receiver, scope)
                            if isinstance(value, cst.Call) and not path]
            # (what an argument names is worked out only for a call of a project writer)
            arguments = {arg.keyword.value if arg.keyword is not None else index: arg.value
                         for index, arg in enumerate(site.call.args) if not arg.star}

            def passed(key, arguments=arguments, scope=scope) -> List[str]:
                value = arguments.get(key)
                return _file_names(analysis, value, scope) if value is not None else []

            for callee in callees:
                if callee:
                    where = project.written_by(callee, read, passed)
                    if where is not None:
                        return where
    return None


def _file_names(analysis: Analysis, expr, scope: Scope) -> List[str]:
    """The file names the strings of ``expr`` name, as far as the file shows them
    (``Targets.canonical``; ``"models/a.pth"`` and ``os.path.join(d, "a.pth")`` name
    ``a.pth``): what the project index matches saves and loads by."""
    from torchdevlint.project_index import file_names
    return file_names(analysis.targets.canonical(expr, scope).split("'")[1::2])


def _project_writers(analysis: Analysis, load: CallSite) -> list:
    """(kind, ``file:line``) of the saves in the project's other files to the file this load
    reads (by its file name): ``cpu`` (``.cpu()`` tensors, NumPy, numbers), ``device`` (a
    moved model's state, ``.cuda()`` tensors) or ``unknown``."""
    project = analysis.project
    target = _argument(load.call, 0, "f")
    if project is None or target is None:
        return []
    return project.writes(_file_names(analysis, target, load.ctx.scope))


@dataclass
class _Save:
    target: str  # canonical text of what is written
    value: Optional[cst.BaseExpression]  # what torch.save writes, None when unknown
    scope: Scope
    func: Optional[FunctionInfo]
    order: int
    owner: Optional[int]  # id of the scope owning the target name (a buffer variable)
    site: Optional[CallSite] = None  # the torch.save call, when it is one of this file


def _cpu_only_where_saved(analysis: Analysis, save: _Save) -> bool:
    """What ``save`` writes is CPU data, a name judged by the assignments that reach the save
    (``stats = {...: x.item()}`` then saved, while another branch loads ``stats``)."""
    value = save.value
    if value is None:
        return False
    if isinstance(value, cst.Name) and save.site is not None:
        bindings = analysis.reaching_bindings(value.value, save.site)
        return bool(bindings) and all(
            b.how == ASSIGN and not b.path and isinstance(b.value, cst.BaseExpression)
            and _cpu_only(analysis, b.value, b.ctx.scope)
            and _fills_cpu_only(analysis, value.value, b, 0) for b in bindings)
    return _cpu_only(analysis, value, save.scope)


def _argument(call: cst.Call, index: int, keyword: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return positional[index] if index < len(positional) else None


def _owner_id(expr, scope: Scope) -> Optional[int]:
    if isinstance(expr, cst.Name):
        owner = scope.resolve(expr.value)
        return id(owner) if owner is not None else None
    return None


_DATA_STORES = ("Dataset", "Database")


def _is_dataset_class(info) -> bool:
    """A dataset (or the database behind one) reads its own processed or downloaded files and
    rows: data, not checkpoints."""
    return info.name.endswith(_DATA_STORES) or any(
        (last_name(base) or "").endswith(_DATA_STORES) for base in info.bases)


# Calls that give CPU data: NumPy, Python values, tensors copied to the host.
_CPU_METHODS = api.HOST_COPY_METHODS



def _cpu_only(analysis: Analysis, expr, scope: Scope, depth: int = 0, site=None) -> bool:
    """Whether ``expr`` is data that holds no device tensor, as far as this file shows."""
    if depth > 4:
        return False
    if site is not None and isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value == "state_dict" and (
                _moved_to_cpu_before(analysis, expr.func.value, site)
                or _offloads_to_cpu(analysis)):
        return True  # ``model.cpu()`` earlier, or FSDP's FullStateDictConfig(offload_to_cpu=True)
    if site is not None and isinstance(expr, cst.Name) and _offloads_to_cpu(analysis):
        bindings = scope.lookup(expr.value)
        if bindings and all(isinstance(b.value, cst.Call) and last_name(b.value.func) == "state_dict"
                            for b in bindings if b.how == ASSIGN):
            return True
    if isinstance(expr, (cst.BaseNumber, cst.BaseString)):
        return True
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value == "state_dict" and not expr.args \
            and _plain_state_owner(analysis, expr.func.value, scope):
        return True  # ``self.train_dataloader.state_dict()``, ``scheduler.state_dict()``
    if isinstance(expr, cst.Name):
        if expr.value in ("None", "True", "False"):
            return True
        bindings = scope.lookup(expr.value)
        return bool(bindings) and all(
            b.how == ASSIGN and not b.path and isinstance(b.value, cst.BaseExpression)
            and _cpu_only(analysis, b.value, b.ctx.scope, depth + 1)
            and _fills_cpu_only(analysis, expr.value, b, depth) for b in bindings)
    if isinstance(expr, cst.Attribute):
        return _number_attribute(analysis, expr, scope)
    if isinstance(expr, cst.BinaryOperation):
        return _cpu_only(analysis, expr.left, scope, depth + 1) and \
            _cpu_only(analysis, expr.right, scope, depth + 1)  # (numbers of numbers)
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        return all(_cpu_only(analysis, e.value, scope, depth + 1) for e in expr.elements)
    if isinstance(expr, cst.Dict):
        return all(isinstance(e, cst.DictElement) and _cpu_only(analysis, e.value, scope, depth + 1)
                   for e in expr.elements)
    if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
        return _cpu_only_in_comprehension(analysis, expr.elt)
    if isinstance(expr, cst.DictComp):
        return _cpu_only_in_comprehension(analysis, expr.value)
    if isinstance(expr, cst.Call):
        qualified = analysis.qualname(expr.func, scope) or ""
        if qualified.startswith(("numpy.", "np.")):
            return True
        if qualified.startswith("torch.") and qualified.rpartition(".")[2] in api.FACTORIES:
            return keyword_value(expr, "device") is None
        chain = expr
        while isinstance(chain, cst.Call) and isinstance(chain.func, cst.Attribute):
            method = chain.func.attr.value
            if method in _CPU_METHODS or (method == "to" and chain.args
                                          and analysis.is_cpu_device(chain.args[0].value, scope)):
                return True  # x.cpu(), model.eval().cpu().state_dict(), t.numpy()
            if method == "full_optim_state_dict":
                return True  # FSDP gathers the optimizer state on the CPU by default
            chain = chain.func.value
        if last_name(expr.func) in api.COLLECTION_MAPPERS and any(
                _maps_to_host(analysis, arg.value, scope) for arg in expr.args):
            return True  # ``apply_to_collection(metrics, Tensor, lambda t: t.cpu())``
        if isinstance(expr.func, cst.Name) and expr.func.value in ("dict", "list", "tuple") \
                and expr.args:
            return all(_cpu_only(analysis, a.value, scope, depth + 1) for a in expr.args)
        callee = analysis.kind_of(expr.func, scope) if depth < 4 else None
        if isinstance(callee, K.FuncRef) and callee.info.cls is None \
                and not callee.info.opaque_return and callee.info.returns:
            # a helper of the file whose every ``return`` is CPU data (issue 28)
            return all(value is not None and _cpu_only(analysis, value, ctx.scope, depth + 1)
                       for value, ctx in callee.info.returns)
        return False
    return False


def _fills_cpu_only(analysis: Analysis, name: str, binding, depth: int) -> bool:
    """Whether what the code puts into the container a name is bound to (``outs = []``, a
    dict or set display) is CPU data too: ``outs.append(model(x))`` or ``outs[k] = y``
    fill it with device tensors, which its display does not show. A name handed to any
    other call may be filled there: nothing known."""
    if not isinstance(binding.value, (cst.List, cst.Dict, cst.Set)):
        return True
    root = binding.ctx.func.node if binding.ctx.func is not None else analysis.module
    scope = binding.ctx.scope
    for node in walk_code(root, into_functions=True):
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and \
                    func.value.value == name and func.attr.value in api.CONTAINER_FILLERS:
                index = api.CONTAINER_FILLERS[func.attr.value]
                values = [a.value for a in node.args if a.keyword is None][index:index + 1] + \
                    [a.value for a in node.args if a.keyword is not None]
                if any(not _cpu_only(analysis, value, scope, depth + 1) for value in values):
                    return False
            elif any(isinstance(arg.value, cst.Name) and arg.value.value == name
                     for arg in node.args) and last_name(func) not in api.CONTAINER_READERS:
                return False  # (``fill(outs)``: filled where this file does not say)
        elif isinstance(node, (cst.Assign, cst.AugAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) \
                else [node.target]
            if any(isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name)
                   and t.value.value == name for t in targets) and \
                    not _cpu_only(analysis, node.value, scope, depth + 1):
                return False  # ``outs[k] = model(x)``
    return True


def _number_attribute(analysis: Analysis, attribute: cst.Attribute, scope: Scope,
                      depth: int = 0) -> bool:
    """``self.optim_t`` of pfrl's DQN: an attribute of an object of a class of the file that
    holds a Python number, as every assignment of it (``self.optim_t = 0``, ``self.steps =
    self.optim_t * 2``) and every augmented one in the file (``self.optim_t += 1``) shows; an
    assignment from the load being judged (``self.t = torch.load(...)``) is what a save wrote
    and changes nothing. Only numbers: a container attribute (``self.losses = []``) is filled
    by calls the assignments do not show (``self.losses.append(loss)``)."""
    bindings = [b for b in analysis.kinds.attribute_assignments(attribute, scope)
                if not (isinstance(b.value, cst.Call) and analysis.qualname(
                    b.value.func, b.ctx.scope) in api.MAP_LOCATION_FUNCTIONS)]
    if not bindings or not all(
            b.how == ASSIGN and not b.path and isinstance(b.value, cst.BaseExpression)
            and _holds_a_number(analysis, b.value, b.ctx.scope, depth + 1) for b in bindings):
        return False
    name = attribute.attr.value
    return all(_holds_a_number(analysis, node.value, None, depth + 1)
               for node in walk_code(analysis.module, into_functions=True)
               if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Attribute)
               and node.target.attr.value == name)


def _holds_a_number(analysis: Analysis, expr, scope: Optional[Scope], depth: int = 0) -> bool:
    """A Python number: a literal, arithmetic of numbers, ``x.item()``, ``len(x)``, a name
    bound only to numbers, a number attribute (``_number_attribute``). Without a ``scope``
    (an augmented assignment found by its text) names are not followed."""
    if depth > 4:
        return False
    if isinstance(expr, cst.UnaryOperation):
        return _holds_a_number(analysis, expr.expression, scope, depth + 1)
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.BinaryOperation):
        return _holds_a_number(analysis, expr.left, scope, depth + 1) and \
            _holds_a_number(analysis, expr.right, scope, depth + 1)
    if isinstance(expr, cst.Call):
        func = expr.func
        return (isinstance(func, cst.Attribute) and func.attr.value == "item"
                and not expr.args) or (isinstance(func, cst.Name) and func.value == "len")
    if isinstance(expr, cst.Name) and scope is not None:
        bindings = scope.lookup(expr.value)
        return bool(bindings) and all(
            b.how == ASSIGN and not b.path and isinstance(b.value, cst.BaseExpression)
            and _holds_a_number(analysis, b.value, b.ctx.scope, depth + 1) for b in bindings)
    if isinstance(expr, cst.Attribute) and scope is not None:
        return _number_attribute(analysis, expr, scope, depth + 1)
    return False


def _is_memory_buffer(analysis: Analysis, expr, scope: Scope, depth: int = 0) -> bool:
    """``io.BytesIO(...)``, or a name every assignment of which is one."""
    if isinstance(expr, cst.Name) and depth == 0:
        bindings = [b for b in scope.lookup(expr.value) if b.how == ASSIGN]
        return bool(bindings) and all(
            not b.path and isinstance(b.value, cst.BaseExpression)
            and _is_memory_buffer(analysis, b.value, b.ctx.scope, 1) for b in bindings)
    return isinstance(expr, cst.Call) and analysis.qualname(expr.func, scope) in api.MEMORY_BUFFERS


def _maps_to_host(analysis: Analysis, function, scope: Scope) -> bool:
    """A function that returns a host copy of its argument: ``lambda t: t.cpu()``,
    ``lambda t: t.detach().cpu()``, ``torch.Tensor.cpu``."""
    if isinstance(function, cst.Lambda):
        return _cpu_only(analysis, function.body, scope, 4)
    return isinstance(function, cst.Attribute) and function.attr.value in _CPU_METHODS \
        and last_name(function.value) == "Tensor"


def _is_state_dict(expr, scope: Scope) -> bool:
    """A model's or optimizer's state: ``m.state_dict()``, ``full_optim_state_dict(...)``, or
    a name bound to one. Only a file whose every save is such a state says what format its
    checkpoints have."""
    if isinstance(expr, cst.Name):
        bindings = [b for b in scope.lookup(expr.value) if b.how == ASSIGN]
        return bool(bindings) and all(_is_state_dict(b.value, b.ctx.scope) for b in bindings)
    return isinstance(expr, cst.Call) and "state_dict" in (last_name(expr.func) or "")


def _moved_to_cpu_before(analysis: Analysis, module, save) -> bool:
    """``transformer.eval().cpu()`` as a statement before the save, in the same function."""
    name = module.value if isinstance(module, cst.Name) else None
    if name is None:
        return False
    for site in analysis.collected.calls_by_name.get("cpu", ()):
        receiver = site.call.func.value if isinstance(site.call.func, cst.Attribute) else None
        while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute):
            receiver = receiver.func.value
        if site.statement is not None and isinstance(receiver, cst.Name) \
                and receiver.value == name and site.ctx.func is save.func and site.order < save.order:
            return True
    return False


def _offloads_to_cpu(analysis: Analysis) -> bool:
    """FSDP state dicts gathered with ``offload_to_cpu=True`` somewhere in the file."""
    for sites in analysis.collected.calls_by_name.values():
        for site in sites:
            for arg in site.call.args:
                if arg.keyword is not None and arg.keyword.value == "offload_to_cpu" \
                        and isinstance(arg.value, cst.Name) and arg.value.value == "True":
                    return True
    return False


# Objects whose state_dict holds only Python numbers: an LR scheduler, a GradScaler.
_PLAIN_STATE_OWNERS = ("scheduler", "scaler", "sched")


def _plain_state_owner(analysis: Analysis, owner, scope: Scope) -> bool:
    """Whether ``owner.state_dict()`` holds no device tensor: an LR scheduler or a GradScaler
    (numbers), or a data loader (a stateful loader's position: sample counts, its sampler's
    and generator's state, on the CPU; verl's ``data.pt`` resume file)."""
    name = (last_name(owner) or "").lower()
    return name.endswith(_PLAIN_STATE_OWNERS) or "scheduler" in name \
        or analysis.kind_of(owner, scope) is K.LOADER


def _holds_no_device_tensors(analysis: Analysis, load: CallSite) -> bool:
    """What the file does with the loaded value shows it is no device checkpoint: it goes to
    ``torch.from_numpy`` (a NumPy array), or into the ``load_state_dict`` of an LR scheduler
    or a GradScaler (numbers only); or the file caches it: ``x = torch.load(p)`` and, where
    it is missing, builds and ``torch.save(x, p)`` (the same value to the same path: data this
    code makes, not a model it trained)."""
    func = load.ctx.func
    body = func.node.body if func is not None else analysis.module
    assigned = None
    for node in walk_code(body):
        if isinstance(node, cst.Assign) and node.value is load.call and len(node.targets) == 1:
            assigned = node.targets[0].target
            break
    names = set()
    if isinstance(assigned, cst.Name):
        names.add(assigned.value)
    into_state_dict = False  # the loaded value, or part of it, restores some object's state
    for node in walk_code(body):
        if not isinstance(node, cst.Call):
            continue
        args = [a.value for a in node.args]
        fed = [a for a in args if a is load.call or _rooted_in(a, names)]
        if not fed:
            continue
        qualified = analysis.qualname(node.func, load.ctx.scope) or ""
        if qualified == "torch.from_numpy" or qualified.startswith("numpy."):
            return True
        if last_name(node.func) == "load_state_dict":
            into_state_dict = True
            whole = any(a is load.call or (isinstance(a, cst.Name) and a.value in names) for a in fed)
            if whole and isinstance(node.func, cst.Attribute):
                # the whole loaded object, not ``ckpt["scheduler"]`` of a checkpoint that also
                # holds the model's state
                if _plain_state_owner(analysis, node.func.value, load.ctx.scope):
                    return True
    if assigned is not None and _names_a_dataset(assigned) and not into_state_dict:
        return True  # ``train_data = torch.load(...)``, ``vocab.vectors = ...``: a dataset artifact
    if isinstance(assigned, cst.Name) and not into_state_dict and \
            analysis.kinds.name_kind(assigned.value, load.ctx.scope) is K.LOADER:
        # ``train_loader = torch.load(path)``: a pickled DataLoader (its dataset and sampler,
        # CPU data; loss-landscape's ``trainloader.dat``, issue 28's fourth sealed set), a
        # loader as the analysis knows one (``kinds``: a loader's name, or its later use)
        return True
    if assigned is not None:
        # A cache: where the file is missing, the same function builds the value and saves
        # it, to the path it loads from, under the very names it loads into
        # (``vectors = torch.load(p)`` / ``torch.save(vectors, p)``): data this code makes.
        # (A ``save()`` method beside a ``load()`` one is no such evidence: the object may
        # hold whatever a user put on a GPU.)
        targets = analysis.targets
        loaded = _names_text(assigned)
        read = targets.canonical(_argument(load.call, 0, "f"), load.ctx.scope)
        for site in analysis.collected.calls_by_name.get("save", ()):
            if site.ctx.func is not func or site.order < load.order:
                continue
            value, path = _argument(site.call, 0, "obj"), _argument(site.call, 1, "f")
            if value is not None and path is not None and _names_text(value) == loaded \
                    and analysis.qualname(site.call.func, site.ctx.scope) in api.SAVE_FUNCTIONS \
                    and targets.canonical(path, site.ctx.scope) == read \
                    and _load_or_build(body, load.call, site.call):
                return True
    return False


def _load_or_build(body, load: cst.Call, save: cst.Call) -> bool:
    """``if exists: x = load(p) else: build x; save(x, p)``: the save runs only where the load
    did not, so it never overwrites what a run trained (a resume saves after training,
    whatever it loaded)."""
    for node in walk_code(body):
        if isinstance(node, cst.If) and isinstance(node.orelse, cst.Else) \
                and holds(node.body, load) and holds(node.orelse, save):
            return True
    return False


# What a file calls the loaded object when it is a dataset artifact, not a model's state:
# data pipelines produce CPU tensors (a DataLoader moves each batch), and the 31 reviewed loads
# into such names on 27 public repositories were all of CPU data (``train_data``,
# ``data_lists``, ``vocab.vectors``, ``triples``); ``metadata`` and ``checkpoint`` are not.
_DATA_WORDS = frozenset(
    "data dataset datasets cache cached vocab vectors triples tokens corpus captions".split())


# Words that say a loaded object is a model's state, whatever else the name says
# (``snapshot_data``, ``best_checkpoint_data``, ``param_data``).
_STATE_WORDS = frozenset("param params weight weights model state checkpoint ckpt snapshot".split())


def _names_a_dataset(target) -> bool:
    """The name has a data word and no word of a model's state; what is loaded into
    it does not go into a ``load_state_dict`` either (checked by the caller)."""
    targets = target.elements if isinstance(target, (cst.Tuple, cst.List)) else None
    if targets is not None:
        return any(_names_a_dataset(element.value) for element in targets)
    words = _name_words(target)
    return bool(_DATA_WORDS & set(words)) and not _STATE_WORDS & set(words)


def _name_words(target) -> List[str]:
    """The words of the names a load is assigned to: ``train_data`` -> train, data."""
    elements = target.elements if isinstance(target, (cst.Tuple, cst.List)) else None
    if elements is not None:
        return [word for element in elements for word in _name_words(element.value)]
    name = last_name(target) or ""
    return [word for word in name.lower().split("_") if word]


def _names_text(expr) -> str:
    """``(data, n)`` and ``data, n`` alike: the dotted names, in order."""
    elements = expr.elements if isinstance(expr, (cst.Tuple, cst.List)) else None
    if elements is not None:
        return ",".join(_names_text(e.value) for e in elements)
    return dotted_name(expr) or "<expr>"


def _rooted_in(expr, names) -> bool:
    """``x``, ``x["model"]``, ``x.state`` for a name ``x`` in ``names``."""
    root = root_name(expr)
    return root is not None and root.value in names


def _cpu_only_in_comprehension(analysis: Analysis, element) -> bool:
    """``{k: v.cpu() for k, v in sd.items()}``: each element ends in a host copy."""
    while isinstance(element, cst.Call) and isinstance(element.func, cst.Attribute):
        if element.func.attr.value in _CPU_METHODS:
            return True
        element = element.func.value
    return False


def _feeds_load_state_dict(call: cst.Call, ctx: FixContext) -> bool:
    for site in ctx.analysis.collected.calls_by_name.get("load_state_dict", ()):
        args = site.call.args
        value = None
        if args and args[0].keyword is None and not args[0].star:
            value = args[0].value
        for arg in args:
            if arg.keyword is not None and arg.keyword.value == "state_dict":
                value = arg.value
        while isinstance(value, cst.Subscript):  # torch.load(f)["model"]
            value = value.value
        if value is call:
            return True
    return False
