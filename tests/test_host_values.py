"""``Placement.gives_host_values`` (issue 28): a function of the file whose every ``return``
gives Python numbers, or lists and dicts it fills with nothing else, hands back no tensor even
when it is given a moved model (the ``train_step``/``train`` pair of course notebooks)."""
import libcst as cst
import pytest

from torchdevlint.analysis import Analysis

SOURCE = '''
import torch


def numbers(model, loader):
    total, correct = 0, 0
    for x, y in loader:
        loss = model(x).sum()
        total += loss.item()
        correct += (model(x).argmax(1) == y).sum().item() / len(y)
    total = total / len(loader)
    return total, correct


def filled(model, loader):
    results = {"loss": [], "acc": []}
    for _ in range(2):
        loss, acc = numbers(model, loader)
        results["loss"].append(loss.item() if isinstance(loss, torch.Tensor) else loss)
        results["acc"].append(acc)
    return results


def kept_tensor(model, loader):
    total = 0
    for x, y in loader:
        total += model(x).sum().detach()
    return total


def list_of_tensors(model, loader):
    outs = []
    for x, y in loader:
        outs.append(model(x))
    return outs


def unguarded_else(model, x, flag):
    out = model(x)
    return out.item() if flag else out


def extended(model, loader):
    results = []
    results.extend(model(x) for x, _ in loader)
    return results


def parameter(value):
    return value


def recursive(n):
    return recursive(n - 1) + 1 if n else 0


def fills_filled(model, loader):
    return filled(model, loader)
'''


@pytest.fixture(scope="module")
def host():
    analysis = Analysis(cst.parse_module(SOURCE), facts=frozenset({"kinds", "placement"}))
    scope = analysis.collected.module_scope
    return lambda name: analysis.placement.gives_host_values(scope.bindings[name][0].value)


@pytest.mark.parametrize("name", ["numbers", "filled", "fills_filled"])
def test_numbers_and_containers_of_them(host, name):
    assert host(name)


@pytest.mark.parametrize("name", ["kept_tensor", "list_of_tensors", "unguarded_else", "extended",
                                  "parameter", "recursive"])
def test_anything_else_is_no_proof(host, name):
    assert not host(name)
