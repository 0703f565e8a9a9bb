"""The pretend accelerator against torch's OpInfo database (issue 29, acceptance 2).

For every op in ``torch.testing._internal.common_methods_invocations.op_db`` and each of its
sample inputs (float32 where the op has it, else its first dtype):

1. *all inputs on the pretend accelerator*: the op (and its backward, where it has one) must
   run without a device error: any is a false alarm;
2. *one input left on the CPU* (each tensor input in turn, the others on the accelerator): a
   real GPU raises for most; a sample the pretend accelerator lets through is listed with the
   reason a real GPU accepts it (a 0-dim CPU tensor is a CPU scalar to TensorIterator; indices
   may stay on the CPU; the op moves or ignores that input itself) or, failing one, as
   unexplained.

Samples that fail on the plain CPU too (with every input there) are left out: they say
nothing about devices.

    python benchmarks/runtime_opinfo.py                  # every op (several minutes)
    python benchmarks/runtime_opinfo.py --ops 40 --seed 1 --samples 3
    python benchmarks/runtime_opinfo.py --json result.json

On a machine with a GPU, ``--record`` writes, for every case (all inputs on the accelerator, and
each input left on the CPU in turn), how it ended: on the real GPU (``--accelerator real``) or
on the pretend one (``--accelerator pretend``, run with the GPU hidden: ``CUDA_VISIBLE_DEVICES=``).
``--compare REAL PRETEND`` lists where the two disagree: the pretend accelerator's fidelity,
measured against a GPU rather than argued from ATen's sources.

    python benchmarks/runtime_opinfo.py --record real.jsonl --accelerator real
    CUDA_VISIBLE_DEVICES= python benchmarks/runtime_opinfo.py --record pretend.jsonl --accelerator pretend
    python benchmarks/runtime_opinfo.py --compare real.jsonl pretend.jsonl

``--modules`` records torch's nn modules (ModuleInfo) the same way: each module moved with all
its inputs on the accelerator, left on the CPU with its inputs moved, and moved with each input
left on the CPU in turn (modules take GPU paths their ops alone don't show: fused RNN cells,
cuDNN, oneDNN convolution of a CPU input):

    python benchmarks/runtime_opinfo.py --modules --record real.jsonl --accelerator real

tests/runtime/test_runtime_opinfo.py runs a small sample of ops in CI.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
import types
import unittest
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEVICE_ERROR = re.compile(
    r"Expected all tensors to be on the same device|indices should be either on cpu|"
    r"Input and (hidden|parameter) tensors are not at the same device|"
    r"Input type \(.*\) and (weight|bias) type \(.*\) should be the same|"
    r"can't convert cuda:\d+ device type tensor to numpy|"
    # kernels' own device checks, as a GPU words them (masked_fill_, block_diag, the autograd
    # engine's check of a gradient)
    r"expected self and mask to be on the same device|masked_fill_: Expected inputs to be on "
    r"same device|input tensors must all be on the same device|"
    r"invalid gradient at index \d+ - expected device")

# what a real GPU did with each case (--record on an H200), where recorded
GPU_RECORDING = ROOT / "tests" / "runtime" / "data" / "gpu" / "opinfo-h200.jsonl"


CPU_SCALAR = "0-dim CPU tensor: a CPU scalar to a GPU kernel (TensorIterator)"


def load_op_db():
    """torch's OpInfo list."""
    return _torch_testing("common_methods_invocations").op_db


def load_module_db():
    """torch's ModuleInfo list: nn modules, how to build them and what to call them on."""
    return _torch_testing("common_modules").module_db


def _torch_testing(name: str):
    """A module of torch.testing._internal. It imports expecttest for its TestCase base class
    only; where that is not installed a stand-in gives it unittest's."""
    import importlib
    try:
        import expecttest  # noqa: F401
    except ImportError:
        stand_in = types.ModuleType("expecttest")
        stand_in.TestCase = unittest.TestCase
        sys.modules["expecttest"] = stand_in
    import torch.backends
    frozen = torch.backends.flags_frozen()
    module = importlib.import_module(f"torch.testing._internal.{name}")
    if not frozen and torch.backends.flags_frozen():
        # torch's test utilities freeze the cudnn flags (disable_global_flags) on import: give
        # the rest of the process (a training loop setting cudnn.benchmark) its flags back
        torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True
    return module


