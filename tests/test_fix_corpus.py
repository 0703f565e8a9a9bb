"""--fix --unsafe-fixes over real code: a sample of the installed torch package's own sources
(present wherever the tests run, since the test extra installs torch). The full-corpus run is
``python benchmarks/fix_corpus.py DIR``; this is the same check on a small sample."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from conftest import ROOT

torch = pytest.importorskip("torch")

_SPEC = importlib.util.spec_from_file_location("fix_corpus", ROOT / "benchmarks" / "fix_corpus.py")
fix_corpus = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(fix_corpus)

# Files likely to hold fixable findings, plus a few that almost certainly hold none.
_INTERESTING = re.compile(r"\.cuda\(\)|torch\.load\(|\"cuda\"|for \w+(?:, \w+)* in \w*loader")
SAMPLE_SIZE = 16
MAX_BYTES = 40_000


def _sample() -> list:
    package = Path(torch.__file__).resolve().parent
    interesting, plain = [], []
    for path in sorted(package.rglob("*.py")):
        try:
            if path.stat().st_size > MAX_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        (interesting if _INTERESTING.search(text) else plain).append(path)
    step = max(1, len(interesting) // (SAMPLE_SIZE - 4))
    return interesting[::step][: SAMPLE_SIZE - 4] + plain[:: max(1, len(plain) // 4)][:4], package


def test_fix_over_a_sample_of_torch_sources_is_safe_and_idempotent(tmp_path):
    files, package = _sample()
    assert len(files) >= 10
    copies = fix_corpus.copy_tree(files, package, tmp_path)
    report = fix_corpus.check_tree(copies)
    assert fix_corpus.problems(report) == []
    assert report["changed"] >= 1, "the sample should exercise at least one fix"
    assert sum(report["fixes"].values()) >= report["changed"]
