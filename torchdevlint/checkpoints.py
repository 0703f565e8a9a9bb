"""Where the tensors of a file written by ``torch.save`` were, read without torch.

A project that ships a checkpoint (captum's tutorials load ``models/cifar_torchvision.pt``,
pytorch3d's ``data/camera_graph.pth``) settles TDL003's question itself: every storage that
``torch.save`` pickles carries the device it was on, as the persistent id
``("storage", storage_type, key, location, numel)`` (``torch/serialization.py``,
``_save`` and the legacy ``_legacy_save``, which adds a view's metadata). Reading those ids
needs no torch and runs no pickled code: ``pickletools.genops`` walks the opcodes, and a
small stack machine rebuilds only the strings, numbers and tuples that make an id.

Bounded: the new (zip) format's ``data.pkl`` is the object graph without the tensor bytes
(kilobytes for a model of hundreds of tensors). The legacy format puts its object pickle
before the bytes, so only the pickles before them are read. Either is read only up to
``MAX_PICKLE_BYTES`` (``_Bounded``). A larger pickle, a Git LFS pointer, a plain pickle or
anything unreadable gives None: nothing is known.
"""

from __future__ import annotations

import functools
import os
import pickletools
import zipfile
from typing import BinaryIO, FrozenSet, Optional

# torch.serialization.MAGIC_NUMBER: the first pickle of a legacy torch.save file.
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
MAX_PICKLE_BYTES = 64 << 20
_STRINGS = frozenset(("STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "BINUNICODE",
                      "SHORT_BINUNICODE", "BINUNICODE8"))
_NUMBERS = frozenset(("INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4"))
_GETS = frozenset(("GET", "BINGET", "LONG_BINGET"))
_PUTS = frozenset(("PUT", "BINPUT", "LONG_BINPUT"))
_MARK = object()  # (MARK on the emulated stack)
# Locations that load anywhere: the CPU, and meta tensors, which hold no data.
_HOST_LOCATIONS = frozenset(("cpu", "meta"))


class _Unknown(Exception):
    """The pickle is not one whose storages this module can name."""


def storage_locations(path: str) -> Optional[FrozenSet[str]]:
    """The device types (``"cpu"``, ``"cuda"``, ...) of the storages the ``torch.save``
    file at ``path`` holds; empty when it holds no tensor (numbers, strings, NumPy arrays);
    None when it is no ``torch.save`` file this can read."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                member = next((info for info in archive.infolist()
                               if info.filename.endswith("data.pkl")
                               and info.filename.count("/") == 1), None)
                if member is None or member.file_size > MAX_PICKLE_BYTES:
                    return None
                with archive.open(member) as stream:
                    return frozenset(_locations(_Bounded(stream)))
        with open(path, "rb") as raw:
            if raw.read(1) != b"\x80":
                return None  # (not a pickle of protocol 2 or later: not torch.save's)
            raw.seek(0)
            stream = _Bounded(raw)
            if _first_value(stream) != _LEGACY_MAGIC:
                return None
            _first_value(stream)  # the protocol version
            _first_value(stream)  # sys_info
            return frozenset(_locations(stream))
    except Exception:  # noqa: BLE001 (untrusted bytes: whatever fails, nothing is known)
        return None


def locations_of_file(path: str) -> Optional[FrozenSet[str]]:
    """``storage_locations``, read once per version of the file in a process (a notebook
    folder's tutorials load the same shipped model many times)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return _cached(path, stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _cached(path: str, size: int, mtime: int) -> Optional[FrozenSet[str]]:
    return storage_locations(path)


def holds_device_storages(locations: FrozenSet[str]) -> bool:
    """Whether storages of these locations fail to load without their accelerator."""
    return bool(device_locations(locations))


def device_locations(locations: FrozenSet[str]) -> FrozenSet[str]:
    """The locations that fail to load without their accelerator (not the CPU, not meta)."""
    return frozenset(location for location in locations if location not in _HOST_LOCATIONS)


class _Bounded:
    """A stream that gives at most ``MAX_PICKLE_BYTES`` in all: a pickle that holds large
    inline data (a NumPy array pickled into a legacy file's object graph) is given up on
    instead of read into memory (``pickletools.genops`` reads each argument whole)."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.left = MAX_PICKLE_BYTES

    def _take(self, data: bytes) -> bytes:
        self.left -= len(data)
        return data

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > self.left:
            raise _Unknown("larger than a pickle of storages is")
        return self._take(self.stream.read(size))

    def readline(self) -> bytes:
        return self._take(self.stream.readline(min(self.left, 1 << 16) + 1))

    def tell(self) -> int:
        return MAX_PICKLE_BYTES - self.left


def _first_value(stream: BinaryIO):
    """The value of a pickle that holds one number (or something else: ``None``); the stream
    is left after its STOP."""
    value = None
    for opcode, arg, _ in pickletools.genops(stream):
        if opcode.name in _NUMBERS:
            value = arg
        elif opcode.name == "STOP":
            return value
    raise _Unknown("no STOP")


def _locations(stream: BinaryIO):
    """The device type of each storage the pickle names by a persistent id."""
    stack: list = []
    memo: dict = {}
    for opcode, arg, _ in pickletools.genops(stream):
        name = opcode.name
        if name in _STRINGS or name in _NUMBERS:
            stack.append(arg)
        elif name in _GETS:
            stack.append(memo.get(arg))
        elif name in _PUTS:
            memo[arg] = stack[-1] if stack else None
        elif name == "MEMOIZE":
            memo[len(memo)] = stack[-1] if stack else None
        elif name == "MARK":
            stack.append(_MARK)
        elif name == "TUPLE":
            stack.append(tuple(_pop_to_mark(stack)))
        elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            count = int(name[-1])
            if len(stack) < count:
                raise _Unknown("stack underflow")
            items = stack[-count:]
            del stack[-count:]
            stack.append(tuple(items))
        elif name == "BINPERSID":
            if not stack:
                raise _Unknown("stack underflow")
            pid = stack.pop()
            if not (isinstance(pid, tuple) and pid[:1] == ("module",)):
                yield _location_of(pid)  # (the legacy format names a module's class so)
            stack.append(None)
        elif name == "PERSID":
            raise _Unknown("protocol 0 persistent id")  # (torch.save writes protocol 2)
        elif name == "STOP":
            return
        else:
            _apply(opcode, stack)
    raise _Unknown("no STOP")


def _location_of(pid) -> str:
    if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"
            and isinstance(pid[3], str)):
        raise _Unknown("a persistent id that is no storage")
    return pid[3].split(":")[0]


def _pop_to_mark(stack: list) -> list:
    items = []
    while stack:
        item = stack.pop()
        if item is _MARK:
            items.reverse()
            return items
        items.append(item)
    raise _Unknown("no MARK")


def _apply(opcode, stack: list) -> None:
    """Any other opcode, by its declared stack effect: what it takes off the stack (through
    the MARK, for those that take a slice) and as many unknown values as it leaves."""
    before = opcode.stack_before
    if pickletools.markobject in before:
        _pop_to_mark(stack)
        below = before.index(pickletools.markobject)
    else:
        below = len(before)
    if len(stack) < below:
        raise _Unknown("stack underflow")
    if below:
        del stack[-below:]
    stack.extend([None] * len(opcode.stack_after))
