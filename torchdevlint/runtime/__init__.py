"""A pretend accelerator: code runs on the CPU as if a GPU were there, and device bugs fail.

While :func:`fake_accelerator` is active, ``torch.cuda.is_available()`` (or MPS's) is true,
tensors moved to the accelerator are real CPU tensors that Python sees on ``cuda:0``, and an
operation that mixes them with CPU tensors raises the error a real GPU raises::

    from torchdevlint.runtime import fake_accelerator

    with fake_accelerator("cuda", count=1):
        train_one_step()

    @fake_accelerator()
    def test_step(): ...

:func:`cpu_only` declares a phase in which the machine has no accelerator (a checkpoint saved
on the pretend GPU then fails to load without ``map_location``, as on a CPU-only machine).
``python -m torchdevlint.runtime script.py [args]`` runs a script that way, and
``pytest --fake-accelerator`` runs a test suite that way (docs/runtime.md).

torch is imported only when one of these is used: ``import torchdevlint`` never imports it.
"""
from __future__ import annotations

__all__ = ["fake_accelerator", "cpu_only", "is_active", "device_of"]


def __getattr__(name):
    if name in __all__:
        from torchdevlint.runtime import _fake
        return getattr(_fake, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
