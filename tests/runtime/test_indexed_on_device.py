"""TDL011's indexing: a CPU tensor indexed with a tensor on an accelerator (issue 28: the
one-hot idiom `torch.eye(n)[labels]` given the labels it moved) and its runtime proof. ``meta``,
which plays the GPU in the fixtures' proofs, does not check the device of an index
(``cpu_tensor[meta_index]`` runs), so these are proven on the pretend accelerator, which raises
what CUDA raises; the negative fixture ``fixtures/TDL011/negative/indexed_on_device.py`` holds
the silent side (a CPU index into a device tensor, a 0-dim index, a table made there)."""
from __future__ import annotations

import textwrap

import pytest
import torch

from torchdevlint.engine import lint_source
from torchdevlint.rules.registry import classes_by_code
from torchdevlint.runtime import fake_accelerator

INDEX = "indices should be either on cpu or on the same device as the indexed tensor"

ONE_HOT = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def main(device):
        model = nn.Linear(4, 3).to(device)
        x = torch.randn(8, 4).to(device)
        y = torch.randint(0, 3, (8,)).to(device)
        target = torch.eye(3)[y]
        loss = ((model(x) - target) ** 2).mean()
        loss.backward()
        return loss
""")

# in a loop over a data loader: the index is the batch the loop moved; the CPU table is not a
# batch, so TDL004 has nothing to say and TDL011 reports it
LOADER_TABLE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader, TensorDataset


    def main(device):
        model = nn.Linear(4, 3).to(device)
        data = TensorDataset(torch.randn(8, 4), torch.randint(0, 3, (8,)))
        smoothing = torch.full((3, 3), 0.05) + 0.85 * torch.eye(3)
        for x, y in DataLoader(data, batch_size=4):
            x, y = x.to(device), y.to(device)
            target = smoothing[y]
            loss = ((model(x) - target) ** 2).mean()
            loss.backward()
        return loss
""")


# a diffusion schedule kept by a plain object on the CPU and indexed in its method with the
# timesteps every call passes on the device (issue 28: the "indices should be either on cpu"
# of diffusion tutorials' ``self.alpha_hat[t]``). Asked in the order the rule asks, the method
# body was walked before its parameters' placement was known, and that walk was kept.
DIFFUSION_SCHEDULE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Diffusion:
        def __init__(self, timesteps=1000):
            self.betas = torch.linspace(1e-4, 0.02, timesteps)
            self.alpha_hat = torch.cumprod(1.0 - self.betas, dim=0)

        def noise_images(self, x, t):
            sqrt_alpha_hat = torch.sqrt(self.alpha_hat[t])[:, None]
            eps = torch.randn_like(x)
            return sqrt_alpha_hat * x + eps, eps


    def main(device):
        diffusion = Diffusion()
        model = nn.Linear(4, 4).to(device)
        x = torch.randn(8, 4).to(device)
        t = torch.randint(low=1, high=1000, size=(8,)).to(device)
        xt, noise = diffusion.noise_images(x, t)
        return nn.functional.mse_loss(model(xt), noise)
""")


# the schedule indexed in a helper of the file that a method hands it and the timesteps to
# (``_i(self.sqrt_alphas_cumprod, t, x0)`` of modelscope's and VGen's diffusion, whose issues
# quote this error); the schedule is five assignments from its factory
DIFFUSION_HELPER = textwrap.dedent("""\
    import torch


    def _i(tensor, t, x):
        shape = (x.size(0),) + (1,) * (x.ndim - 1)
        return tensor[t].view(shape).to(x)


    class GaussianDiffusion(object):
        def __init__(self, timesteps):
            self.betas = torch.linspace(1e-4, 0.02, timesteps, dtype=torch.float64)
            alphas = 1 - self.betas
            self.alphas_cumprod = torch.cumprod(alphas, dim=0)
            self.sqrt_alphas_cumprod = torch.sqrt(self.alphas_cumprod)

        def q_sample(self, x0, t, noise):
            return _i(self.sqrt_alphas_cumprod, t, x0) * x0 + noise


    def main(device):
        diffusion = GaussianDiffusion(1000)
        x0 = torch.randn(8, 4).to(device)
        t = torch.randint(0, 1000, (8,), device=device)
        return diffusion.q_sample(x0, t, torch.randn_like(x0))
