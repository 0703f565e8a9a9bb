"""How every runtime proof's fixture ends on a real GPU, and on the pretend one, side by side.

The runtime proofs (test_runtime_proofs.py) check each flagged fixture's error against a
pattern. This records the *exact* outcome of every flagged fixture and its fixed version (error
type, message, the fixture's lines in the traceback) so that a run on a real GPU and a run on
the pretend accelerator (torchdevlint.runtime) can be compared case by case:

    python tests/runtime/device_outcomes.py record OUT.json            # a real GPU if visible
    python tests/runtime/device_outcomes.py record --pretend OUT.json  # the pretend one
    python tests/runtime/device_outcomes.py compare GPU.json PRETEND.json

``tests/runtime/data/gpu_outcomes.json`` is such a recording made on a real GPU;
test_pretend_matches_gpu.py compares the pretend accelerator with it on every CI run.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

# the runtime suite's helpers, and tests/conftest.py which they import
sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]

from runtime_harness import ROOT, cuda_available, fixed_version, positive_fixtures  # noqa: E402
from runtime_proofs import PROOFS, run_fixture  # noqa: E402

# Every stand-in but "no-accelerator" (TDL012), which needs a torch built without any
# accelerator and so never runs where a GPU is. "cuda" is a GPU playing the accelerator;
# "no-cuda" a machine without one: on a GPU machine a child process with CUDA hidden, under
# the pretend accelerator its CPU-only phase. (Those two may differ by build: a CUDA build that
# sees no GPU says "No CUDA GPUs are available" where a CPU-only build says "Torch not compiled
# with CUDA enabled"; the proofs accept both.)
COMPARED_STAND_INS = ("cuda", "no-cuda")


def case_name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def digest(path: Path) -> str:
    """What the recording was made from: the fixture and its fixed version, byte for byte."""
    sha = hashlib.sha256(path.read_bytes())
    fixed = fixed_version(path)
    if fixed.exists():
        sha.update(fixed.read_bytes())
    return sha.hexdigest()[:16]


def gpu_cases(stand_ins=COMPARED_STAND_INS) -> list:
    """(rule, path) of every proof fixture that runs on a GPU machine."""
    return [(rule, path) for rule, path in positive_fixtures()
            if rule in PROOFS and PROOFS[rule].cuda_stand_in in stand_ins]


def record_case(rule: str, path: Path) -> dict:
    proof = PROOFS[rule]
    entry = {"rule": rule, "digest": digest(path)}
    for label, target in (("flagged", path), ("fixed", fixed_version(path))):
        with tempfile.TemporaryDirectory() as work:
            outcome = run_fixture(proof, target, proof.cuda_stand_in, Path(work),
                                  real_cuda_checkpoint=cuda_available())
        entry[label] = dict(asdict(outcome), lines=list(outcome.lines))
    return entry


def environment(pretend: bool) -> dict:
    import torch
    info = {"torch": torch.__version__, "python": sys.version.split()[0],
            "accelerator": "pretend cuda (torchdevlint.runtime)" if pretend else None}
    if not pretend:
        info["accelerator"] = torch.cuda.get_device_name(0)
    return info


def record(pretend: bool, cases=None, stand_ins=COMPARED_STAND_INS) -> dict:
    if not pretend and not cuda_available():
        raise SystemExit("no CUDA device is visible: record --pretend, or run this on a GPU")
    context = contextlib.nullcontext()
    if pretend:
        from torchdevlint.runtime import fake_accelerator
        context = fake_accelerator("cuda")
    with context:
        outcomes = {case_name(path): record_case(rule, path)
                    for rule, path in (gpu_cases(stand_ins) if cases is None else cases)}
        return {"environment": environment(pretend), "outcomes": outcomes}


def differences(reference: dict, other: dict) -> list:
    """(case, what) for every case whose outcome differs, or that one recording lacks."""
    found = []
    for case in sorted(set(reference) | set(other)):
        if case not in reference or case not in other:
            found.append((case, "recorded in only one of the two"))
            continue
        for label in ("flagged", "fixed"):
            a, b = reference[case][label], other[case][label]
            if a != b:
                found.append((case, f"{label}: {describe(a)}  <>  {describe(b)}"))
    return found


def describe(outcome: dict) -> str:
    if outcome["error_type"] is None:
        return "ran"
    return f"{outcome['error_type']}: {outcome['message']} (lines {outcome['lines']})"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="run every case here and write the outcomes")
    rec.add_argument("--pretend", action="store_true", help="on the pretend accelerator")
    rec.add_argument("--stand-in", action="append", choices=COMPARED_STAND_INS,
                     help="only the cases of this stand-in (\"no-cuda\" starts a process a case "
                          "on a GPU machine: minutes)")
    rec.add_argument("--update", action="store_true",
                     help="replace these cases in OUTPUT and keep the others recorded there")
    rec.add_argument("--missing", action="store_true",
                     help="only the cases OUTPUT lacks or recorded from another version of the "
                          "fixture (implies --update): what a GPU session records after proof "
                          "fixtures were added or changed without one")
    rec.add_argument("output", type=Path)
    cmp_ = commands.add_parser("compare", help="list the cases whose outcomes differ")
    cmp_.add_argument("reference", type=Path)
    cmp_.add_argument("other", type=Path)
    args = parser.parse_args(argv)
    if args.command == "record":
        stand_ins = tuple(args.stand_in or COMPARED_STAND_INS)
        cases = None
        if args.missing and args.output.exists():
            args.update = True
            kept = json.loads(args.output.read_text(encoding="utf-8"))["outcomes"]
            cases = [(rule, path) for rule, path in gpu_cases(stand_ins)
                     if kept.get(case_name(path), {}).get("digest") != digest(path)]
        result = record(args.pretend, cases, stand_ins)
        if args.update and args.output.exists():
            kept = json.loads(args.output.read_text(encoding="utf-8"))
            if kept["environment"] != result["environment"]:
                raise SystemExit(f"{args.output} was recorded on {kept['environment']}, not here")
            result["outcomes"] = dict(kept["outcomes"], **result["outcomes"])
        args.output.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        failed = sum(1 for entry in result["outcomes"].values() if entry["flagged"]["error_type"])
        ran = sum(1 for entry in result["outcomes"].values() if not entry["fixed"]["error_type"])
        print(f"{len(result['outcomes'])} cases on {result['environment']['accelerator']} "
              f"(torch {result['environment']['torch']}): {failed} flagged fixtures failed, "
              f"{ran} fixed versions ran")
        return 0
    a = json.loads(args.reference.read_text(encoding="utf-8"))
    b = json.loads(args.other.read_text(encoding="utf-8"))
    found = differences(a["outcomes"], b["outcomes"])
    print(f"{a['environment']}  vs  {b['environment']}")
    for case, what in found:
        print(f"  {case}: {what}")
    differing = {case for case, _ in found}
    print(f"{len(set(a['outcomes']) | set(b['outcomes'])) - len(differing)} cases agree, "
          f"{len(differing)} differ")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
