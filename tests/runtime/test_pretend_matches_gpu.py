"""What a real GPU did with the proofs' fixtures (recorded on an H200, data/gpu/), held against
the proofs and against the pretend accelerator, on every CI run without a GPU.

* the proofs accept the GPU's outcomes: each flagged fixture failed there with an error its
  rule promises, on a consequence line, and each fixed version ran;
* the pretend accelerator ends each case exactly as the GPU did (error type, message, the
  fixture's lines), but for the differences listed below with their reasons.

A fixture changed since the recording is left out (its digest no longer matches): record again
on a GPU (tests/runtime/on_gpu.sh, data/gpu/README.md).
"""
from __future__ import annotations

import json

import pytest

from device_outcomes import case_name, digest, record
from runtime_harness import FIXTURES, ROOT, Outcome
from runtime_proofs import PROOFS, check_fails_as_promised, check_runs

RECORDING = ROOT / "tests" / "runtime" / "data" / "gpu" / "proofs-h200.json"
GPU = json.loads(RECORDING.read_text(encoding="utf-8"))

# Cases where the pretend accelerator does not (yet) end as the GPU did, and why.
KNOWN_DIFFERENCES = {
}


def recorded_cases():
    """(rule, path, recorded entry) of every recorded case whose fixture is unchanged."""
    cases = []
    for name, entry in sorted(GPU["outcomes"].items()):
        path = ROOT / name
        if path.exists() and digest(path) == entry["digest"]:
            cases.append(pytest.param(entry["rule"], path, entry, id=name))
    return cases


CASES = recorded_cases()
GPU_CASES = [case for case in CASES if PROOFS[case.values[0]].cuda_stand_in == "cuda"]


def outcome(fields: dict) -> Outcome:
    return Outcome(**dict(fields, lines=tuple(fields["lines"])))


def test_the_recording_is_current():
    """Most recorded fixtures are unchanged since the recording (a stale recording says so
    here): a changed fixture is no longer compared with what the GPU did."""
    assert GPU["environment"]["accelerator"].startswith("NVIDIA")
    assert len(CASES) >= 0.8 * len(GPU["outcomes"]), \
        "most recorded fixtures changed since the GPU recording: record again (data/gpu/README.md)"


def test_the_recording_covers_the_proofs():
    """Most proof fixtures are in the recording. Fixtures added since are proven on the CPU and
    on the pretend accelerator only: a session without a GPU lands them, and this test says so
    (an expected failure naming them) until a session with one records again."""
    from runtime_harness import positive_fixtures
    gpu_played = [path for rule, path in positive_fixtures()
                  if rule in PROOFS and PROOFS[rule].cuda_stand_in in ("cuda", "no-cuda")]
    recorded = {case.values[1] for case in CASES}
    missing = [str(path.relative_to(ROOT)) for path in gpu_played if path not in recorded]
    if len(recorded) < 0.8 * len(gpu_played):
        pytest.xfail(f"{len(missing)} of {len(gpu_played)} proof fixtures have no current GPU "
                     "recording: record again on a GPU (tests/runtime/on_gpu.sh): "
                     + ", ".join(missing))


@pytest.mark.parametrize("rule, path, entry", CASES)
def test_the_proofs_accept_what_the_gpu_did(rule, path, entry):
    proof = PROOFS[rule]
    check_fails_as_promised(proof, path, proof.cuda_stand_in, outcome(entry["flagged"]))
    fixed = path.with_name(path.stem + ".fixed.py")
    check_runs(proof, fixed, proof.cuda_stand_in, outcome(entry["fixed"]))


@pytest.fixture(scope="module")
def pretend():
    """Every recorded GPU case, run now on the pretend accelerator."""
    return record(pretend=True, cases=[case.values[:2] for case in GPU_CASES])["outcomes"]


@pytest.mark.parametrize("rule, path, entry", GPU_CASES)
def test_the_pretend_accelerator_ends_as_the_gpu_did(rule, path, entry, pretend):
    name = case_name(path)
    mine = pretend[name]
    same = all(comparable(mine[label]) == comparable(entry[label]) for label in ("flagged", "fixed"))
    if name in KNOWN_DIFFERENCES:
        assert not same, f"{name} now ends as on the GPU: take it off KNOWN_DIFFERENCES"
        assert mine["fixed"] == entry["fixed"]  # the fixed version runs on both
        return
    assert comparable(mine["flagged"]) == comparable(entry["flagged"]), (mine["flagged"], entry["flagged"])
    assert comparable(mine["fixed"]) == comparable(entry["fixed"]), (mine["fixed"], entry["fixed"])


def comparable(fields: dict) -> dict:
    """An outcome with repeated consecutive lines counted once: a comprehension has a frame of
    its own before Python 3.12 (PEP 709 inlines it), so Python 3.11 here shows line 23 twice
    where the GPU machine's Python 3.12 showed it once (collected_pieces.py)."""
    lines = [line for index, line in enumerate(fields["lines"])
             if index == 0 or fields["lines"][index - 1] != line]
    return dict(fields, lines=lines)


def test_known_differences_are_recorded_cases():
    assert set(KNOWN_DIFFERENCES) <= {case_name(case.values[1]) for case in GPU_CASES}
    assert all((ROOT / name).is_relative_to(FIXTURES) for name in KNOWN_DIFFERENCES)


RNN_CELLS = json.loads((RECORDING.parent / "rnn-cells-h200.json").read_text(encoding="utf-8"))


def test_rnn_cells_end_as_on_the_gpu():
    """Recurrent cells take CUDA's fused path on a GPU (another op, other operands than the CPU
    path): each mixed-device cell fails on the pretend accelerator exactly as it did on the GPU
    (rnn_cells.py)."""
    from rnn_cells import record as record_cells
    assert record_cells(pretend=True)["outcomes"] == RNN_CELLS["outcomes"]