@dataclass
class Report:
    ops: int = 0
    samples: int = 0
    sparse: int = 0
    false_alarms: List[dict] = field(default_factory=list)
    mixed: int = 0
    mixed_raised: int = 0
    accepted: List[dict] = field(default_factory=list)  # one input on the CPU, no error

    @property
    def raise_rate(self) -> float:
        return self.mixed_raised / self.mixed if self.mixed else 1.0

    @property
    def raise_rate_without_scalars(self) -> float:
        """The share that raises of the samples whose CPU input is not a CPU scalar."""
        counted = self.mixed - self.reasons().get(CPU_SCALAR, 0)
        return self.mixed_raised / counted if counted else 1.0

    def reasons(self) -> dict:
        counts = {}
        for item in self.accepted:
            counts[item["reason"]] = counts.get(item["reason"], 0) + 1
        return counts


def _tensors(sample):
    """Paths (where, key) to every tensor of a sample: its input, args and kwargs, one level
    into lists and tuples."""
    import torch
    paths = []

    def visit(value, path):
        if isinstance(value, torch.Tensor):
            paths.append(path)
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                if isinstance(item, torch.Tensor):
                    paths.append(path + (index,))

    visit(sample.input, ("input",))
    for index, value in enumerate(sample.args):
        visit(value, ("args", index))
    for key, value in sample.kwargs.items():
        visit(value, ("kwargs", key))
    return paths


def _get(sample, path):
    value = {"input": sample.input, "args": sample.args, "kwargs": sample.kwargs}[path[0]]
    if path[0] == "input":
        rest = path[1:]
    else:
        value = value[path[1]]
        rest = path[2:]
    for key in rest:
        value = value[key]
    return value


def _moved(sample, keep_on_cpu=None):
    """(input, args, kwargs) with every tensor on the pretend accelerator but ``keep_on_cpu``."""
    import torch

    def convert(value, path):
        if isinstance(value, torch.Tensor):
            if path == keep_on_cpu:
                return value.detach().clone().requires_grad_(value.requires_grad)
            moved = value.detach().to("cuda")
            return moved.requires_grad_(value.requires_grad) if value.is_leaf else moved
        if isinstance(value, (list, tuple)):
            items = [convert(item, path + (index,)) if isinstance(item, torch.Tensor) else item
                     for index, item in enumerate(value)]
            return type(value)(items) if isinstance(value, list) else tuple(items)
        return value

    source = convert(sample.input, ("input",))
    args = [convert(value, ("args", index)) for index, value in enumerate(sample.args)]
    kwargs = {key: convert(value, ("kwargs", key)) for key, value in sample.kwargs.items()}
    return source, args, kwargs


def _run(op, source, args, kwargs, backward):
    import torch
    out = op(source, *args, **kwargs)
    if backward:
        outputs = [item for item in (out if isinstance(out, (list, tuple)) else [out])
                   if isinstance(item, torch.Tensor) and item.requires_grad
                   and item.dtype.is_floating_point]
        if outputs:
            sum(item.sum() for item in outputs).backward()
    return out


# Ops that never combine the data of the input in question with the others, so that a GPU
# accepts it anywhere (checked against their implementations in ATen).
SHAPE_ONLY = "reads only the shape of the other input (CompositeImplicit view/reshape/expand)"
ACCEPTED_BY_OP = {
    "view_as": SHAPE_ONLY, "reshape_as": SHAPE_ONLY, "expand_as": SHAPE_ONLY,
    "broadcast_tensors": "returns one view per input: nothing is combined (device_check NoCheck)",
    "narrow": "reads the 0-dim start tensor's value with .item(), which any device allows",
    "tensor_split": "tensor_indices_or_sections must be a CPU tensor: ATen reads it on the host "
                    "(the sample with it on the accelerator is itself invalid on a GPU)",
}


def _gpu_outcomes() -> dict:
    table = {}
    if GPU_RECORDING.is_file():
        for line in GPU_RECORDING.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            for case, outcome in entry["outcomes"].items():
                table[f"{entry['op']} #{case}"] = outcome
    return table


GPU_RAN = "a real GPU ran it too (recorded on an H200, tests/runtime/data/gpu/)"


def _reason(op, sample, path, tensor, number=None, recorded=None) -> str:
    """Why a real GPU accepts this input on the CPU (what the pretend accelerator followed)."""
    name = op.name
    if recorded:
        case = f"{op.name}.{op.variant_test_name}".rstrip(".") + f" #{number}:cpu=" + "/".join(map(str, path))
        if recorded.get(case) == "ok" and tensor.dim() != 0:
            return GPU_RAN
    if tensor.dim() == 0:
        return CPU_SCALAR
    if name in ACCEPTED_BY_OP:
        return f"{name}: {ACCEPTED_BY_OP[name]}"
    if name.startswith(("index", "_unsafe_index")) or "index" in str(path) or name in (
            "__getitem__", "take_along_dim") and path != ("input",):
        return "indices may stay on the CPU"
    if tensor.numel() == 0:
        return "empty CPU tensor the op does not read"
    return "unexplained"


