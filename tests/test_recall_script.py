"""benchmarks/recall.py on a tiny synthetic corpus: every mutation kind is found, each mutant
is judged caught or missed, copies count once, and notebooks are mutated as programs.

The "missed" cases are what torchdevlint misses today (all but the TDL003 one are documented
limits); when the analysis learns one of them, move it to CAUGHT.
"""
from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from conftest import ROOT

_SPEC = importlib.util.spec_from_file_location("recall", ROOT / "benchmarks" / "recall.py")
recall = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("recall", recall)
_SPEC.loader.exec_module(recall)

TRAIN = '''\
import argparse
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def train(dataset):
    model = Net().to(device)
    model.load_state_dict(torch.load("ckpt.pt", map_location=device))
    loader = DataLoader(dataset, batch_size=4)
    criterion = nn.CrossEntropyLoss()
    for images, labels in loader:
        images = images.to(device)
        labels = labels.to(device)
        loss = criterion(model(images), labels)
        loss.backward()


def evaluate(model, loader):
    for inputs, targets in loader:
        inputs = inputs.to(device)
        model(inputs)


def backup(path, state):
    torch.save(state, path)
    return torch.load(path + ".old", map_location="cpu")


def helper(t):
    t = t.to(device)
    return t


def make():
    x = torch.randn(3)
    x = x.to(device)
    return x


def predict_numpy(x):
    net = nn.Linear(3, 3).to(device)
    return net(x.to(device)).cpu().numpy()


def to_numpy(t):
    return t.cpu().numpy()


class Attention(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.proj = nn.Linear(size, size)
        self.register_buffer("mask", torch.tril(torch.ones(size, size)))
        self.register_buffer("order", torch.arange(size).flip(0))
        self.blocks = nn.ModuleList([nn.Linear(size, size) for _ in range(2)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.proj(x).masked_fill(self.mask == 0, 0.0)[:, self.order]
'''

