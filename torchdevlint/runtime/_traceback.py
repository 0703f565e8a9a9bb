"""Tracebacks that end in the user's code: the pretend accelerator's frames are left out.

An error raised by the pretend accelerator passes through this package and through torch's
mode machinery (``torch/overrides.py``, ``torch/utils/_python_dispatch.py``); a real GPU's
error comes straight out of the C++ kernel. Dropping those frames gives the traceback a real
GPU gives: the user's line, then torch's Python code (``nn.Linear.forward``) if any.
"""
from __future__ import annotations

import os
import types

_HERE = os.path.dirname(os.path.abspath(__file__))
_TORCH_MACHINERY = (os.path.join("torch", "overrides.py"),
                    os.path.join("torch", "utils", "_python_dispatch.py"),
                    os.path.join("torch", "_ops.py"),
                    os.path.join("torch", "utils", "_contextlib.py"),
                    # the modes' handlers run with dynamo disabled, which wraps them
                    os.path.join("torch", "_compile.py"),
                    os.path.join("torch", "_dynamo", "eval_frame.py"))


def is_machinery(filename: str) -> bool:
    if filename.startswith("<frozen "):  # runpy, importlib: how the script was started
        return True
    path = os.path.abspath(filename)
    return path.startswith(_HERE + os.sep) or path.endswith(_TORCH_MACHINERY)


def pruned(traceback):
    """``traceback`` without the machinery's frames (the same object if it has none)."""
    entries = []
    current = traceback
    while current is not None:
        entries.append(current)
        current = current.tb_next
    kept = [entry for entry in entries if not is_machinery(entry.tb_frame.f_code.co_filename)]
    if len(kept) == len(entries) or not kept:
        return traceback
    rebuilt = None
    for entry in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return rebuilt


def prune_traceback(error: BaseException) -> BaseException:
    """Drop the machinery's frames from ``error``'s traceback, in place."""
    if error.__traceback__ is not None:
        error.__traceback__ = pruned(error.__traceback__)
    return error