""")


# the timesteps drawn on the device a settings object's class names (``config.device`` of
# ``class TrainingConfig: device = "cuda"``, a DDPM tutorial's, issue 28): a device the code
# holds, as a trainer's ``self.device`` is
SETTINGS_DEVICE = textwrap.dedent("""\
    import torch


    class Config:
        timesteps = 1000
        device = "cuda" if torch.cuda.is_available() else "cpu"


    class Schedule:
        def __init__(self, n):
            self.alphas_hat = torch.cumprod(1 - torch.linspace(1e-4, 0.02, n), dim=0)

        def noise(self, images, t):
            return self.alphas_hat[t].view(-1, 1) * images


    def main(device):
        config = Config()
        schedule = Schedule(config.timesteps)
        images = torch.randn(4, 3, device=config.device)
        t = torch.randint(0, config.timesteps, (4,), device=config.device)
        return schedule.noise(images, t)
""")


# a retrieval evaluation's feature bank kept on the host (appended ``.cpu()``, then joined),
# indexed with the top-k indices of a row of the similarity matrix it iterates on the device
# (BLIP's retrieval evaluation): a row of a device tensor is there, and so are its top-k
FEATURE_BANK = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def evaluate(model, images, queries, k=2):
        feats = []
        embeds = []
        for batch in images:
            f = model(batch)
            feats.append(f.cpu())
            embeds.append(f)
        feats = torch.cat(feats)
        sims = torch.cat(embeds) @ queries.t()
        picked = []
        for i, row in enumerate(sims.t()):
            scores, idx = row.topk(k)
            picked.append(feats[idx])
        return picked


    def main(device):
        model = nn.Linear(4, 4).to(device)
        images = [torch.randn(3, 4).to(device) for _ in range(2)]
        queries = torch.randn(2, 4).to(device)
        return evaluate(model, images, queries)
""")


def run_main(source: str, device):
    namespace: dict = {}
    exec(compile(source, "snippet.py", "exec"), namespace)
    return namespace["main"](device)

# ClimateNet's jaccard loss (issue 21, devreports2): a helper every call of which passes the
# labels of a loader's batch, moved; ``true.squeeze(1)`` keeps the batch's dimension
SQUEEZED_LABELS = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader, TensorDataset


    def jaccard_loss(logits, true, eps=1e-7):
        num_classes = logits.shape[1]
        true_1_hot = torch.eye(num_classes)[true.squeeze(1)]
        true_1_hot = true_1_hot.permute(0, 3, 1, 2).float()
        probas = logits.softmax(dim=1)
        intersection = (probas * true_1_hot).sum((0, 2, 3))
        union = (probas + true_1_hot).sum((0, 2, 3)) - intersection
        return 1 - (intersection / (union + eps)).mean()


    def main(device):
        model = nn.Conv2d(4, 3, 1).to(device)
        data = TensorDataset(torch.randn(4, 4, 5, 5), torch.randint(0, 3, (4, 1, 5, 5)))
        for features, labels in DataLoader(data, batch_size=2):
            features = features.to(device)
            labels = labels.to(device)
            loss = jaccard_loss(model(features), labels)
            loss.backward()
