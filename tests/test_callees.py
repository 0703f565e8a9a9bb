"""The callee summary (``analysis/callees.py``, issue 28): what a plain function of the file
does with its parameters, made by one walk of its body and asked by TDL001, TDL004, TDL011."""
import libcst as cst

from torchdevlint.analysis import Analysis

SOURCE = '''
import torch


def to_device(t, device):
    return t.to(device)


def item_to_device(batch, device):
    if batch is None:
        return batch
    return batch["x"].cuda()


def rebound(t, device):
    t = t.float()
    return t.to(device)


def step(model, x, scale):
    out = model(x[:, -4:])
    return out * scale


def add_noise(signal, noise):
    return torch.cat([signal, noise]) + 1


def compare(pred, labels):
    return (pred.argmax(1) == labels).sum()
'''


def summaries():
    analysis = Analysis(cst.parse_module(SOURCE))
    return {info.name: analysis.callee_summary(info) for info in analysis.collected.functions}


def test_moves_only_when_every_return_moves_a_parameter_never_rebound():
    found = summaries()
    assert list(found["to_device"].moves) == ["t"]
    assert found["item_to_device"].moves == {}  # one return gives the batch itself
    assert found["rebound"].moves == {}  # ``t`` is not the argument any more
    assert found["step"].moves == {}


def test_feeds_and_meets():
    found = summaries()
    assert found["step"].feeds == [("x", "model")]
    assert found["add_noise"].feeds == []
    assert [(a, b) for a, b, _ in found["add_noise"].meets] == [("signal", "noise")]
    assert [(a, b) for a, b, _ in found["compare"].meets] == [("pred", "labels")]
    # the model's output is no parameter: ``out * scale`` meets nothing of the caller's
    assert found["step"].meets == []


def test_each_function_is_walked_once():
    analysis = Analysis(cst.parse_module(SOURCE))
    info = next(i for i in analysis.collected.functions if i.name == "compare")
    assert analysis.callee_summary(info) is analysis.callee_summary(info)


CALLED = '''
import torch


def shift(x, noise, scale=0.1):
    return x + scale * noise


class Masking:
    @staticmethod
    def keep(scores, mask):
        return scores * mask


class MaskedMul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, mask):
        return input.mm((weight * mask).t())


class NotAnOperation:
    @staticmethod
    def forward(ctx, input, weight, mask):
        return input * weight * mask


def run(h, n, m, w):
    a = shift(h, n)
    b = Masking.keep(h, m)
    c = MaskedMul.apply(h, w, m)
    d = NotAnOperation.apply(h, w, m)
    e = MaskedMul.apply(h, w, mask=m)
'''


def _meetings():
    module = cst.parse_module(CALLED)
    analysis = Analysis(module)
    run = next(i for i in analysis.collected.functions if i.name == "run")
    found = {}

    class Calls(cst.CSTVisitor):
        def visit_Assign(self, node):
            target = node.targets[0].target.value
            found[target] = [(module.code_for_node(a), module.code_for_node(b),
                              module.code_for_node(op), shown)
                             for a, b, op, shown in analysis._meetings_in_call(node.value, run.scope)]

    run.node.visit(Calls())
    return found


def test_arguments_meet_in_the_function_a_call_runs():
    found = _meetings()
    # arithmetic carries each parameter it reads: ``scale * noise`` meets ``x``
    assert ("h", "n", "x + scale * noise", "shift") in found["a"]
    # a static method through its class, the static ``forward`` of an autograd operation
    assert found["b"] == [("h", "m", "scores * mask", "Masking.keep")]
    assert found["c"] == [("w", "m", "(weight * mask)", "MaskedMul.apply")]


def test_apply_runs_forward_only_for_an_autograd_operation_given_positional_arguments():
    found = _meetings()
    assert found["d"] == []  # no torch.autograd.Function: ``apply`` is not known to run it
    assert found["e"] == []  # ``apply`` takes no keywords
