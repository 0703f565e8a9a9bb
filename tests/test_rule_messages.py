"""Messages as data (issue 26): each kind of finding of a rule is one ``Message`` declared on
the rule class, a text with named fields that the report site fills. Every finding on the
fixtures and the rules' examples is one of its rule's messages, filled; every declared message
is one some fixture, example or page example shows. (The snapshots in tests/snapshots keep the texts
themselves.)"""
from __future__ import annotations

import re
import string

import pytest

from conftest import fixture_files, fixture_rules
from test_rule_pages import blocks, findings as page_findings
from torchdevlint.engine import lint_source
from torchdevlint.rules import registry
from torchdevlint.rules.base import Message

RULE_CLASSES = tuple(registry.classes_by_code().values())


def pattern(message: Message) -> re.Pattern:
    """The texts ``message`` gives, whatever its fields hold."""
    parts = []
    for literal, name, _, _ in string.Formatter().parse(message.template):
        parts.append(re.escape(literal))
        if name:
            parts.append(".*?")
    return re.compile("".join(parts), re.S)


def findings():
    """(rule class, message) of every finding of the fixtures, the rules' examples and their
    pages' examples."""
    for path in fixture_files():
        (info,) = fixture_rules(path)
        result = lint_source(path.read_text(encoding="utf-8"), path.name, (info,))
        yield from ((registry.classes_by_code()[f.code], f.message) for f in result.findings)
    for rule in RULE_CLASSES:
        for source, _ in rule.invalid:
            result = lint_source(source, "example.py", (rule,))
            yield from ((rule, f.message) for f in result.findings if f.code == rule.code)
        for block in blocks(rule.code, "Example"):
            yield from ((rule, f.message) for f in page_findings(rule, block))
        for source in MORE_PROGRAMS.get(rule.code, ()):
            result = lint_source(source, "program.py", (rule,))
            assert result.findings, f"{rule.code} reports nothing in\n{source}"
            yield from ((rule, f.message) for f in result.findings if f.code == rule.code)


# Kinds of finding that no fixture, example or page shows: a program each.
MORE_PROGRAMS = {
    "TDL002": ("import torch\nx = torch.ones(2)\nx.cuda()\n",
               "import torch\ny = torch.cuda.FloatTensor(2)\n"),
    "TDL004": ("def train(model, loader, device):\n    model.to(device)\n    for x, y in loader:\n"
               "        out = model(x.to(device))\n        diff = out - y\n",
               "def train(loader, device):\n    for x, y in loader:\n        x = x.to(device)\n"
               "        diff = x - y\n",
               "def train(loader, device):\n    for x, y in loader:\n        x = x.to(device)\n"
               "        correct = (x.argmax(1) == y).sum()\n",
               "def train(model, loader, device, criterion):\n    for data, target in loader:\n"
               "        output = model(data)\n        loss = criterion(output, target.to(device))\n",
               # through a function of the file (``CalleeSummary.meets``)
               "def diff(a, b):\n    return a - b\n\n\ndef train(model, loader, device):\n"
               "    model.to(device)\n    for x, y in loader:\n        out = model(x.to(device))\n"
               "        d = diff(out, y)\n",
               "def same(a, b):\n    return a == b\n\n\ndef train(loader, device):\n"
               "    for x, y in loader:\n        x = x.to(device)\n        ok = same(x, y)\n",
               "def diff(a, b):\n    return a - b\n\n\ndef train(loader, device):\n"
               "    for x, y in loader:\n        x = x.to(device)\n        d = diff(x, y)\n"),
    "TDL011": ("import torch\n\n\ndef penalty(x, device):\n    x = x.to(device).requires_grad_()\n"
               "    out = x * 2\n    ones = torch.ones(3, 4)\n"
               "    return torch.autograd.grad(out, x, grad_outputs=ones)\n",),
    "TDL009": ("import torch\nz = torch.arange(3, dtype=torch.int64).to(\"cuda\", torch.float32)\n",
               "import torch\n\n\ndef f(device):\n    counts = torch.zeros(4, dtype=torch.int64)\n"
               "    return counts.to(device, torch.float32)\n"),
}
FOUND = None


def found():
    global FOUND
    if FOUND is None:
        FOUND = list(findings())
    return FOUND


@pytest.mark.parametrize("rule", RULE_CLASSES, ids=lambda r: r.code)
def test_each_rule_declares_its_messages(rule):
    declared = rule.messages()
    assert declared, f"{rule.code} declares no Message"
    for name, message in declared:
        assert name.isupper() and message.template


@pytest.mark.parametrize("rule", RULE_CLASSES, ids=lambda r: r.code)
def test_every_finding_is_one_of_its_rules_messages_filled(rule):
    patterns = [pattern(message) for _, message in rule.messages()]
    messages = [text for owner, text in found() if owner is rule]
    assert messages, f"no fixture or example of {rule.code} has a finding"
    strays = [text for text in messages if not any(p.fullmatch(text) for p in patterns)]
    assert strays == []


@pytest.mark.parametrize("rule", RULE_CLASSES, ids=lambda r: r.code)
def test_every_declared_message_is_shown_by_a_fixture_or_an_example(rule):
    messages = [text for owner, text in found() if owner is rule]
    unused = [name for name, message in rule.messages()
              if not any(pattern(message).fullmatch(text) for text in messages)]
    assert unused == []


def test_a_message_names_its_fields_and_fills_them():
    message = Message("`{name}` is on {device}")
    assert message.fields() == ("name", "device")
    assert message(name="x", device="cuda") == "`x` is on cuda"
    assert pattern(message).fullmatch("`batch[0]` is on the GPU")
    assert not pattern(message).fullmatch("`x` is elsewhere")
