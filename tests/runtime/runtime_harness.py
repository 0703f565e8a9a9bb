"""Mechanics of the runtime proofs: load a fixture, run its ``main``, report how it ended.

Fixtures are loaded from their paths under unique module names (never imported as test
modules). A run ends in an :class:`Outcome`: the exception it raised (type, message, and the
line of the fixture's own code that raised it) or none. A run can also happen in a child
process with CUDA hidden (``CUDA_VISIBLE_DEVICES=""``), which is how a machine with a GPU
plays a machine without one; the child runs this file as a script and prints the outcome as
JSON.
"""
from __future__ import annotations

import argparse
import importlib.util
import io
import itertools
import json
import os
import pickletools
import struct
import subprocess
import sys
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
FIXED_SUFFIX = ".fixed.py"

_module_numbers = itertools.count()


def positive_fixtures() -> list:
    """(rule code, path) of every positive fixture, the fixed versions excluded."""
    return sorted((path.parts[-3], path) for path in FIXTURES.glob("TDL*/positive/*.py")
                  if not path.name.endswith(FIXED_SUFFIX))


def fixed_version(path: Path) -> Path:
    return path.with_name(path.stem + FIXED_SUFFIX)


def load_fixture(path: Path):
    """Execute a fixture file as a fresh module with a name no test collector would pick up,
    writing no bytecode beside it: a __pycache__ in fixtures/ is a directory where tests that
    list the fixture folders expect files (test_add_noqa failed on one, under xdist, when a
    proof ran first)."""
    name = f"_tdl_runtime_fixture_{next(_module_numbers)}_{path.stem.replace('.', '_')}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = writes
    return module


@dataclass(frozen=True)
class Outcome:
    """How one run of a fixture's ``main`` ended."""
    error_type: Optional[str] = None  # qualified name of the exception class, None if it ran
    message: str = ""
    # the lines of the fixture's own code in the traceback, outermost call first
    lines: tuple = ()

    @property
    def failed(self) -> bool:
        return self.error_type is not None

    def describe(self) -> str:
        if not self.failed:
            return "ran without an exception"
        where = f" at line {self.lines[-1]}" if self.lines else ""
        return f"raised {self.error_type}: {self.message}{where}"


def _qualified_name(cls: type) -> str:
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _fixture_lines(traceback, path: Path) -> tuple:
    lines = []
    target = str(path.resolve())
    while traceback is not None:
        if str(Path(traceback.tb_frame.f_code.co_filename).resolve()) == target:
            lines.append(traceback.tb_lineno)
        traceback = traceback.tb_next
    return tuple(lines)


def run_main(path: Path, *args) -> Outcome:
    """Load the fixture at ``path`` and call ``main(*args)`` in this process."""
    module = load_fixture(path)
    try:
        module.main(*args)
    except Exception as error:  # the whole point: report whatever torch raised
        return Outcome(_qualified_name(type(error)), str(error),
                       _fixture_lines(error.__traceback__, path))
    return Outcome()


def main_arguments(kind: str, value: Optional[str]) -> tuple:
    """The arguments a fixture's ``main`` takes: a device, nothing, or a checkpoint path."""
    if kind == "device":
        import torch
        return (torch.device(value),)
    if kind == "checkpoint":
        return (value,)
    if kind == "none":
        return ()
    raise ValueError(f"unknown argument kind {kind!r}")


def run_main_without_cuda(path: Path, kind: str, value: Optional[str] = None) -> Outcome:
    """Run the fixture in a child process that sees no CUDA device, as on a CPU-only machine."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    command = [sys.executable, str(Path(__file__).resolve()), str(path), kind]
    if value is not None:
        command.append(value)
    process = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    if process.returncode != 0 or not process.stdout.strip():
        raise RuntimeError(f"the CUDA-less child process broke (exit {process.returncode}):\n"
                           f"{process.stdout}\n{process.stderr}")
    fields = json.loads(process.stdout.strip().splitlines()[-1])
    return Outcome(**dict(fields, lines=tuple(fields["lines"])))


def cuda_available() -> bool:
    import torch
    return torch.cuda.is_available()


def accelerator_built() -> bool:
    """Whether this torch was built with an accelerator (CUDA, ROCm, XPU, MPS...):
    ``torch.accelerator.current_accelerator()`` is None only where it was not."""
    import torch
    return torch.accelerator.current_accelerator() is not None


def cuda_marks() -> list:
    """Marks for a test that needs CUDA: a real GPU where there is one, otherwise the pretend
    accelerator (torchdevlint.runtime, through the pytest plugin's marker), so that the test
    runs in CPU-only CI too."""
    import pytest
    if cuda_available():
        return [pytest.mark.cuda]
    return [pytest.mark.cuda, pytest.mark.fake_accelerator("cuda")]


def pretend_accelerator_active() -> bool:
    from torchdevlint.runtime import is_active
    return is_active()


# --- A checkpoint whose storages are tagged as CUDA, written without CUDA -------------------
#
# torch.save records, for every storage, a persistent id ('storage', type, key, location,
# numel) in the archive's data.pkl; torch.load restores each storage onto ``location`` unless
# map_location says otherwise. A checkpoint written on a GPU differs from one written on a CPU
# only in that location string ("cuda:0" instead of "cpu"), so rewriting it in data.pkl gives
# the file a GPU machine would have written.

def _pickled_string(text: str) -> bytes:
    encoded = text.encode("utf-8")
    return b"X" + struct.pack("<I", len(encoded)) + encoded  # BINUNICODE


def _retag_pickle(data: bytes, old: str, new: str) -> tuple:
    ops = list(pickletools.genops(data))
    pieces, copied, count = [], 0, 0
    for (opcode, argument, start), (_, _, end) in zip(ops, ops[1:]):
        if opcode.name in ("BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8") and argument == old:
            pieces += [data[copied:start], _pickled_string(new)]
            copied, count = end, count + 1
    pieces.append(data[copied:])
    return b"".join(pieces), count


def retag_storages(checkpoint: bytes, location: str = "cuda:0") -> bytes:
    """The same zip checkpoint with every "cpu" location tag replaced by ``location``.

    Only for checkpoints of tensors (a state dict): any other string "cpu" in the pickle would
    be rewritten too.
    """
    source = zipfile.ZipFile(io.BytesIO(checkpoint))
    result = io.BytesIO()
    retagged = 0
    with zipfile.ZipFile(result, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith("/data.pkl"):
                data, retagged = _retag_pickle(data, "cpu", location)
            target.writestr(info, data)
    if not retagged:
        raise ValueError("no storage tagged 'cpu' found in the checkpoint")
    return result.getvalue()


def write_cuda_tagged_checkpoint(path: Path, state: dict) -> Path:
    """Save ``state`` (CPU tensors) at ``path`` as if it had been saved from ``cuda:0``."""
    import torch
    buffer = io.BytesIO()
    torch.save(state, buffer)
    path.write_bytes(retag_storages(buffer.getvalue()))
    return path


def storage_locations(path: Path) -> list:
    """The location tag torch.load sees for each storage of a checkpoint (loads onto the CPU)."""
    import torch
    seen = []

    def record(storage, location):
        seen.append(location)
        return storage

    torch.load(path, map_location=record)
    return seen


def _child_main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("fixture", type=Path)
    parser.add_argument("kind", choices=["device", "checkpoint", "none"])
    parser.add_argument("value", nargs="?")
    options = parser.parse_args(argv)
    outcome = run_main(options.fixture, *main_arguments(options.kind, options.value))
    print(json.dumps(asdict(outcome)))
    return 0


if __name__ == "__main__":
    sys.exit(_child_main())
