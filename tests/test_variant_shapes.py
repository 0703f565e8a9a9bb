"""Issue 28: the same bug written as real code writes it, as benchmarks/variants.py's
transforms write it (tuple, alias, method, attr_holder, subclass). Each case is a bug the
rule reported in its usual shape and missed in this one, with the correct twin that stays
silent; the facts behind them are shared (analysis/), so each holds for every rule that asks.
"""
from __future__ import annotations

import textwrap

from torchdevlint.engine import lint_source
from torchdevlint.rules import RULES_BY_CODE


def found(source: str, code: str) -> list:
    result = lint_source(textwrap.dedent(source), "snippet.py", (RULES_BY_CODE[code],))
    assert result.error is None, result.error
    return sorted(f.line for f in result.findings if f.code == code)


PROGRAM = """

    def main(device):
        model = Model(4).to(device)
        return model(torch.randn(2, 4, device=device))
"""

# -- tuple: ``a, b = x, y`` binds each target to its own element -------------------------------

TUPLE_STATE = """\
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.mean, self.std = torch.zeros(n), torch.ones(n)

        def forward(self, x):
            return (x - self.mean) / self.std
""" + PROGRAM


def test_tdl005_sees_module_state_assigned_in_one_tuple_assignment():
    assert found(TUPLE_STATE, "TDL005") == [8, 8]
    registered = TUPLE_STATE.replace(
        "self.mean, self.std = torch.zeros(n), torch.ones(n)",
        'self.register_buffer("mean", torch.zeros(n))\n'
        '            self.register_buffer("std", torch.ones(n))')
    assert found(registered, "TDL005") == []


TUPLE_HIDDEN = """\
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.lstm = nn.LSTM(n, n, batch_first=True)

        def forward(self, x):
            h0, c0 = torch.zeros(1, x.size(0), 4), torch.zeros(1, x.size(0), 4)
            out, _ = self.lstm(x.unsqueeze(1), (h0, c0))
            return out
""" + PROGRAM


def test_tdl007_sees_factories_of_a_tuple_assignment():
    assert found(TUPLE_HIDDEN, "TDL007") == [11, 11]
    on_device = TUPLE_HIDDEN.replace("x.size(0), 4)", "x.size(0), 4, device=x.device)")
    assert found(on_device, "TDL007") == []


# -- alias: ``net = model`` is the same module under a second name ----------------------------

ALIAS_MODEL = """\
    import torch
    import torch.nn as nn


    def smoke(device):
        model = nn.Linear(3, 2).to(device)
        net = model
        return net(torch.zeros(2, 3))
"""


def test_tdl011_follows_a_moved_model_through_a_second_name():
    assert found(ALIAS_MODEL, "TDL011") == [8]
    assert found(ALIAS_MODEL.replace("torch.zeros(2, 3)", "torch.zeros(2, 3, device=device)"),
                 "TDL011") == []
    # the alias of a model that is not moved meets nothing on a device
    assert found(ALIAS_MODEL.replace(".to(device)", ""), "TDL011") == []
    # ... nor one moved only after the call
    later = ALIAS_MODEL.replace(".to(device)", "").replace(
        "        return net(torch.zeros(2, 3))\n",
        "        out = net(torch.zeros(2, 3))\n        model.to(device)\n        return out\n")
    assert "model.to(device)" in later
    assert found(later, "TDL011") == []


ALIAS_CRITERION = """\
    import torch
    import torch.nn as nn


    def train(model, batches, device):
        criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5]))
        loss_fn = criterion
        for x, y in batches:
            loss = loss_fn(model(x.to(device)), y.to(device))
            loss.backward()


    def main(device):
        train(nn.Linear(4, 3).to(device), [(torch.randn(8, 4), torch.randint(0, 3, (8,)))], device)
"""


def test_tdl011_sees_the_weights_of_a_loss_module_under_a_second_name():
    assert found(ALIAS_CRITERION, "TDL011") == [9]
    moved = ALIAS_CRITERION.replace("loss_fn = criterion", "loss_fn = criterion.to(device)")
    assert found(moved, "TDL011") == []


# -- method: a factory in a helper method of a helper method ---------------------------------

HELPER_CHAIN = """\
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.proj = nn.Linear(n, n)
            self.table = self.make(n)

        def make(self, n):
            return self.one_hot(n)

        def one_hot(self, n):
            y = torch.zeros(n, n)
            y = y.unsqueeze(0)
            y = y.repeat(2, 1, 1)
            return y

        def forward(self, x):
            return self.proj(x) + self.table
""" + PROGRAM


