"""Replacing a file atomically: a temporary file in the same folder, then a rename, so that a
reader (or a crash) sees the old contents or the new ones, never half of them."""

from __future__ import annotations

import os
from typing import Optional


def replace_file(target: str, data: bytes, mode: Optional[int] = None, prefix: str = ".tmp-",
                 suffix: str = "", durable: bool = False) -> None:
    import tempfile  # (here: a warm run, which writes nothing, never imports it)
    directory, name = os.path.split(target)
    handle, temporary = tempfile.mkstemp(dir=directory or ".", prefix=prefix, suffix=suffix)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            if durable:  # user files: on disk before the rename makes them visible
                stream.flush()
                os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
