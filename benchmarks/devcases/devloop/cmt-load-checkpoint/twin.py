"""keunsoo-ko/CMT utils.py and demo.py, minimised (Inpaint is a small stand-in)."""
import argparse

import numpy as np
import torch
import torch.nn as nn


class Inpaint(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(8, 3, 3, padding=1))

    def forward(self, gt, mask):
        return self.net(torch.cat([gt * (1 - mask), mask], 1))


# --- utils.py ---
def _load(checkpoint_path):
    checkpoint = torch.load(checkpoint_path, map_location="cpu")
    return checkpoint

def load_checkpoint(path, model, optimizer=None, reset_optimizer=True, is_dis=False):
    print("Load checkpoint from: {}".format(path))
    checkpoint = _load(path)
    if is_dis:
        s = checkpoint["disc"]
    else:
        s = checkpoint["state_dict"]
    new_s = {}
    for k, v in s.items():
        new_s[k.replace('module.', '')] = v
    model.load_state_dict(new_s, strict=True)
    if not reset_optimizer:
        optimizer_state = checkpoint["optimizer"]
        if optimizer_state is not None:
            print("Load optimizer state from {}".format(path))
            optimizer.load_state_dict(checkpoint["optimizer"])
    return model

def psnr(img1, img2):
    mse = np.mean((img1-img2)** 2)
    if mse == 0:
        return 100
    PIXEL_MAX = 255.0
    return 20 * np.log10(PIXEL_MAX / np.sqrt(mse))


# --- demo.py ---
parser = argparse.ArgumentParser()
parser.add_argument('--ckpt', default="Place2.pth", help='Path for the pretrained model')
args = parser.parse_args()

proposed = Inpaint()
proposed = load_checkpoint(args.ckpt, proposed)
proposed.eval()
gt_ = np.random.rand(16, 16, 3) * 2 - 1.
gt = torch.Tensor(gt_)[None].permute(0, 3, 1, 2)
mask = torch.ones(1, 1, 16, 16)
with torch.no_grad():
    out_pro = proposed(gt, mask)
out_pro = torch.clip(out_pro, -1., 1.)*0.5 + 0.5
out_pro = out_pro[0].permute(1, 2, 0).cpu().detach().numpy() * 255.
print("PSNR {}".format(psnr(out_pro, (gt_ * 0.5 + 0.5)*255.)))
