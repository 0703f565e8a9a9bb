"""
Sentdex/GANTheftAuto inference.py (from NVIDIA's GameGAN), minimised: the generator is a small
stand-in, the keyboard is a random choice, the frames are printed instead of shown.
"""
import argparse
import copy
import random

import numpy as np
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, opts):
        super().__init__()
        self.step = nn.Linear(opts.z + opts.action_space, opts.z)

    def run_step(self, prev_state, action):
        return torch.tanh(self.step(torch.cat([prev_state, action], 1)))


def inference(gpu, opts):

    # Initialize values
    opts = copy.deepcopy(opts)
    opts.gpu = gpu

    curdata = opts.data
    if curdata == 'vroom':
        action_left = [1, 0, 0]
        action_right = [0, 0, 1]
        no_action = [0, 1, 0]
    else:
        raise Exception(f'Not implemented: unknown data type: {curdata}')

    # Initialize torch
    torch.manual_seed(opts.seed)
    if torch.cuda.is_available():
        torch.cuda.set_device(gpu)
        device = torch.device('cuda', gpu)
    else:
        device = torch.device('cpu')

    # Create the generator model
    netG = Generator(opts).to(device)  # utils.build_models: on opts.gpu
    netG.eval()

    prev_state = torch.zeros(1, opts.z, device=device)  # from the warm-up run on the GPU

    for i in range(opts.steps):
        key = random.choice(['a', 'd', None])
        if key == 'a':
            action = torch.tensor([action_left], dtype=torch.float32).to(device)
        elif key == 'd':
            action = torch.tensor([action_right], dtype=torch.float32).to(device)
        else:
            action = torch.tensor([no_action], dtype=torch.float32).to(device)

        # Perform inference
        with torch.no_grad():
            prev_state = netG.run_step(prev_state, action)

        img = prev_state[0].cpu().numpy()
        img = ((img + 1) * 127.5).astype(np.uint8)
        print(i, img[:4])


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--gpu', type=int, default=0)
    parser.add_argument('--data', default='vroom')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--z', type=int, default=8)
    parser.add_argument('--action_space', type=int, default=3)
    parser.add_argument('--steps', type=int, default=3)
    opts = parser.parse_args()
    inference(opts.gpu, opts)
