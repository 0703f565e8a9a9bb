"""The standard device-agnostic training loop (issue 29, acceptance 2), as a user writes it.

It reads the device the way device-agnostic code does, so on the pretend accelerator it takes
its GPU path: pin_memory and workers, autocast + GradScaler, fused and foreach AdamW, SGD,
gradient clipping, an EMA copy by deepcopy, a default device, a checkpoint round trip.
Returns what the test checks.
"""
import copy
import io

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Tokens(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, index):
        generator = torch.Generator().manual_seed(index)
        return {"image": torch.randn(3, 8, 8, generator=generator),
                "tokens": torch.randint(0, 20, (6,), generator=generator),
                "label": torch.tensor(index % 3)}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.embed = nn.Embedding(20, 8)
        self.lstm = nn.LSTM(8, 8, batch_first=True)
        self.norm = nn.LayerNorm(8)
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.head = nn.Linear(4 + 8, 3)

    def forward(self, image, tokens):
        pixels = torch.relu(self.bn(self.conv(image))).mean(dim=(2, 3))
        words = self.embed(tokens)
        hidden = torch.zeros(1, tokens.shape[0], 8, device=tokens.device)
        words, _ = self.lstm(words, (hidden, hidden.clone()))
        words = self.norm(words)
        mask = torch.triu(torch.ones(tokens.shape[1], tokens.shape[1], dtype=torch.bool,
                                     device=tokens.device), diagonal=1)
        words, _ = self.attn(words, words, words, attn_mask=mask)
        return self.head(torch.cat([pixels, words.mean(1)], dim=1))


def run(workers=2, steps=2, forget="nothing"):
    """``forget="label"``: the loop leaves the labels on the CPU (the bug to catch)."""
    # oneDNN's LSTM has no bfloat16/float16 kernel on CPUs without AVX-512 BF16 (an AMD EPYC
    # runner: "could not create a primitive descriptor for the LSTM forward propagation
    # primitive" under autocast, on the CPU and under the pretend accelerator alike); torch's
    # own kernels have one everywhere. A GPU does not use oneDNN.
    with torch.backends.mkldnn.flags(enabled=False):
        return _run(workers, steps, forget)


def _run(workers, steps, forget):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cudnn.benchmark = True
    loader = DataLoader(Tokens(), batch_size=4, num_workers=workers,
                        pin_memory=torch.cuda.is_available())
    model = Net().to(device)
    ema = copy.deepcopy(model).eval()
    optimizers = [torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True),
                  torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True),
                  torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)]
    scaler = torch.amp.GradScaler(device.type)
    amp_dtype = torch.float16 if device.type == "cuda" else torch.bfloat16
    losses = []
    pinned = []
    for step, batch in enumerate(loader):
        pinned.append(batch["image"].is_pinned())
        batch = {key: value if key == forget else value.to(device, non_blocking=True)
                 for key, value in batch.items()}
        with torch.autocast(device_type=device.type, dtype=amp_dtype):
            logits = model(batch["image"], batch["tokens"])
            loss = nn.functional.cross_entropy(logits, batch["label"])
        optimizer = optimizers[step % len(optimizers)]
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        with torch.no_grad():
            for averaged, current in zip(ema.parameters(), model.parameters()):
                averaged.mul_(0.9).add_(current, alpha=0.1)
        losses.append(loss.item())
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        if step + 1 == steps * len(optimizers):
            break
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizers[0].state_dict()}, buffer)
    buffer.seek(0)
    restored = Net().to(device)
    state = torch.load(buffer, map_location=device)
    restored.load_state_dict(state["model"])
    probe = next(iter(loader))
    with torch.no_grad():
        restored.eval()
        model.eval()
        same = torch.equal(restored(probe["image"].to(device), probe["tokens"].to(device)),
                           model(probe["image"].to(device), probe["tokens"].to(device)))
    previous = torch.get_default_device()
    torch.set_default_device(device)
    try:
        default_made = torch.zeros(2)
        extra = nn.Linear(2, 2)
        default_out = extra(default_made)
    finally:
        torch.set_default_device(previous)
    return {"device": device, "losses": losses, "pinned": pinned, "same_after_reload": same,
            "param_device": next(model.parameters()).device,
            "ema_device": next(ema.parameters()).device,
            "state_device": state["model"]["head.weight"].device,
            "default_device": default_out.device,
            "logits_device": logits.device}