def sweep(op_db, samples_per_op: int = 3, backward: bool = True, on_op=None) -> Report:
    import torch
    from torchdevlint.runtime import fake_accelerator

    report = Report()
    recorded = _gpu_outcomes()
    for op in op_db:
        dtype = torch.float32 if torch.float32 in op.supported_dtypes("cpu") else next(
            iter(op.supported_dtypes("cpu")), None)
        if dtype is None:
            continue
        report.ops += 1
        grad = backward and op.supports_autograd and dtype.is_floating_point
        try:
            samples = list(op.sample_inputs("cpu", dtype, requires_grad=grad))[:samples_per_op]
        except Exception:  # an op whose samples cannot be built here (a missing library)
            continue
        for number, sample in enumerate(samples):
            try:  # the op must run on the plain CPU first
                _run(op, sample.input, list(sample.args), dict(sample.kwargs), grad)
            except Exception:
                continue
            paths = _tensors(sample)
            if any(_get(sample, path).layout != torch.strided for path in paths):
                report.sparse += 1  # sparse tensors have no storage to carry the device
                continue
            report.samples += 1
            with fake_accelerator():
                try:
                    _run(op, *_moved(sample), grad)
                except Exception as error:
                    if DEVICE_ERROR.search(str(error)):
                        report.false_alarms.append({"op": op.name, "sample": number,
                                                    "error": str(error)[:300]})
                if len(paths) < 2:
                    continue
                for path in paths:
                    report.mixed += 1
                    try:
                        _run(op, *_moved(sample, keep_on_cpu=path), grad)
                    except Exception as error:
                        if DEVICE_ERROR.search(str(error)):
                            report.mixed_raised += 1
                            continue
                        raised = f"{type(error).__name__}: {str(error)[:200]}"
                    else:
                        raised = None
                    tensor = _get(sample, path)
                    report.accepted.append({"op": op.name, "sample": number,
                                            "on_cpu": "/".join(map(str, path)),
                                            "shape": list(tensor.shape),
                                            "reason": _reason(op, sample, path, tensor, number,
                                                              recorded),
                                            "other_error": raised})
        if on_op is not None:
            on_op(op, report)
    return report


def _outcome(op, source, args, kwargs, grad) -> str:
    """How one run ended: "ok", or the error's type and message (the first line, numbers of
    memory addresses aside, which differ from run to run)."""
    try:
        _run(op, source, args, kwargs, grad)
    except Exception as error:
        return _ended(error)
    return "ok"


