"""TDL003's shipped-checkpoint evidence under real torch: the locations that
``checkpoints.storage_locations`` reads without torch are the ones torch.load hands to
``map_location``, the fixture project's GPU checkpoint fails on this CPU-only torch with the
error the rule promises, and the fix (``map_location="cpu"``) loads it."""
from __future__ import annotations

import pytest
import torch

from runtime_harness import ROOT
from torchdevlint.checkpoints import storage_locations

MODELS = ROOT / "fixtures" / "projects" / "shipped_checkpoints" / "models"


def locations_torch_sees(path) -> set:
    seen = set()

    def record(storage, location):
        seen.add(location.split(":")[0])
        return storage

    torch.load(path, map_location=record, weights_only=False)
    return seen


@pytest.mark.parametrize("name", ["cpu_weights.pt", "gpu_weights.pt"])
def test_the_reader_agrees_with_torch(name):
    assert storage_locations(str(MODELS / name)) == locations_torch_sees(MODELS / name)


def test_the_shipped_gpu_checkpoint_fails_here_and_its_fix_loads_it():
    assert not torch.cuda.is_available()
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        torch.load(MODELS / "gpu_weights.pt")
    state = torch.load(MODELS / "gpu_weights.pt", map_location="cpu")
    assert {tensor.device.type for tensor in state.values()} == {"cpu"}
    assert set(torch.load(MODELS / "cpu_weights.pt")) == {"weight", "bias"}


def test_the_reader_agrees_with_torch_on_files_torch_writes(tmp_path):
    for new_format in (True, False):
        path = tmp_path / f"m_{new_format}.pt"
        torch.save({"m": torch.nn.Linear(2, 2), "n": 3, "t": torch.arange(3)[1:]}, path,
                   _use_new_zipfile_serialization=new_format)
        assert storage_locations(str(path)) == locations_torch_sees(path) == {"cpu"}
