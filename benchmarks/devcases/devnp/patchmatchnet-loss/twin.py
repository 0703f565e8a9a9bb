# PatchmatchNet issue 35: models/net.py patch_match_net_loss, with train.py's call, minimised.
from typing import List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional
from torch import Tensor


def patch_match_net_loss(depths: List[List[Tensor]], depth_gt: Tensor, mask: Tensor) \
        -> Tuple[Tensor, List[Tensor], List[Tensor]]:
    loss: Tensor = torch.zeros(1, device=mask.device)
    gt_depths: List[Tensor] = [torch.empty(0), torch.empty(0)]
    masks: List[Tensor] = [torch.empty(0), torch.empty(0)]
    for i in range(len(depths)):
        _, _, height, width = depths[i][0].size()
        masks[i] = nn.functional.interpolate(
            mask.unsqueeze(1), size=[height, width], mode='bilinear', align_corners=False) > 0.5
        gt_depths[i] = nn.functional.interpolate(
            depth_gt.unsqueeze(1), size=[height, width], mode='bilinear', align_corners=False)

        for depth in depths[i]:
            loss += nn.functional.smooth_l1_loss(depth[masks[i]], gt_depths[i][masks[i]], reduction='mean')

    return loss, gt_depths, masks


def train_sample(model, sample, device):
    model.train()
    imgs = sample["imgs"].to(device)
    depth_gt = sample["depth_gt"].to(device)
    mask = sample["mask"].to(device)
    depth = model(imgs)
    depths = [[depth], [nn.functional.avg_pool2d(depth, 2)]]
    loss, _, _ = patch_match_net_loss(depths, depth_gt, mask)
    loss.backward()
    return loss.item()


if __name__ == '__main__':
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Conv2d(3, 1, 3, padding=1).to(device)
    sample = {"imgs": torch.rand(2, 3, 8, 8), "depth_gt": torch.rand(2, 8, 8), "mask": torch.ones(2, 8, 8)}
    print(train_sample(model, sample, device))
