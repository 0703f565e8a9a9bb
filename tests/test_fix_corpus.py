"""--fix --unsafe-fixes over real code: a sample of the installed torch package's own sources
(present wherever the tests run, since the test extra installs torch). The full-corpus run is
``python benchmarks/fix_corpus.py DIR``; this is the same check on a small sample."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from conftest import ROOT, fixture_files

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


# -- what a fix writes is what its message proposes, and no rewrite keeps a move discarded ---

_DISCARDING_AND_DEVICE_SNIPPETS = {
    # issue 13, point 3: a batch item moved by a bare .cuda() statement
    "batch item .cuda()": '''\
import torch
from torch.utils.data import DataLoader

model = torch.nn.Linear(4, 2).cuda()
loader = DataLoader([{"input": torch.randn(4)}], batch_size=1)
for batch in loader:
    batch["input"].cuda()
    model(batch["input"])
''',
    "unknown receiver .cuda()": "import torch\n\n\ndef f(thing):\n    thing.cuda()\n    return thing\n",
    "tensor .cuda() then .to()": "import torch\nx = torch.ones(2)\nx.cuda()\nx.to('cpu')\n",
    # issue 13, point 4: a module-level device names the fix
    "module-level device": '''\
import torch
from torch.utils.data import DataLoader

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(loader: DataLoader):
    model = torch.nn.Linear(4, 2).to(device)
    for inputs, labels in loader:
        inputs = inputs.to(device)
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
''',
    "model moved in another function": '''\
import torch
from torch.utils.data import DataLoader


def make(device):
    return torch.nn.Linear(4, 2).to(device)


class Trainer:
    def __init__(self, device):
        self.model = torch.nn.Linear(4, 2).to(device)

    def run(self, loader: DataLoader):
        for batch in loader:
            self.model(**batch)
''',
    "literal with single quotes and an alias": (
        "import torch as T\nx = T.zeros(2, device='cuda:0')\ndevice = 'cuda'\n"
        "def f(d='cuda'):\n    return T.ones(1).to(d)\n"),
}


@pytest.mark.parametrize("path", fixture_files("positive"), ids=lambda p: f"{p.parts[-3]}/{p.name}")
def test_every_fixture_fix_writes_what_its_message_proposes(path):
    assert fix_corpus.check_agreement(path.read_text(encoding="utf-8"), str(path)) == []


@pytest.mark.parametrize("source", _DISCARDING_AND_DEVICE_SNIPPETS.values(),
                         ids=_DISCARDING_AND_DEVICE_SNIPPETS.keys())
def test_snippet_fix_writes_what_its_message_proposes(source):
    assert fix_corpus.check_agreement(source, "snippet.py") == []


def test_the_agreement_check_sees_a_disagreement(monkeypatch):
    """The check itself can fail: a fix that writes another device than its message names."""
    from torchdevlint.rules import tdl004_unmoved_batch as tdl004
    monkeypatch.setattr(tdl004, "_device_text_at", lambda scope, device, model: "elsewhere")
    source = _DISCARDING_AND_DEVICE_SNIPPETS["module-level device"]
    real = fix_corpus._proposal

    def proposal(message):  # the message keeps naming `device`, as before issue 13
        found = real(message)
        return None if found is None else found.replace("elsewhere", "device")

    monkeypatch.setattr(fix_corpus, "_proposal", proposal)
    assert any("proposes" in problem for problem in fix_corpus.check_agreement(source, "s.py"))


def test_the_agreement_check_sees_a_move_left_discarded():
    before = "import torch\nx = torch.ones(2)\nx.cuda()\n"
    after = "import torch\nx = torch.ones(2)\nx.to('cpu')\n"
    rewritten = set(fix_corpus._discarded_moves(after)) - set(fix_corpus._discarded_moves(before))
    assert fix_corpus._discarding_statements(after, rewritten) == ["x.to('cpu')"]
