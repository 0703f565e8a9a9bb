"""What TDL005 and TDL006 say torch does not see, shown on their fixtures' models.

Every positive fixture of the two rules defines ``build()``, which returns the flagged model.
The flagged version keeps state that ``.to()``, ``parameters()`` and ``state_dict()`` miss;
its fixed version (the rule's fix applied) does not, and for TDL005 keeps ``state_dict()``
unchanged (``persistent=False``), so old checkpoints still load.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn as nn

from conftest import expected_findings
from runtime_harness import (
    cuda_available, cuda_marks, fixed_version, load_fixture, positive_fixtures,
)

META = torch.device("meta")
needs_cuda = [pytest.mark.cuda, pytest.mark.skipif(not cuda_available(), reason="no CUDA device")]


def fixtures_of(rule):
    return [pytest.param(path, id=path.stem) for code, path in positive_fixtures() if code == rule]


def plain_tensors(model: nn.Module) -> dict:
    """Tensors held as plain attributes of any module in ``model`` (not parameters or buffers),
    or as the items of a plain list, tuple or dict attribute (by the attribute's name)."""
    found = {}
    for prefix, module in model.named_modules():
        for name, value in vars(module).items():
            items = [value]
            if not name.startswith("_"):  # (torch's own registries: _parameters, _buffers, ...)
                items = list(value.values()) if isinstance(value, dict) else list(value) \
                    if isinstance(value, (list, tuple)) else [value]
            for item in items:
                if isinstance(item, torch.Tensor) and not isinstance(item, nn.Parameter):
                    found[f"{prefix}.{name}".lstrip(".")] = item
    return found


def hidden_modules(model: nn.Module) -> list:
    """Modules kept in plain lists, tuples or dicts of any module in ``model``."""
    found = []
    for module in model.modules():
        for name, value in vars(module).items():
            if name.startswith("_"):
                continue  # torch's own registries (_modules, _parameters, _buffers)
            items = value.values() if isinstance(value, dict) else value \
                if isinstance(value, (list, tuple)) else ()
            found += [item for item in items if isinstance(item, nn.Module)]
    return found


@pytest.mark.parametrize("path", fixtures_of("TDL005"))
def test_tdl005_attribute_stays_behind_and_its_fix_moves_it(path):
    flagged = load_fixture(path).build().to(META)
    left = {name for name, tensor in plain_tensors(flagged).items() if tensor.device.type == "cpu"}
    assert left, f"{path.name}: every plain tensor moved with the model"
    fixed = load_fixture(fixed_version(path)).build()
    assert not plain_tensors(fixed), f"{fixed_version(path).name} still keeps plain tensors"
    assert {name for name, _ in fixed.named_buffers()} >= left
    # persistent=False: the checkpoint format is what it was
    assert fixed.state_dict().keys() == load_fixture(path).build().state_dict().keys()
    assert all(buffer.device == META for buffer in fixed.to(META).buffers())


@pytest.mark.parametrize("path", fixtures_of("TDL006"))
def test_tdl006_container_is_invisible_and_its_fix_registers_it(path):
    flagged = load_fixture(path).build()
    hidden = hidden_modules(flagged)
    assert hidden, f"{path.name}: no module is kept in a plain container"
    registered = {id(p) for p in flagged.parameters()}
    missed = [p for module in hidden for p in module.parameters() if id(p) not in registered]
    assert missed, "parameters() lists the container's weights"
    saved = {id(t) for t in flagged.state_dict(keep_vars=True).values()}
    assert not any(id(p) in saved for p in missed), "state_dict() saves the container's weights"
    flagged.to(META)
    assert all(p.device.type == "cpu" for p in missed), ".to() moved the container's weights"

    fixed = load_fixture(fixed_version(path)).build()
    assert not hidden_modules(fixed)
    # every weight the flagged model holds is now trained and saved
    assert len(list(fixed.parameters())) == len(list(flagged.parameters())) + len(missed)
    assert len(fixed.state_dict()) > len(flagged.state_dict())
    assert all(p.device == META for p in fixed.to(META).parameters())


# What the rules stay silent on, because torch allows it: a CPU index into a tensor on the
# device, and a 0-dim CPU tensor combined with one.
def _index_and_scalar(device):
    x = torch.randn(3, 4, device=device)
    picked = x[:, torch.tensor([0, 2])]
    scaled = x * torch.tensor(2.0) + torch.zeros(())
    return picked, scaled


def test_cpu_index_and_0_dim_tensor_work_on_meta():
    picked, scaled = _index_and_scalar(META)
    assert picked.shape == (3, 2) and picked.device == META
    assert scaled.shape == (3, 4) and scaled.device == META


@pytest.mark.parametrize("device", [pytest.param("cuda", marks=needs_cuda)])
def test_cpu_index_and_0_dim_tensor_work_on_cuda(device):
    picked, scaled = _index_and_scalar(torch.device(device))
    assert picked.device.type == scaled.device.type == "cuda"


def test_a_1_dim_cpu_tensor_does_not_work_on_meta():
    """The contrast: one dimension is enough to fail, which is why TDL005 needs one."""
    with pytest.raises(RuntimeError, match="is not on the expected device"):
        torch.randn(3, 4, device=META) * torch.tensor([2.0, 2.0, 2.0, 2.0])


CONTAINERS = Path(__file__).resolve().parent.parent / "data" / "tdl005_tensor_containers.py"


def test_tdl005_reports_tensors_kept_in_plain_containers():
    from torchdevlint.engine import lint_source
    from torchdevlint.rules.registry import classes_by_code

    found = lint_source(CONTAINERS.read_text(encoding="utf-8"), CONTAINERS.name,
                        [classes_by_code()["TDL005"]]).findings
    expected = expected_findings(CONTAINERS)
    assert {(f.line, f.column, f.code) for f in found} == expected and len(expected) == 2
    assert all("plain container" in f.message and f.available_fix is None for f in found)


def test_tdl005_container_items_stay_behind_and_fail_on_meta():
    model = load_fixture(CONTAINERS).build().to(META)
    assert all(t.device.type == "cpu" for t in plain_tensors(model).values())
    assert set(plain_tensors(model)) == {"anchors", "scales"}
    with pytest.raises(RuntimeError, match="is not on the expected device"):
        model(torch.rand(2, 4, device=META))


PARAMETER_LIST = Path(__file__).resolve().parent.parent / "data" / "tdl005_parameter_list.py"


def test_tdl005_reports_parameters_kept_in_a_plain_list():
    from torchdevlint.engine import lint_source
    from torchdevlint.rules.registry import classes_by_code

    found = lint_source(PARAMETER_LIST.read_text(encoding="utf-8"), PARAMETER_LIST.name,
                        [classes_by_code()["TDL005"]]).findings
    expected = expected_findings(PARAMETER_LIST)
    assert {(f.line, f.column, f.code) for f in found} == expected and len(expected) == 1
    assert all("holds parameters in a plain container" in f.message and
               "nn.ParameterList(...)" in f.message and f.available_fix is None for f in found)


@pytest.mark.parametrize("marks", [pytest.param(None, marks=cuda_marks(), id="cuda")])
def test_tdl005_parameters_in_a_list_stay_behind_and_an_nn_parameterlist_moves_them(marks):
    # (on the meta device a matmul checks no devices: a GPU, or the pretend accelerator)
    cuda = torch.device("cuda")
    fixture = load_fixture(PARAMETER_LIST)
    model = fixture.build().to(cuda)
    assert list(model.parameters()) == []  # (not registered: nothing to train, nothing moved)
    assert all(w.device.type == "cpu" for w in model.weights)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        fixture.main(cuda)
    fixed = fixture.build()
    fixed.weights = nn.ParameterList(fixed.weights)  # the message's remedy
    fixed = fixed.to(cuda)
    assert len(list(fixed.parameters())) == 3
    assert fixed(torch.randn(2, 4, device=cuda)).device.type == "cuda"


SNAPSHOTS = Path(__file__).resolve().parent.parent / "data" / "tdl005_buffer_snapshots.py"


def test_tdl005_reports_a_list_of_registered_buffers():
    from torchdevlint.engine import lint_source
    from torchdevlint.rules.registry import classes_by_code

    found = lint_source(SNAPSHOTS.read_text(encoding="utf-8"), SNAPSHOTS.name,
                        [classes_by_code()["TDL005"]]).findings
    expected = expected_findings(SNAPSHOTS)
    assert {(f.line, f.column, f.code) for f in found} == expected and len(expected) == 1
    assert all("plain container" in f.message and f.available_fix is None for f in found)


def test_to_replaces_buffers_and_the_list_keeps_the_cpu_copies():
    model = load_fixture(SNAPSHOTS).build()
    assert all(a is b for a, b in zip(model.params, model.buffers()))
    model.to(META)
    assert all(b.device == META for b in model.buffers())
    assert all(t.device.type == "cpu" for t in model.params)
    with pytest.raises(RuntimeError, match="is not on the expected device"):
        model(torch.ones(1, 3, device=META))


RNN_STATE = Path(__file__).resolve().parent.parent / "data" / "tdl005_rnn_state.py"


def test_tdl005_reports_an_rnn_state_kept_as_a_tuple():
    from torchdevlint.engine import lint_source
    from torchdevlint.rules.registry import classes_by_code

    found = lint_source(RNN_STATE.read_text(encoding="utf-8"), RNN_STATE.name,
                        [classes_by_code()["TDL005"]]).findings
    expected = expected_findings(RNN_STATE)
    assert {(f.line, f.column, f.code) for f in found} == expected and len(expected) == 2
    assert all("tuple of tensors" in f.message and "Input and hidden tensors" in f.message
               and f.available_fix is None for f in found)


def test_to_leaves_a_tuple_state_on_the_cpu_and_the_lstm_refuses_it():
    program = load_fixture(RNN_STATE)
    tagger = program.build()
    assert set(plain_tensors(tagger)) == {"hidden"}
    tagger.to(META)
    assert all(t.device.type == "cpu" for t in tagger.hidden)
    with pytest.raises(RuntimeError, match="^Input and hidden tensors are not at the same device"):
        tagger(torch.randn(5, 3, device=META))
    encoder = program.Encoder().to(META)
    with pytest.raises(RuntimeError, match="^Input and hidden tensors are not at the same device"):
        encoder(torch.randn(5, 1, 3, device=META))
