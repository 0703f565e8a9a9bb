"""Issue 28: TDL007 and TDL011 follow a CPU tensor to where it meets the device across a
method, a function of the file or a loss module's state, and report only with evidence of an
accelerator. The fixtures (TDL007 init_hidden_whole, mask_function; TDL011 init_hidden_loop,
weighted_criterion) carry the runtime proofs; these tests hold what a fixture cannot: a
LightningModule (Lightning is no test dependency), the facts asked directly, and the twins
that must stay silent."""
from __future__ import annotations

import textwrap

import libcst as cst

from torchdevlint.analysis import Analysis
from torchdevlint.engine import lint_source


def found(source: str, code: str) -> list:
    return [(f.line, f.column) for f in lint_source(textwrap.dedent(source), "snippet.py").findings
            if f.code == code]


def messages(source: str, code: str) -> list:
    return [f.message for f in lint_source(textwrap.dedent(source), "snippet.py").findings
            if f.code == code]


# -- TDL007 in a LightningModule: its steps run on the device the Trainer moved it to ----------
# (https://github.com/Lightning-AI/pytorch-lightning/issues/3738: `torch.zeros` hidden and cell
# in a LightningModule, "Input and hidden tensors are not at the same device")

LIGHTNING = """\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import pytorch_lightning as pl


    class CharRNN(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(4, 8, batch_first=True)
            self.out = nn.Linear(8, 3)

        def forward(self, x, hidden):
            out, _ = self.lstm(x, hidden)
            return self.out(out[:, -1])

        def _init_state(self, n):
            return (torch.zeros(1, n, 8), torch.zeros(1, n, 8))

        def training_step(self, batch, batch_idx):
            x, y = batch
            logits = self(x, self._init_state(x.size(0)))
            scale = torch.rand(x.size(0), 3)
            return F.cross_entropy(logits * scale, y)


    if __name__ == "__main__":
        pl.Trainer(max_epochs=1).fit(CharRNN())
    """


def test_tdl007_a_lightning_step_and_the_helper_it_calls():
    assert found(LIGHTNING, "TDL007") == [(18, 17), (18, 39), (23, 17)]
    said = messages(LIGHTNING, "TDL007")
    assert all("this file trains it with a Lightning Trainer" in m for m in said)
    assert "`CharRNN._init_state`, which returns it to `CharRNN.training_step`" in said[0]


def test_tdl007_lightning_fix_uses_the_modules_own_device():
    from torchdevlint.applier import fix_source
    from torchdevlint.fixes import FixOptions
    from torchdevlint.rules import DEFAULT_RULES
    fixed = fix_source(textwrap.dedent(LIGHTNING), "snippet.py", DEFAULT_RULES,
                       FixOptions(unsafe=True)).fixed
    assert "torch.zeros(1, n, 8, device=self.device)" in fixed
    assert "torch.rand(x.size(0), 3, device=self.device)" in fixed
    assert found(fixed, "TDL007") == []


def test_tdl007_lightning_on_the_cpu_or_with_device_aware_code_is_silent():
    on_cpu = LIGHTNING.replace("pl.Trainer(max_epochs=1)", 'pl.Trainer(accelerator="cpu")')
    assert found(on_cpu, "TDL007") == []
    aware = LIGHTNING.replace("torch.zeros(1, n, 8)", "torch.zeros(1, n, 8, device=self.device)") \
        .replace("torch.rand(x.size(0), 3)", "torch.rand(x.size(0), 3, device=x.device)")
    assert found(aware, "TDL007") == []
    # a plain nn.Module's training_step is no step a Trainer runs
    plain = LIGHTNING.replace("pl.LightningModule", "nn.Module")
    assert (23, 17) not in found(plain, "TDL007")


# -- TDL007: the whole tuple an init_hidden returns; a function of the file -----------------------

def test_tdl007_a_function_of_the_file_is_followed_only_when_it_always_returns_the_cpu():
    source = """\
        import torch
        import torch.nn as nn


        def mask_for(size, device=None):
            if device is not None:
                return torch.ones(size, size, device=device).tril()
            return torch.ones(size, size).tril()


        class Attention(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.proj = nn.Linear(d, d)

            def forward(self, x):
                scores = self.proj(x) @ x.transpose(-2, -1)
                return scores.masked_fill(mask_for(x.size(1)) == 0, 0.0)


        model = Attention(8).cuda()
        """
    # one return on the device, one on the CPU: no evidence that the call gives a CPU tensor
    assert found(source, "TDL007") == []
    # every return on the CPU: the factory of the one that gives it is reported, in the function
    cpu_only = source.replace("if device is not None:", "if device is None:") \
        .replace(", device=device)", ")")
    assert found(cpu_only, "TDL007") == [(7, 16)]
    said = messages(cpu_only, "TDL007")[0]
    assert "in `mask_for`, which returns it to `Attention.forward`" in said
    assert "move what `mask_for` returns there (`.to(x.device)`)" in said


# -- TDL011: a loss module's CPU weights; a method's CPU state in a loop ---------------------------

