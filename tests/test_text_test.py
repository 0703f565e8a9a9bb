"""``textsearch.TextTest`` answers exactly what ``re.search`` answers for every rule's
``required_text``: it only searches faster (each branch alone, a leading ``\\b`` checked by
hand). Checked on texts built to sit on the edges (a word inside a longer word, at the start
of the text, an overlapping match after a rejected one) and on every fixture of the project."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from torchdevlint.rules import registry
from torchdevlint.textsearch import TextTest

ROOT = Path(__file__).resolve().parent.parent


def _patterns():
    found = set()
    for rule in registry.classes_by_code().values():
        required = rule.required_text
        found.update((required,) if isinstance(required, str) else required)
    return sorted(found)


PATTERNS = _patterns()

EDGES = [
    "", "load", "download", "download load", "xload(", "_load", "éload", "torch.load(f)",
    "current_accelerator", "torch.accelerator.current_accelerator()", "xcurrent_accelerator",
    "preloader", "Loader", "LOSS", "criterion", "device", "devices", "my_device", "cuda",
    "'cuda'", '"cuda:0"', "x.cuda()", "x . cuda \\\n ()", "x.to(", "x.to  # c\n(", "torch.cuda.FloatTensor",
    "class", "subclass", "zeros", "torch.zeros(3)", "nonzeros", "1zeros", "a.numpy()", "cpu",
    "x.cpu()", "from torch import nn", "import torch", "ones_like(", "x_like", "backward",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_text_test_answers_as_re_search_on_edge_texts(pattern):
    test = TextTest(pattern)
    compiled = re.compile(pattern)
    for text in EDGES + [" ".join(EDGES), "\n".join(reversed(EDGES))]:
        assert test.found(text) == (compiled.search(text) is not None), (pattern, text)


def test_text_test_answers_as_re_search_on_every_fixture():
    texts = [path.read_text(encoding="utf-8", errors="replace")
             for path in sorted((ROOT / "fixtures").rglob("*.py"))]
    assert len(texts) > 100
    tests = [(TextTest(p), re.compile(p)) for p in PATTERNS]
    for text in texts:
        for test, compiled in tests:
            assert test.found(text) == (compiled.search(text) is not None), compiled.pattern


@pytest.mark.parametrize("pattern, branches", [
    (r"\bcurrent_accelerator\b", [("current_accelerator\\b", True)]),
    (r"(?i)loader|loss", [("(?i)loader", False), ("(?i)loss", False)]),
    (r"\b(?:a|b)\b|[|]c|\(d|e\)", [("(?:a|b)\\b", True), ("[|]c", False), ("\\(d", False),
                                    ("e\\)", False)]),
    (r"\b(?:a|\d)x", [("\\b(?:a|\\d)x", False)]),  # a digit class: the \b stays
    (r"\b(?:ab)?c", [("\\b(?:ab)?c", False)]),  # an optional group: the \b stays
    (r"\b\.x", [("\\b\\.x", False)]),
    # a ``)`` or ``|`` inside a character class is no structure
    (r"\b(?:a[)]|b)", [("(?:a[)]|b)", True)]),
    (r"\b(?:[)|]a|b)x", [("\\b(?:[)|]a|b)x", False)]),
])
def test_text_test_splits_the_top_level_branches_only(pattern, branches):
    assert [(compiled.pattern, bounded) for compiled, bounded in TextTest(pattern)._branches] \
        == branches


def test_text_test_answers_as_re_search_on_a_sample_of_torch():
    torch = pytest.importorskip("torch")
    base = Path(torch.__file__).parent
    texts = [path.read_text(encoding="utf-8", errors="replace")
             for folder in ("optim", "distributions", "nn/parallel") if (base / folder).is_dir()
             for path in sorted((base / folder).rglob("*.py"))]
    tests = [(TextTest(p), re.compile(p)) for p in PATTERNS]
    for text in texts:
        for test, compiled in tests:
            assert test.found(text) == (compiled.search(text) is not None), compiled.pattern