def _ended(error: Exception) -> str:
    """An outcome of an error: its type and the first line of its message."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {first[:300]}"


def record(op_db, accelerator: str, samples_per_op: int, backward: bool, output: Path) -> int:
    """Write one JSON line per op: {case: outcome} for every sample that runs on the plain CPU,
    with all its inputs on the accelerator ("all") and with each one left on the CPU."""
    import contextlib

    import torch
    from torchdevlint.runtime import fake_accelerator

    if accelerator == "real" and not torch.cuda.is_available():
        raise SystemExit("--accelerator real needs a visible GPU")
    cases = 0
    with output.open("w", encoding="utf-8") as sink:
        for op in op_db:
            dtype = torch.float32 if torch.float32 in op.supported_dtypes("cpu") else next(
                iter(op.supported_dtypes("cpu")), None)
            if dtype is None:
                continue
            grad = backward and op.supports_autograd and dtype.is_floating_point
            torch.manual_seed(0)
            try:
                samples = list(op.sample_inputs("cpu", dtype, requires_grad=grad))[:samples_per_op]
            except Exception:
                continue
            outcomes = {}
            for number, sample in enumerate(samples):
                try:
                    _run(op, sample.input, list(sample.args), dict(sample.kwargs), grad)
                except Exception:
                    continue
                paths = _tensors(sample)
                if any(_get(sample, path).layout != torch.strided for path in paths):
                    continue
                context = fake_accelerator() if accelerator == "pretend" else contextlib.nullcontext()
                with context:
                    outcomes[f"{number}:all"] = _outcome(op, *_moved(sample), grad)
                    if len(paths) > 1:
                        for path in paths:
                            key = f"{number}:cpu=" + "/".join(map(str, path))
                            outcomes[key] = _outcome(op, *_moved(sample, keep_on_cpu=path), grad)
            cases += len(outcomes)
            sink.write(json.dumps({"op": f"{op.name}.{op.variant_test_name}".rstrip("."),
                                   "outcomes": outcomes}) + "\n")
            sink.flush()
    return cases


def _module_tensors(args, kwargs):
    """Paths ("args", i[, j]) / ("kwargs", key[, j]) to every tensor a module is called with, one
    level into lists and tuples (an LSTM's (h, c))."""
    import torch
    paths = []
    for where, items in (("args", list(enumerate(args))), ("kwargs", list(kwargs.items()))):
        for key, value in items:
            if isinstance(value, torch.Tensor):
                paths.append((where, key))
            elif isinstance(value, (list, tuple)):
                paths += [(where, key, index) for index, item in enumerate(value)
                          if isinstance(item, torch.Tensor)]
    return paths


def _module_outcome(build, args, kwargs, backward, move_module, keep_on_cpu=None,
                    move_inputs=True) -> str:
    """How one call of a fresh module ends (see _outcome): the module on the accelerator or not,
    every tensor it is called with on the accelerator (``move_inputs``) but ``keep_on_cpu``."""
    sample = types.SimpleNamespace(input=None, args=list(args), kwargs=dict(kwargs))
    try:
        module = build()
        if move_module:
            module = module.to("cuda")
        if move_inputs:
            _, args, kwargs = _moved(sample, keep_on_cpu)
        _run(lambda _, *a, **k: module(*a, **k), None, args, kwargs, backward)
    except Exception as error:
        return _ended(error)
    return "ok"


def record_modules(module_db, accelerator: str, samples_per_module: int, backward: bool,
                   output: Path) -> int:
    """As record(), for torch's nn modules (ModuleInfo): one JSON line per module, its cases
    "all" (module and inputs on the accelerator), "module=cpu" (the module left on the CPU,
    where it holds tensors) and each input left on the CPU. Modules take paths on a GPU that
    their ops alone don't show (fused RNN cells, cuDNN): the OpInfo cases miss those."""
    import contextlib

    import torch
    from torchdevlint.runtime import fake_accelerator

    if accelerator == "real" and not torch.cuda.is_available():
        raise SystemExit("--accelerator real needs a visible GPU")
    cases = 0
    with output.open("w", encoding="utf-8") as sink:
        for info in module_db:
            if torch.float32 not in info.supported_dtypes("cpu"):
                continue
            torch.manual_seed(0)
            try:
                inputs = list(info.module_inputs_func(info, device="cpu", dtype=torch.float32,
                                                      requires_grad=False, training=True))
            except Exception:
                continue
            outcomes = {}
            for number, sample in enumerate(inputs[:samples_per_module]):
                if sample.forward_input is None:
                    continue
                ctor, call = sample.constructor_input, sample.forward_input

                def build(info=info, ctor=ctor):
                    return info.module_cls(*ctor.args, **ctor.kwargs)

                args, kwargs = tuple(call.args), dict(call.kwargs)
                if _module_outcome(build, args, kwargs, backward, False, move_inputs=False) != "ok":
                    continue  # it must run on the plain CPU first
                paths = _module_tensors(args, kwargs)
                context = fake_accelerator() if accelerator == "pretend" else contextlib.nullcontext()
                with context:
                    outcomes[f"{number}:all"] = _module_outcome(build, args, kwargs, backward, True)
                    if build().state_dict():
                        outcomes[f"{number}:module=cpu"] = _module_outcome(
                            build, args, kwargs, backward, False)
                    for path in paths:  # (one input alone on the CPU meets the module's weights)
                        key = f"{number}:cpu=" + "/".join(map(str, path))
                        outcomes[key] = _module_outcome(build, args, kwargs, backward, True,
                                                        keep_on_cpu=path)
            cases += len(outcomes)
            sink.write(json.dumps({"op": f"module:{info.name}", "outcomes": outcomes}) + "\n")
            sink.flush()
    return cases


def _device_error(outcome: str) -> bool:
    return outcome != "ok" and DEVICE_ERROR.search(outcome) is not None


def compare(real_path: Path, pretend_path: Path) -> dict:
    """Each case in both recordings, by what the two did: the same outcome, the same kind
    (both raised a device error, in other words; or both ran) but other words, or not."""
    def load(path):
        table = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            for case, outcome in entry["outcomes"].items():
                table[f"{entry['op']} #{case}"] = outcome
        return table

    real, pretend = load(real_path), load(pretend_path)
    kinds = {}
    for case in sorted(set(real) & set(pretend)):
        a, b = real[case], pretend[case]
        if a == b:
            kind = "same outcome"
        elif _device_error(a) and _device_error(b):
            kind = "both a device error, other words"
        elif _device_error(a) and not _device_error(b):
            kind = "MISSED: the GPU raises a device error, the pretend one " + (
                "runs" if b == "ok" else "raises another error")
        elif _device_error(b):
            kind = "FALSE ALARM: the pretend one raises a device error, the GPU " + (
                "runs" if a == "ok" else "raises another error")
        elif a == "ok" or b == "ok":
            kind = "one runs, the other raises a non-device error"
        else:
            kind = "both raise non-device errors, other words"
        kinds.setdefault(kind, []).append((case, a, b))
    return {"real": len(real), "pretend": len(pretend), "kinds": kinds}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=0, help="a random sample of this many ops (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samples", type=int, default=3, help="sample inputs per op")
    parser.add_argument("--no-backward", action="store_true")
    parser.add_argument("--json", type=Path, help="write the full report here")
    parser.add_argument("--record", type=Path, metavar="JSONL",
                        help="write every case's outcome here (see --accelerator)")
    parser.add_argument("--accelerator", choices=("real", "pretend"), default="pretend",
                        help="with --record: a real GPU, or the pretend one (hide the GPU)")
    parser.add_argument("--modules", action="store_true",
                        help="with --record: torch's nn modules (ModuleInfo) instead of its ops")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("REAL", "PRETEND"),
                        help="compare two --record files, a real GPU's and the pretend one's")
    parser.add_argument("--shard", default="0/1", metavar="I/N",
                        help="only every N-th op, from the I-th (to run N processes side by side)")
    parser.add_argument("--show", type=int, default=10,
                        help="with --compare: cases shown per kind of disagreement")
    args = parser.parse_args(argv)
    if args.compare:
        result = compare(*args.compare)
        print(f"{result['real']} cases recorded on the GPU, {result['pretend']} on the pretend one")
        for kind, cases in sorted(result["kinds"].items(), key=lambda item: -len(item[1])):
            print(f"{len(cases):6d}  {kind}")
            if kind != "same outcome":
                for case, a, b in cases[:args.show]:
                    print(f"          {case}\n            GPU:     {a}\n            pretend: {b}")
        return 0

    import torch
    if args.modules:
        if not args.record:
            parser.error("--modules goes with --record")
        modules = load_module_db()[int(args.shard.split("/")[0])::int(args.shard.split("/")[1])]
        cases = record_modules(modules, args.accelerator, args.samples, not args.no_backward,
                               args.record)
        print(f"torch {torch.__version__}: {cases} module cases on the {args.accelerator} "
              f"accelerator written to {args.record}")
        return 0
    op_db = load_op_db()
    ops = list(op_db)
    if args.ops:
        ops = random.Random(args.seed).sample(ops, min(args.ops, len(ops)))
    shard, shards = map(int, args.shard.split("/"))
    ops = ops[shard::shards]
    if args.record:
        cases = record(ops, args.accelerator, args.samples, not args.no_backward, args.record)
        print(f"torch {torch.__version__}: {cases} cases on the {args.accelerator} accelerator "
              f"written to {args.record}")
        return 0
    report = sweep(ops, args.samples, not args.no_backward)
    print(f"torch {torch.__version__}: {report.ops} ops, {report.samples} samples that run on the CPU "
          f"({report.sparse} sparse ones left out)")
    print(f"all inputs on the pretend accelerator: {len(report.false_alarms)} false alarms")
    for item in report.false_alarms:
        print(f"  FALSE ALARM {item['op']} #{item['sample']}: {item['error']}")
    print(f"one input left on the CPU: {report.mixed_raised}/{report.mixed} raise "
          f"({100 * report.raise_rate:.1f}%)")
    scalars = report.reasons().get(CPU_SCALAR, 0)
    print(f"  not counting 0-dim CPU inputs (CPU scalars, which a GPU accepts): "
          f"{report.mixed_raised}/{report.mixed - scalars} raise ({100 * report.raise_rate_without_scalars:.1f}%)")
    for reason, count in sorted(report.reasons().items(), key=lambda item: -item[1]):
        print(f"  accepted, {count:4d}: {reason}")
    unexplained = report.reasons().get("unexplained", 0)
    print(f"  unexplained (a device error a GPU raises that the pretend one misses): {unexplained}")
    for item in report.accepted:
        if item["reason"] == "unexplained":
            print(f"    unexplained: {item['op']} #{item['sample']} {item['on_cpu']} "
                  f"shape {item['shape']}" + (f" ({item['other_error']})" if item["other_error"] else ""))
    if args.json:
        args.json.write_text(json.dumps(dict(asdict(report), raise_rate=report.raise_rate,
                                             raise_rate_without_scalars=report.raise_rate_without_scalars),
                                        indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
