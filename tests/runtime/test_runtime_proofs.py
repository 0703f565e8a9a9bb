"""torch itself confirms every rule: each positive fixture fails for its bug, its fix runs."""
from __future__ import annotations

import dataclasses

import pytest

from runtime_harness import cuda_marks, fixed_version, positive_fixtures
from runtime_proofs import (CUDA_CHECKPOINT_ON_CPU, PROOFS, ExpectedError, check_fails_as_promised,
                            check_runs, leniency_problems, proof_gaps, run_fixture)
from torchdevlint.engine import lint_bytes
from torchdevlint.rules import DEFAULT_RULES, RULES_BY_CODE

# (performance rules, which promise no error, are proven by equivalence: EQUIVALENCE_PROOFS)
FIXTURE_CASES = [pytest.param(rule, path, id=f"{rule}-{path.stem}")
                 for rule, path in positive_fixtures() if rule in PROOFS]
# a real GPU where there is one, the pretend accelerator (torchdevlint.runtime) everywhere else
needs_cuda = cuda_marks()
CUDA_CASES = [pytest.param(rule, path, id=f"{rule}-{path.stem}", marks=needs_cuda)
              for rule, path in positive_fixtures() if rule in PROOFS]


def rule_findings(path, rule):
    # the rule itself, opt-in or not, besides the default ones
    result = lint_bytes(path.read_bytes(), str(path), tuple(r for r in DEFAULT_RULES if r.code != rule) + (RULES_BY_CODE[rule],))
    assert result.error is None, result.error
    return [(f.line, f.column) for f in result.findings if f.code == rule]


@pytest.mark.parametrize("rule, path", FIXTURE_CASES)
def test_flagged_code_fails(rule, path, tmp_path):
    proof = PROOFS[rule]
    outcome = run_fixture(proof, path, proof.stand_in, tmp_path)
    check_fails_as_promised(proof, path, proof.stand_in, outcome)


@pytest.mark.parametrize("rule, path", FIXTURE_CASES)
def test_fixed_code_runs(rule, path, tmp_path):
    proof = PROOFS[rule]
    fixed = fixed_version(path)
    assert fixed.exists(), f"{path.name} has no fixed version {fixed.name}"
    check_runs(proof, fixed, proof.stand_in, run_fixture(proof, fixed, proof.stand_in, tmp_path))


@pytest.mark.parametrize("rule, path", FIXTURE_CASES)
def test_linter_flags_only_the_bug(rule, path):
    assert rule_findings(path, rule), f"{path.name}: the linter misses the {rule} bug"
    assert rule_findings(fixed_version(path), rule) == [], f"the fixed {path.name} is still flagged"


@pytest.mark.parametrize("rule, path", CUDA_CASES)
def test_flagged_code_fails_on_cuda(rule, path, tmp_path):
    proof = PROOFS[rule]
    outcome = run_fixture(proof, path, proof.cuda_stand_in, tmp_path, real_cuda_checkpoint=True)
    check_fails_as_promised(proof, path, proof.cuda_stand_in, outcome)


@pytest.mark.parametrize("rule, path", CUDA_CASES)
def test_fixed_code_runs_on_cuda(rule, path, tmp_path):
    proof = PROOFS[rule]
    fixed = fixed_version(path)
    outcome = run_fixture(proof, fixed, proof.cuda_stand_in, tmp_path, real_cuda_checkpoint=True)
    check_runs(proof, fixed, proof.cuda_stand_in, outcome)


def test_every_rule_and_fixture_has_a_runtime_proof():
    """A rule, or a positive fixture, cannot land without a proof (nor a proof without a rule)."""
    assert proof_gaps(PROOFS) == []


def test_a_deleted_proof_is_a_gap():
    for rule in PROOFS:
        remaining = {code: proof for code, proof in PROOFS.items() if code != rule}
        assert f"{rule}: no runtime proof" in proof_gaps(remaining)
    silent = dataclasses.replace(PROOFS["TDL004"], errors={"meta": ()})
    assert "TDL004: promises no error on meta" in proof_gaps(dict(PROOFS, TDL004=silent))


@pytest.mark.parametrize("rule", sorted(PROOFS))
def test_proofs_accept_only_their_bug(rule):
    """Every promised error is specific: look-alike failures and other exception types fail it."""
    assert leniency_problems(PROOFS[rule], PROOFS) == []


@pytest.mark.parametrize("weakened", [
    ExpectedError("RuntimeError", r".*", example="anything"),
    ExpectedError("RuntimeError", r"Tensor on device .* is not on the expected device .*!",
                  example="Tensor on device meta is not on the expected device cpu!"),
    ExpectedError("RuntimeError", r"Expected all tensors to be on the same device.*",
                  example="Expected all tensors to be on the same device, but found at least two "
                          "devices, cuda:0 and cpu!"),
    ExpectedError("RuntimeError", r"Attempting to deserialize object on .*",
                  example=CUDA_CHECKPOINT_ON_CPU.example),
], ids=["anything", "any-meta-mismatch", "any-device-mismatch", "any-deserialize-error"])
def test_a_weakened_proof_is_too_lenient(weakened):
    proof = dataclasses.replace(PROOFS["TDL001"], errors={"meta": (weakened,), "cuda": (weakened,)})
    assert leniency_problems(proof, dict(PROOFS, TDL001=proof))
