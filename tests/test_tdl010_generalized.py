"""TDL010 beyond loops over a data loader and plain names (issue 28): entries of dicts, loops
over lists, iterators and ``while``, a function that calls backward() itself, and a training
loop that calls backward() every step (a kind of its own). Each shape reported here has a
correct twin that stays silent."""
from __future__ import annotations

import ast
import textwrap

import pytest

from torchdevlint.engine import lint_source
from torchdevlint.rules.prefilter import accumulating_loop_in
from torchdevlint.rules.tdl010_autograd_graph_kept_alive import AutogradGraphKeptAlive

RULE = AutogradGraphKeptAlive
HEAD = "import torch\nimport torch.nn.functional as F\nfrom collections import defaultdict\n\n\n"


def findings(body: str):
    source = HEAD + textwrap.dedent(body)
    result = lint_source(source, "example.py", (RULE,))
    assert result.error is None
    found = [(f.line - HEAD.count("\n"), f.column, f.message) for f in result.findings]
    # the ast prefilter lets every file with a finding through
    assert not found or accumulating_loop_in(ast.parse(source), source)
    return found


def lines(body: str):
    return [(line, column) for line, column, _ in findings(body)]


EVAL = """\
def evaluate(model, loader):
    totals = defaultdict(float)
    for x, y in loader:
        out = model(x)
{body}
    return totals


evaluate(None, None)
"""


def evaluate(body: str) -> str:
    return EVAL.format(body=textwrap.indent(textwrap.dedent(body), " " * 8))


@pytest.mark.parametrize("body, expected", [
    ('totals["ce"] += F.cross_entropy(out, y)\n', [(5, 25)]),
    ('losses = {"ce": F.cross_entropy(out, y)}\nfor k, v in losses.items():\n'
     '    totals[k] += v\n', [(7, 26)]),
    ('loss = F.cross_entropy(out, y)\ntotals["ce"] = totals["ce"] + loss\n', [(6, 39)]),
    ('loss = F.cross_entropy(out, y)\nif "ce" not in totals:\n    totals["ce"] = 0.0\n'
     'totals["ce"] += loss\n', [(8, 25)]),
])
def test_dict_entries_accumulate(body, expected):
    assert lines(evaluate(body)) == expected


@pytest.mark.parametrize("body", [
    'totals["ce"] += F.cross_entropy(out, y).item()\n',
    'totals = {}\ntotals["ce"] += F.cross_entropy(out, y)\n',  # a new dict every iteration
    'totals["ce"] = 0.0\ntotals["ce"] += F.cross_entropy(out, y)\n',  # the entry reset
])
def test_dict_entry_twins_are_silent(body):
    assert lines(evaluate(body)) == []


def test_loops_over_lists_iterators_and_while():
    body = """\
    def over_a_list(model, criterion, batches):
        total = 0.0
        for x, y in batches:
            total += criterion(model(x), y)
        return total.item()


    def with_while(model, criterion, stream):
        total = 0.0
        batch = next(stream, None)
        while batch is not None:
            total += criterion(model(batch[0]), batch[1])
            batch = next(stream, None)
        return total.item()


    def not_a_loss(model, batches):
        total = 0.0
        for x, y in batches:
            total += model(x).sum()
        return total.item()


    over_a_list(None, None, None)
    with_while(None, None, None)
    not_a_loss(None, None)
    """
    found = findings(body)
    assert [(line, column) for line, column, _ in found] == [(4, 18), (12, 18)]
    assert "this loop over `batches`" in found[0][2] and "this `while` loop" in found[1][2]


def test_a_function_that_calls_backward_runs_with_grad():
    body = """\
    def fit(model, criterion, optimizer, train, val):
        for x, y in train:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
        val_loss = 0.0
        for x, y in val:
            val_loss += criterion(model(x), y)
        return val_loss.item()


    def validate(model, criterion, val):
        val_loss = 0.0
        for x, y in val:
            val_loss += criterion(model(x), y)
        return val_loss.item()
    """
    ((line, column, message),) = findings(body)
    assert (line, column) == (8, 21)
    assert "with grad enabled (`fit` calls backward(), so it runs with grad)" in message


def test_backward_every_step_is_its_own_kind():
    body = """\
    def train(model, criterion, optimizer, loader):
        running, history, kept = 0.0, [], 0.0
        for x, y in loader:
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss
            history.append(loss)
            kept += loss.item()
        return running.item()
    """
    found = findings(body)
    assert [(line, column) for line, column, _ in found] == [(8, 20), (9, 24)]
    for _, _, message in found:
        assert message == RULE.GRAPH_NODES_KEPT(
            accumulator=message.split("`")[1], values="`loss`", loop="this loop over `loader`",
            detached="`loss.detach()`")


def test_backward_of_the_total_after_the_loop_is_gradient_accumulation():
    body = """\
    def step(model, criterion, optimizer, loader):
        total = 0.0
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            total += loss
        total.backward()
    """
    assert lines(body) == []


def test_a_name_backward_runs_on_has_history():
    # pyg-team/pytorch_geometric examples/dgcnn_segmentation.py before fdfd11d6 (benchmarks/
    # history): the loss comes from a method the analysis does not know
    body = """\
    def train_epoch(net, data_loader):
        epoch_loss, epoch_items = 0, 0
        for data in data_loader:
            net.optimizer.zero_grad()
            loss, preds = net.loss_(pts=data.pos, batch_ids=data.batch, lbls=data.y)
            loss.backward()
            net.optimizer.step()
            epoch_loss += loss
            epoch_items += loss.item()
        return epoch_loss / len(data_loader), epoch_items


    print(train_epoch(None, None))
    """
    assert lines(body) == [(8, 23)]

