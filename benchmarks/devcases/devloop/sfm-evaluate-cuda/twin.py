"""ShuweiShao/AF-SfMLearner evaluate_depth.py, minimised (the networks and the dataset are small
stand-ins; the weights come from a fresh model instead of encoder.pth/depth.pth)."""
from __future__ import absolute_import, division, print_function

import argparse

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


def disp_to_depth(disp, min_depth, max_depth):
    min_disp = 1 / max_depth
    max_disp = 1 / min_depth
    scaled_disp = min_disp + (max_disp - min_disp) * disp
    depth = 1 / scaled_disp
    return scaled_disp, depth


class ResnetEncoder(nn.Module):
    def __init__(self, num_layers, pretrained):
        super(ResnetEncoder, self).__init__()
        self.num_ch_enc = np.array([8])
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, input_image):
        return [self.conv(input_image)]


class DepthDecoder(nn.Module):
    def __init__(self, num_ch_enc, scales=range(4)):
        super(DepthDecoder, self).__init__()
        self.conv = nn.Conv2d(int(num_ch_enc[-1]), 1, 3, padding=1)

    def forward(self, input_features):
        return {("disp", 0): torch.sigmoid(self.conv(input_features[-1]))}


class SCAREDRAWDataset(Dataset):
    def __init__(self, n, height, width):
        self.n, self.height, self.width = n, height, width

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        return {("color", 0, 0): torch.rand(3, self.height, self.width)}


def evaluate(opt):
    """Evaluates a pretrained model using a specified test set
    """
    dataset = SCAREDRAWDataset(4, 32, 32)
    dataloader = DataLoader(dataset, 16, shuffle=False, num_workers=opt.num_workers,
                            pin_memory=False, drop_last=False)

    encoder = ResnetEncoder(opt.num_layers, False)
    depth_decoder = DepthDecoder(encoder.num_ch_enc, scales=range(4))

    encoder.eval()
    depth_decoder.eval()

    pred_disps = []

    with torch.no_grad():
        for data in dataloader:
            input_color = data[("color", 0, 0)]

            output = depth_decoder(encoder(input_color))
            pred_disp, _ = disp_to_depth(output[("disp", 0)], opt.min_depth, opt.max_depth)
            pred_disp = pred_disp.cpu()[:, 0].numpy()

            pred_disps.append(pred_disp)

    pred_disps = np.concatenate(pred_disps)
    print("-> Done!", pred_disps.shape)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_layers", type=int, default=18)
    parser.add_argument("--num_workers", type=int, default=0)
    parser.add_argument("--min_depth", type=float, default=0.1)
    parser.add_argument("--max_depth", type=float, default=150.0)
    evaluate(parser.parse_args())