def test_tdl011_weighted_criterion_at_module_level_names_the_weights():
    source = """\
        import torch
        import torch.nn as nn

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = nn.Linear(4, 3).to(device)
        weights = torch.tensor([1.0, 2.0, 3.0])
        criterion = nn.CrossEntropyLoss(weights)
        x = torch.randn(8, 4).to(device)
        y = torch.randint(0, 3, (8,)).to(device)
        loss = criterion(model(x), y)
        """
    assert found(source, "TDL011") == [(10, 8)]
    said = messages(source, "TDL011")[0]
    assert "`weights`, a tensor on the CPU that `criterion` was built with" in said
    assert "`criterion.to(device)`" in said
    moved = source.replace("criterion = nn.CrossEntropyLoss(weights)",
                           "criterion = nn.CrossEntropyLoss(weights.to(device))")
    assert found(moved, "TDL011") == []
    on_cpu = source.replace(".to(device)", "")
    assert found(on_cpu, "TDL011") == []  # nothing on an accelerator: nothing to meet


def test_tdl011_a_loss_without_weight_first_takes_only_keywords():
    source = """\
        import torch
        import torch.nn as nn

        device = torch.device("cuda")
        model = nn.Linear(4, 1).to(device)
        margin = nn.MultiMarginLoss(1, 1.0, torch.tensor([1.0, 2.0]))
        smooth = nn.SmoothL1Loss(torch.tensor([1.0]))
        x = torch.randn(8, 4, device=device)
        out = model(x)
        loss = margin(out, torch.zeros(8, dtype=torch.long, device=device)) + smooth(out, out)
        """
    # positional tensors of loss classes whose first parameter is no weight are not followed
    assert found(source, "TDL011") == []


def test_tdl011_a_method_that_returns_cpu_tensors_to_a_loop():
    source = """\
        import torch
        import torch.nn as nn


        class RNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.gru = nn.GRU(4, 8)

            def init_hidden(self, n):
                return torch.zeros(1, n, 8)

            def forward(self, x, h):
                return self.gru(x, h)


        device = "cuda"
        model = RNN().to(device)
        for step in range(3):
            x = torch.randn(5, 2, 4, device=device)
            h = model.init_hidden(2)
            out, h = model(x, h)
        """
    assert found(source, "TDL011") == [(22, 14)]
    said = messages(source, "TDL011")[0]
    assert "made by `torch.zeros(1, n, 8)`" in said


# -- the facts ----------------------------------------------------------------------------------

def test_placement_follows_a_method_of_an_instance_and_a_returned_tuple():
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class RNN(nn.Module):
            def init_hidden(self, n):
                return torch.zeros(1, n, 8), torch.zeros(1, n, 8)

            def on_device(self, n):
                return torch.zeros(1, n, 8, device="cuda"), torch.zeros(1, n, 8)


        model = RNN().cuda()
        a = model.init_hidden(2)
        b = model.on_device(2)
        """)
    analysis = Analysis(cst.parse_module(source))
    scope = analysis.collected.module_scope
    reads = {site.call.func.attr.value: site.call
             for name in ("init_hidden", "on_device")
             for site in analysis.collected.calls_by_name[name]}
    # every element on the CPU: the tuple is; and the moved model's method is no output of it
    assert analysis.on_cpu(reads["init_hidden"], scope) is not None
    assert analysis.on_accelerator(reads["init_hidden"], scope) is None
    assert analysis.on_cpu(reads["on_device"], scope) is None
    method, calls = analysis.placement.gives_a_tuple(reads["init_hidden"], scope)
    assert method.name == "init_hidden" and len(calls) == 2


def test_placement_names_the_tensors_a_loss_module_holds():
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn

        w = torch.ones(3)
        a = nn.CrossEntropyLoss(w)
        b = nn.BCEWithLogitsLoss(pos_weight=w)
        c = nn.CrossEntropyLoss(weight=w).cuda()
        d = nn.CrossEntropyLoss(weight=w)
        d.to("cuda")
        e = nn.MSELoss()
        """)
    analysis = Analysis(cst.parse_module(source))
    scope = analysis.collected.module_scope
    held = {name: analysis.placement.tensors_held(cst.Name(name), scope) for name in "abcde"}
    assert [len(held[n]) for n in "abcde"] == [1, 1, 0, 0, 0]


def test_methods_that_return_each_other_are_analysed():
    # (torch/storage.py: ``size`` returns ``self.nbytes()``, which returns ``self.size()``;
    # asked what ``s.size()`` returns, the placement asked itself again: "file is too deeply
    # nested to analyse")
    source = """\
        import torch


        class Storage:
            def size(self):
                return self.nbytes()

            def nbytes(self):
                return self.size()

            def zeros(self, n):
                return torch.zeros(n, 4)


        s = Storage()
        n = s.size()
        total = s.zeros(2) + torch.ones(2, 4, device="cuda")
        """
    result = lint_source(textwrap.dedent(source), "snippet.py")
    assert result.error is None
    assert not [f for f in result.findings if f.code in ("TDL999", "E999")]
    assert found(source, "TDL011") == [(17, 9)]