def test_tdl005_follows_a_factory_through_two_helper_methods_and_a_chain_of_rebindings():
    assert found(HELPER_CHAIN, "TDL005") == [9]
    buffer = HELPER_CHAIN.replace("self.table = self.make(n)",
                                  'self.register_buffer("table", self.make(n))')
    assert found(buffer, "TDL005") == []


# -- attr_holder: a mode switch's cache built in a local, then stored ------------------------

SWITCH_CACHE = """\
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.bias = nn.Parameter(torch.zeros(n))

        @torch.no_grad()
        def train(self, mode=True):
            super().train(mode)
            if not mode:
                cached = self.bias[None, :]
                self.cached = cached
            return self

        def forward(self, x):
            return x + (self.bias if self.training else self.cached)


    def main(device):
        model = Model(4).eval().to(device)
        return model(torch.randn(2, 4, device=device))
"""


def test_tdl005_sees_a_mode_switch_cache_stored_through_a_local():
    assert found(SWITCH_CACHE, "TDL005") == [15]
    # a local that is not the module's own state: no snapshot of it
    assert found(SWITCH_CACHE.replace("cached = self.bias[None, :]", "cached = mode"),
                 "TDL005") == []


# -- subclass: the behaviour inherited from a base class of the file ------------------------

INHERITED_FORWARD = """\
    import torch
    import torch.nn as nn


    class MaskedBase(nn.Module):
        def forward(self, y_hat, y, mask=None):
            if mask is None:
                return torch.zeros(1)
            return ((y_hat - y) * mask).abs().mean()


    class Masked(MaskedBase):
        pass


    class Total(nn.Module):
        def __init__(self):
            super().__init__()
            self.masked = Masked()

        def forward(self, output, target):
            return ((output - target) ** 2).mean() + self.masked(output, target)


    def main(device):
        criterion = Total().to(device)
        target = torch.zeros(2, 8, device=device)
        return criterion(target + 5.0, target)
"""


def test_tdl007_follows_a_submodule_call_to_the_forward_its_class_inherits():
    assert found(INHERITED_FORWARD, "TDL007") == [8]
    assert found(INHERITED_FORWARD.replace("torch.zeros(1)", "torch.zeros(1, device=y.device)"),
                 "TDL007") == []


# -- negatives: correct code written the same other ways stays silent ------------------------

PACKED = """\
    import torch
    import torch.nn as nn


    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(10, 4)
            self.lstm = nn.LSTM(4, 4, batch_first=True)

        def forward(self, ids, length):
            packed = nn.utils.rnn.pack_padded_sequence(
                self.embedding(ids), length, batch_first=True, enforce_sorted=False)
            _, (hidden, _) = self.lstm(packed)
            return hidden[-1]


    def main(device):
        model = Classifier().to(device)
        return model(torch.tensor([[1, 2, 3]], device=device), torch.tensor([3]))
"""


def test_tdl011_lengths_packed_through_a_helper_method_or_an_inherited_forward_are_cpu_by_design():
    assert found(PACKED, "TDL011") == []
    through_method = PACKED.replace(
        """            packed = nn.utils.rnn.pack_padded_sequence(
                self.embedding(ids), length, batch_first=True, enforce_sorted=False)""",
        """            packed = self.pack(ids, length)""").replace(
        "            return hidden[-1]\n",
        "            return hidden[-1]\n\n"
        "        def pack(self, ids, length):\n"
        "            return nn.utils.rnn.pack_padded_sequence(\n"
        "                self.embedding(ids), length, batch_first=True, enforce_sorted=False)\n")
    assert "def pack(self, ids, length)" in textwrap.dedent(through_method)
    assert found(through_method, "TDL011") == []
    inherited = PACKED.replace("class Classifier(nn.Module):", "class Base(nn.Module):").replace(
        "\n\n    def main(device):", "\n\n    class Classifier(Base):\n        pass\n\n\n    def main(device):")
    assert found(inherited, "TDL011") == []
    # a lengths argument the forward does not pack is no CPU input by design
    unpacked = through_method.replace("self.embedding(ids), length,", "self.embedding(ids), [3],")
    assert found(unpacked, "TDL011") == [23]


def test_a_loss_module_moved_through_a_second_name_is_moved():
    moved_through_alias = ALIAS_CRITERION.replace(
        "        loss_fn = criterion\n", "        loss_fn = criterion\n        loss_fn.to(device)\n")
    assert found(moved_through_alias.replace("loss_fn(model", "criterion(model"), "TDL011") == []