# (rule, the mutated statement before the edit) -> caught today?
CAUGHT = {
    ("TDL001", "x = x.to(device)"),
    ("TDL001", "images = images.to(device)"),  # a value unpacked from a loader is a tensor
    ("TDL001", "labels = labels.to(device)"),
    ("TDL001", "inputs = inputs.to(device)"),
    ("TDL002", 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")'),
    ("TDL003", 'model.load_state_dict(torch.load("ckpt.pt", map_location=device))'),
    ("TDL004", "labels = labels.to(device)"),
    # the images alone reach the model while the loop moves the labels: no intent, a bug
    ("TDL004", "images = images.to(device)"),
    ("TDL005", 'self.register_buffer("mask", torch.tril(torch.ones(size, size)))'),
    ("TDL006", "self.blocks = nn.ModuleList([nn.Linear(size, size) for _ in range(2)])"),
    ("TDL008", "net(x.to(device)).cpu().numpy()"),  # the output of a model moved right here
}
MISSED = {
    # the receiver is an unannotated parameter: its kind is unknown
    ("TDL001", "t = t.to(device)"),
    # argparse defaults are configuration, not reported
    ("TDL002", 'parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")'),
    # taken as a round trip (a save to `path`, a load from `path + ".old"`)
    ("TDL003", 'return torch.load(path + ".old", map_location="cpu")'),
    # the model is a parameter no call in the file passes, and nothing else is on a device
    ("TDL004", "inputs = inputs.to(device)"),
    # only an index into a tensor on the device: a plain attribute works, rightly silent (such
    # planted "bugs" make the TDL005 figure a lower bound)
    ("TDL005", 'self.register_buffer("order", torch.arange(size).flip(0))'),
    # a parameter: whether the caller's tensor is on a device, this function does not show
    ("TDL008", "t.cpu().numpy()"),
}


def _notebook(*cells: str) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                       "cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                                  "execution_count": None, "source": cell} for cell in cells]})


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    (root / "train.py").write_text(TRAIN, encoding="utf-8")
    (root / "copy").mkdir()
    (root / "copy" / "train.py").write_text(TRAIN, encoding="utf-8")  # the same code again
    (root / "nb.ipynb").write_text(_notebook(
        "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n",
        "x = torch.randn(3)\nx = x.to(device)\ny = x + 1\n",
        "z = torch.zeros(2)\nz = z.to(device)",  # the last line: displayed, not discarded
    ), encoding="utf-8")
    return recall.run([str(root)], jobs=1)


def _in(outcome, name):
    return [m for m in outcome["mutations"] if m.path.endswith(name)]


def test_finds_every_kind_and_judges_it(outcome):
    mutants = _in(outcome, "/train.py")
    found = {(m.kind, m.before): m for m in mutants if "copy" not in m.path}
    assert set(found) == CAUGHT | MISSED
    for key in CAUGHT:
        assert found[key].skip is None and found[key].error is None
        assert found[key].caught is True, key
    for key in MISSED:
        assert found[key].skip is None and found[key].error is None
        assert found[key].caught is False, key


def test_edits_are_the_documented_ones(outcome):
    found = {(m.kind, m.before): m for m in _in(outcome, "/train.py") if "copy" not in m.path}
    assert found["TDL001", "x = x.to(device)"].after == "x.to(device)"
    assert found["TDL002", 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")'] \
        .after == 'device = torch.device("cuda")'
    assert found["TDL003", 'model.load_state_dict(torch.load("ckpt.pt", map_location=device))'] \
        .after == 'model.load_state_dict(torch.load("ckpt.pt"))'
    assert found["TDL005", 'self.register_buffer("mask", torch.tril(torch.ones(size, size)))'] \
        .after == "self.mask = torch.tril(torch.ones(size, size))"
    assert found["TDL006", "self.blocks = nn.ModuleList([nn.Linear(size, size) for _ in range(2)])"] \
        .after == "self.blocks = [nn.Linear(size, size) for _ in range(2)]"
    assert found["TDL008", "net(x.to(device)).cpu().numpy()"].after == "net(x.to(device)).numpy()"
    deleted = found["TDL004", "labels = labels.to(device)"]
    assert deleted.after == "(deleted)" and deleted.shape == "delete"
    assert deleted.location.endswith("train.py:29")


def test_copies_count_once(outcome):
    summary = recall.summarize(outcome["mutations"])
    for kind in recall.KINDS:
        s = summary[kind]
        # two files of the same code, plus the notebook's own mutants
        assert s["distinct"] < s["mutants"]
        assert s["distinct_per_file"] == s["mutants"]
    assert summary["TDL003"] == {**summary["TDL003"], "mutants": 4, "distinct": 2, "caught": 1,
                                 "partly": 0, "recall": 0.5}


def test_notebooks_are_mutated_as_programs(outcome):
    mutants = {(m.kind, m.before): m for m in _in(outcome, "nb.ipynb")}
    moved = mutants["TDL001", "x = x.to(device)"]
    assert moved.location.endswith("nb.ipynb:cell 2:2") and moved.caught is True
    displayed = mutants["TDL001", "z = z.to(device)"]
    assert displayed.skip and "displayed" in displayed.skip and displayed.caught is None
    assert mutants["TDL002", "device = 'cuda' if torch.cuda.is_available() else 'cpu'"].caught is True


def test_a_finding_the_file_already_had_is_not_a_catch():
    source = "import torch\nx = torch.zeros(3).cuda()\ny = 1\n"
    mutation = recall.Mutation("TDL002", "test", "f.py", start=source.index("y = 1"),
                               end=source.index("y = 1") + 5, replacement="pass\npass",
                               line=3, end_line=3, location="f.py:3", before="y = 1", after="")
    original = [("TDL002", 2, "hard-coded")]
    assert recall.judge(original, original, mutation, source) == (False, [])
    # a finding after the edit moves by the lines the edit added
    original = [("TDL002", 4, "hard-coded")]
    assert recall.judge(original, [("TDL002", 5, "hard-coded")], mutation, source) == (False, [])
    assert recall.judge(original, [("TDL002", 4, "hard-coded"), ("TDL002", 5, "hard-coded")],
                        mutation, source) == (True, ["TDL002"])


def test_command_line(tmp_path, capsys):
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    out = tmp_path / "out.json"
    assert recall.main([str(tmp_path), "--show-missed", "5", "--json", str(out),
                        "--kinds", "TDL001,TDL004"]) == 0
    text = capsys.readouterr().out
    assert "recall" in text and "TDL001" in text and "TDL003" not in text.split("Missed")[0]
    assert "Missed TDL004" in text and "inputs = inputs.to(device)" in text
    document = json.loads(out.read_text())
    assert set(document["summary"]) == {"TDL001", "TDL004"}
    assert {m["kind"] for m in document["mutants"]} == {"TDL001", "TDL004"}
    with pytest.raises(SystemExit):
        recall.main([str(tmp_path), "--kinds", "TDL009"])
