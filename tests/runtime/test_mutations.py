"""The proofs detect the bug, not just any exception.

Each case edits a copy of a positive fixture and runs it through the same harness as
test_flagged_code_fails: with the bug gone the harness must report that the code "did not fail
as promised"; with the bug swapped for a different failure it must report the wrong error or
the wrong place.
"""
from __future__ import annotations

import pytest

from runtime_harness import FIXTURES
from runtime_proofs import PROOFS, ProofFailed, check_fails_as_promised, run_fixture


def mutated_copy(rule, name, edits, directory):
    """A copy of fixtures/<rule>/positive/<name>.py with each (old, new) edit made once."""
    source = (FIXTURES / rule / "positive" / f"{name}.py").read_text(encoding="utf-8")
    for old, new in edits:
        assert source.count(old) == 1, f"{old!r} is not in {name}.py exactly once"
        source = source.replace(old, new)
    copy = directory / "mutant" / f"{name}.py"
    copy.parent.mkdir()
    copy.write_text(source, encoding="utf-8")
    return copy


MUTATIONS = [
    # The bug is gone: the flagged code no longer fails.
    pytest.param("TDL001", "eval_loop", [("images.to(device)", "images = images.to(device)")],
                 "did not fail as promised", id="TDL001-assign-the-move"),
    pytest.param("TDL001", "self_attribute",
                 [("self.scale.to(x.device)", "self.scale = self.scale.to(x.device)")],
                 "did not fail as promised", id="TDL001-assign-the-attribute-move"),
    pytest.param("TDL002", "device_literal",
                 [('device = torch.device("cuda")',
                   'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")')],
                 "did not fail as promised", id="TDL002-guard-the-device"),
    pytest.param("TDL002", "module_cuda",
                 [("Classifier().cuda()", "Classifier()"),
                  ("torch.randn(2, 4).cuda()", "torch.randn(2, 4)")],
                 "did not fail as promised", id="TDL002-drop-cuda-calls"),
    pytest.param("TDL003", "load_state_dict",
                 [("torch.load(checkpoint_path)", 'torch.load(checkpoint_path, map_location="cpu")')],
                 "did not fail as promised", id="TDL003-map-location"),
    pytest.param("TDL004", "train_loop",
                 [("            optimizer.zero_grad()\n",
                   "            inputs, targets = inputs.to(device), targets.to(device)\n"
                   "            optimizer.zero_grad()\n")],
                 "did not fail as promised", id="TDL004-move-the-batch"),
    pytest.param("TDL004", "dict_batch",
                 [("model(**batch)", "model(**{k: v.to(device) for k, v in batch.items()})")],
                 "did not fail as promised", id="TDL004-move-the-dict"),
    pytest.param("TDL005", "causal_mask",
                 [("self.mask = torch.triu(torch.ones(context, context), diagonal=1)",
                   'self.register_buffer("mask", torch.triu(torch.ones(context, context), diagonal=1))')],
                 "did not fail as promised", id="TDL005-register-the-buffer"),
    pytest.param("TDL006", "list_comprehension",
                 [("[nn.Linear(d, d) for _ in range(depth)]",
                   "nn.ModuleList([nn.Linear(d, d) for _ in range(depth)])")],
                 "did not fail as promised", id="TDL006-module-list"),
    pytest.param("TDL007", "causal_mask",
                 [("torch.ones(T, T)", "torch.ones(T, T, device=x.device)")],
                 "did not fail as promised", id="TDL007-create-on-the-device"),
    pytest.param("TDL007", "rnn_hidden",
                 [("torch.zeros(x.size(0), self.hidden)",
                   "torch.zeros(x.size(0), self.hidden, device=x.device)")],
                 "did not fail as promised", id="TDL007-hidden-on-the-device"),
    pytest.param("TDL008", "eval_predictions",
                 [("scores.numpy()", "scores.detach().cpu().numpy()")],
                 "did not fail as promised", id="TDL008-copy-to-the-host"),
    pytest.param("TDL011", "noise_arithmetic",
                 [("signal + noise", "signal + noise.to(device)")],
                 "did not fail as promised", id="TDL011-move-the-operand"),
    pytest.param("TDL012", "hasattr_idiom",
                 [('if hasattr(torch, "accelerator") else "cuda"',
                   'if torch.accelerator.is_available() else "cpu"')],
                 "did not fail as promised", id="TDL012-check-the-accelerator"),
    pytest.param("TDL012", "autocast_name",
                 [("accelerator = torch.accelerator.current_accelerator()",
                   'accelerator = torch.accelerator.current_accelerator() or torch.device("cpu")')],
                 "did not fail as promised", id="TDL012-fall-back-to-the-cpu"),
    # The bug is gone and something else fails: the harness names the wrong error.
    # (a host copy that still records history: NumPy refuses it for that, not for its device)
    pytest.param("TDL008", "eval_predictions",
                 [("scores.numpy()", "scores.cpu().numpy()")],
                 "failed with the wrong error", id="TDL008-history-not-device"),
    pytest.param("TDL001", "factory_tensor",
                 [("noise.to(device)", "noise = noise.to(device)"),
                  ("return model(noise)", "return model(noise).sum().item()")],
                 "failed with the wrong error", id="TDL001-meta-item-error"),
    pytest.param("TDL003", "aliased_import",
                 [("load_checkpoint(checkpoint_path)", 'load_checkpoint(checkpoint_path + ".missing")')],
                 "failed with the wrong error", id="TDL003-missing-file"),
    # (an AttributeError of another object than the None)
    pytest.param("TDL012", "check_available",
                 [("torch.accelerator.current_accelerator(check_available=True).type",
                   "torch.ones(1).device_type")],
                 "failed with the wrong error", id="TDL012-another-attribute-error"),
    # A device mix-up of the promised kind, but not the flagged one: the harness names the place.
    pytest.param("TDL012", "hasattr_idiom",
                 [('if hasattr(torch, "accelerator") else "cuda"',
                   'if torch.accelerator.is_available() else "cpu"'),
                  ("    return model(", "    print(torch.accelerator.current_accelerator().index)\n"
                                      "    return model(")],
                 "but not while running flagged code", id="TDL012-another-dereference"),
    pytest.param("TDL006", "list_comprehension",
                 [("[nn.Linear(d, d) for _ in range(depth)]",
                   "nn.ModuleList([nn.Linear(d, d) for _ in range(depth)])"),
                  ("return self.head(x)", "return self.head(x) + torch.ones(2)")],
                 "but not while running flagged code", id="TDL006-another-tensor-on-the-cpu"),
    pytest.param("TDL004", "eval_accuracy",
                 [("model(images.to(device))", "model(images)"),
                  ("(predictions == labels)", "(predictions == labels.to(device))")],
                 "but not while running flagged code", id="TDL004-another-tensor-unmoved"),
]


@pytest.mark.parametrize("rule, name, edits, report", MUTATIONS)
def test_mutated_fixture_is_not_proof(rule, name, edits, report, tmp_path):
    proof = PROOFS[rule]
    mutant = mutated_copy(rule, name, edits, tmp_path)
    outcome = run_fixture(proof, mutant, proof.stand_in, tmp_path)
    with pytest.raises(ProofFailed, match=report):
        check_fails_as_promised(proof, mutant, proof.stand_in, outcome)


def test_every_rule_has_a_mutation():
    bug_removed = {case.values[0] for case in MUTATIONS if case.values[3] == "did not fail as promised"}
    assert bug_removed == set(PROOFS)


def test_unmutated_copy_still_proves(tmp_path):
    """The copying itself does not break a proof: a copy with no edit still fails as promised."""
    proof = PROOFS["TDL004"]
    copy = mutated_copy("TDL004", "eval_accuracy", [], tmp_path)
    outcome = run_fixture(proof, copy, proof.stand_in, tmp_path)
    check_fails_as_promised(proof, copy, proof.stand_in, outcome)
