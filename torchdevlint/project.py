"""Facts about the project around a file, read from the file system (not from the file).

One today: a directory that builds a CUDA extension. Its ``setup.py`` compiles ``.cu`` sources
with ``torch.utils.cpp_extension.CUDAExtension`` and no CPU fallback (``CppExtension``), so the
Python files beside it (the extension's wrappers and unit tests, as in Swin-Transformer's
``kernels/window_process`` and Deformable-DETR's ``models/ops``) run only where CUDA is: their
hard-coded CUDA is by design, as in a file that imports Triton. TDL002 is off for them, as if
a per-file ignore said so; every front end asks here (``Settings.rules_for``, the flake8
plugin), so they agree.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Sequence, Tuple

_CUDA_EXTENSION = re.compile(r"\bCUDAExtension\s*\(")
_CPU_FALLBACK = re.compile(r"\bCppExtension\b")
GPU_ONLY_RULES = frozenset(("TDL002",))


@lru_cache(maxsize=1024)
def builds_cuda_extension(directory: Path) -> bool:
    """Whether ``directory/setup.py`` builds a CUDA extension with no CPU fallback."""
    try:
        text = (directory / "setup.py").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return bool(_CUDA_EXTENSION.search(text)) and not _CPU_FALLBACK.search(text)


def rules_for_location(rules: Sequence[type], path: str) -> Tuple[type, ...]:
    """``rules`` without those the project around ``path`` makes moot (see the module doc).
    A path that is no file (standard input without ``--stdin-filename``) keeps them all."""
    if not path or path in ("-", "stdin"):
        return tuple(rules)
    if os.path.basename(path) == "setup.py" or not _in_cuda_extension(
            os.path.dirname(os.path.abspath(path))):
        return tuple(rules)
    return tuple(rule for rule in rules if rule.code not in GPU_ONLY_RULES)


@lru_cache(maxsize=4096)
def _in_cuda_extension(directory: str) -> bool:
    """(by directory, as text: a warm run asks once a file, 2,000 ``Path`` objects cost a
    tenth of a changed file's run)"""
    return builds_cuda_extension(Path(directory))
