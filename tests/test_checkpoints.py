"""checkpoints.storage_locations: the devices a torch.save file's storages were on, read
without torch (TDL003's shipped-checkpoint evidence)."""

from __future__ import annotations

import io
import pickle
import zipfile

import pytest

from torchdevlint.checkpoints import (device_locations, holds_device_storages,
                                      locations_of_file, storage_locations)

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


class _Storage:
    """Stands for a storage: pickled as the persistent id torch.save gives one."""

    def __init__(self, key: str, location: str, legacy: bool = False) -> None:
        self.key, self.location, self.legacy = key, location, legacy


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, _Storage):
            pid = ("storage", "FloatStorage", obj.key, obj.location, 4)
            return pid + ((None,) if obj.legacy else ())
        if obj == "MODULE":
            return ("module", "Linear", "linear.py", "source")
        return None


def _pickled(obj) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=2).dump(obj)
    return buffer.getvalue()


def zip_file(path, obj, folder="archive"):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{folder}/data.pkl", _pickled(obj))
        archive.writestr(f"{folder}/version", "3\n")
    return str(path)


def legacy_file(path, obj):
    path.write_bytes(pickle.dumps(LEGACY_MAGIC, protocol=2) + pickle.dumps(1001, protocol=2)
                     + pickle.dumps({"little_endian": True}, protocol=2) + _pickled(obj)
                     + pickle.dumps(["0"], protocol=2) + b"\x00" * 64)
    return str(path)


@pytest.mark.parametrize("write", [zip_file, legacy_file])
def test_the_locations_of_every_storage(tmp_path, write):
    legacy = write is legacy_file
    state = {"w": _Storage("0", "cpu", legacy), "b": [_Storage("1", "cuda:1", legacy),
                                                     _Storage("2", "cpu", legacy)], "step": 3}
    assert storage_locations(write(tmp_path / "a.pt", state)) == {"cpu", "cuda"}
    only_cpu = {"w": _Storage("0", "cpu", legacy), "again": _Storage("1", "cpu", legacy)}
    assert storage_locations(write(tmp_path / "b.pt", only_cpu)) == {"cpu"}
    assert storage_locations(write(tmp_path / "c.pt", {"epoch": 3, "name": "x"})) == set()


def test_a_legacy_whole_module_names_its_class_by_a_persistent_id_too(tmp_path):
    path = legacy_file(tmp_path / "m.pt", ["MODULE", _Storage("0", "cpu", True)])
    assert storage_locations(path) == {"cpu"}


def test_what_is_no_torch_save_file_says_nothing(tmp_path):
    lfs = tmp_path / "lfs.pt"
    lfs.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 9\n")
    plain = tmp_path / "plain.pkl"
    plain.write_bytes(pickle.dumps({"a": 1}, protocol=2))
    other_zip = tmp_path / "other.zip"
    with zipfile.ZipFile(other_zip, "w") as archive:
        archive.writestr("readme.txt", "hello")
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(open(zip_file(tmp_path / "t.pt", {"w": _Storage("0", "cpu")}),
                               "rb").read()[:40])
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"\x80\x02" + bytes(range(256)) * 4)
    strange = tmp_path / "strange.pt"  # a persistent id that is no storage's
    with zipfile.ZipFile(strange, "w") as archive:
        archive.writestr("archive/data.pkl", _pickled(["MODULE"]).replace(b"module", b"thingy"))
    for path in (lfs, plain, other_zip, truncated, garbage, strange, tmp_path / "absent.pt"):
        assert storage_locations(str(path)) is None, path
        assert locations_of_file(str(path)) is None, path


def test_device_locations():
    assert device_locations(frozenset({"cpu", "meta", "cuda"})) == {"cuda"}
    assert not holds_device_storages(frozenset({"cpu", "meta"}))
    assert holds_device_storages(frozenset({"mps"}))


def test_real_torch_save_files_in_both_formats(tmp_path):
    torch = pytest.importorskip("torch")
    for new_format in (True, False):
        path = tmp_path / f"state_{new_format}.pt"
        module = torch.nn.Linear(3, 2)
        torch.save({"model": module.state_dict(), "whole": module, "epoch": 2}, path,
                   _use_new_zipfile_serialization=new_format)
        assert storage_locations(str(path)) == {"cpu"}
        torch.save({"epoch": 2, "losses": [0.5, 0.25]}, path,
                   _use_new_zipfile_serialization=new_format)
        assert storage_locations(str(path)) == set()


def test_a_changed_file_is_read_again(tmp_path):
    path = zip_file(tmp_path / "a.pt", {"w": _Storage("0", "cpu")})
    assert locations_of_file(path) == {"cpu"}
    zip_file(tmp_path / "a.pt", {"w": _Storage("0", "cuda:0"), "pad": "x" * 100})
    assert locations_of_file(path) == {"cuda"}


def test_a_pickle_larger_than_the_bound_is_given_up_on_not_read(tmp_path, monkeypatch):
    import torchdevlint.checkpoints as checkpoints
    big = {"w": _Storage("0", "cpu", True), "inline": b"x" * 4096}
    path = legacy_file(tmp_path / "big.pt", big)
    assert storage_locations(path) == {"cpu"}
    monkeypatch.setattr(checkpoints, "MAX_PICKLE_BYTES", 1024)
    assert storage_locations(path) is None
    assert storage_locations(zip_file(tmp_path / "big_zip.pt", big)) is None