""")

@pytest.mark.parametrize("source,where,words,fixed", [
    (ONE_HOT, (9, 14), "indexing `torch.eye(3)`, a tensor on the CPU (made by `torch.eye(3)`), "
                       "with `y`, on an accelerator (moved by `.to(device)`)",
     ("torch.eye(3)[y]", "torch.eye(3, device=device)[y]")),
    (LOADER_TABLE, (12, 18), "indexing `smoothing`, a tensor on the CPU",
     ("smoothing[y]", "smoothing.to(device)[y]")),
    (DIFFUSION_SCHEDULE, (11, 37), "indexing `self.alpha_hat`, a tensor on the CPU (made by "
                                   "`torch.linspace(1e-4, 0.02, timesteps)`), with `t`, on an "
                                   "accelerator (every call of `noise_images` passes one",
     ("self.alpha_hat[t]", "self.alpha_hat.to(t.device)[t]")),
    (DIFFUSION_HELPER, (17, 16), "the call of `_i` mixes `self.sqrt_alphas_cumprod`, a tensor on "
                                 "the CPU (made by `torch.linspace(1e-4, 0.02, timesteps,...`), "
                                 "with `t`, on an accelerator (every call of `q_sample` passes "
                                 "one on an accelerator), which indexes it in `tensor[t]` in `_i`",
     ("_i(self.sqrt_alphas_cumprod, t, x0)", "_i(self.sqrt_alphas_cumprod.to(t.device), t, x0)")),
    (SETTINGS_DEVICE, (14, 16), "indexing `self.alphas_hat`, a tensor on the CPU",
     ("self.alphas_hat[t]", "self.alphas_hat.to(t.device)[t]")),
    (FEATURE_BANK, (17, 23), "indexing `feats`, a tensor on the CPU (made by `f.cpu()`), with "
                             "`idx`, on an accelerator",
     ("feats[idx]", "feats.to(idx.device)[idx]")),
    (SQUEEZED_LABELS, (8, 18), "indexing `torch.eye(num_classes)`, a tensor on the CPU (made by "
                               "`torch.eye(num_classes)`), with `true.squeeze(1)`, on an "
                               "accelerator (every call of `jaccard_loss` passes one",
     ("torch.eye(num_classes)[", "torch.eye(num_classes, device=true.device)[")),
])
def test_a_cpu_tensor_indexed_with_a_device_tensor_is_flagged_and_fails_on_a_gpu(
        source, where, words, fixed):
    findings = lint_source(source, "snippet.py", [classes_by_code()["TDL011"]]).findings
    assert [(f.line, f.column) for f in findings] == [where]
    assert words in findings[0].message and INDEX in findings[0].message
    assert findings[0].fix is not None
    with fake_accelerator("cuda"):
        with pytest.raises(RuntimeError, match=INDEX):
            run_main(source, torch.device("cuda"))
        run_main(source.replace(*fixed), torch.device("cuda"))  # the fix runs
    run_main(source, torch.device("cpu"))  # (and the CPU run never failed)


def test_a_zero_dim_index_on_the_device_is_read_as_a_number():
    """Why the rule is silent for ``classes[out.argmax()]``: torch reads a 0-dim integer index
    as a number, wherever it is."""
    with fake_accelerator("cuda"):
        table = torch.arange(3)
        assert table[torch.tensor(1, device="cuda")].item() == 1
        with pytest.raises(RuntimeError, match=INDEX):
            table[torch.tensor([1], device="cuda")]


def test_a_schedule_indexed_with_timesteps_its_callers_keep_on_the_cpu_is_silent():
    source = DIFFUSION_SCHEDULE.replace(
        "t = torch.randint(low=1, high=1000, size=(8,)).to(device)",
        "t = torch.randint(low=1, high=1000, size=(8,))").replace(
        "xt, noise = diffusion.noise_images(x, t)",
        "xt, noise = diffusion.noise_images(x.cpu(), t)").replace(
        "model(xt)", "model(xt.to(device))").replace("mse_loss(model(xt.to(device)), noise)",
                                                     "mse_loss(model(xt.to(device)), noise.to(device))")
    assert lint_source(source, "snippet.py", [classes_by_code()["TDL011"]]).findings == []
    with fake_accelerator("cuda"):
        run_main(source, torch.device("cuda"))


def test_a_device_schedule_indexed_in_a_helper_with_cpu_timesteps_is_silent():
    # (the other way round works: a CPU index into a tensor on the device)
    source = DIFFUSION_HELPER.replace(
        "self.betas = torch.linspace(1e-4, 0.02, timesteps, dtype=torch.float64)",
        "self.betas = torch.linspace(1e-4, 0.02, timesteps, dtype=torch.float64, device='cuda')"
    ).replace("t = torch.randint(0, 1000, (8,), device=device)", "t = torch.randint(0, 1000, (8,))")
    assert lint_source(source, "snippet.py", [classes_by_code()["TDL011"]]).findings == []
    with fake_accelerator("cuda"):
        run_main(source, torch.device("cuda"))


@pytest.mark.parametrize("old,new", [
    # a loader that does not batch yields the dataset's items as they are: nothing shows a dimension
    ("DataLoader(data, batch_size=2)", "DataLoader(data, batch_size=None)"),
    # ``squeeze()`` may leave no dimension at all
    ("true.squeeze(1)", "true.squeeze()"),
])
def test_an_index_that_may_have_no_dimension_is_silent(old, new):
    source = SQUEEZED_LABELS.replace(old, new)
    assert lint_source(source, "snippet.py", [classes_by_code()["TDL011"]]).findings == []
