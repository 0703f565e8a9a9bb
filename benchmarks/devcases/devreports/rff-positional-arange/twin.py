# random-fourier-features-pytorch pull request 4 ("PositionalEncoder arange not properly being
# created on device of Tensor"): rff/functional.py positional_encoding and rff/layers.py
# PositionalEncoding in one file, run on the GPU as the PR's new CUDA tests do, minimised
# (the function's @torch.jit.script is left out: the pretend accelerator cannot see inside
# TorchScript).
import numpy as np
import torch
import torch.nn as nn

from torch import Tensor


def positional_encoding(
        v: Tensor,
        sigma: float,
        m: int) -> Tensor:
    r"""`\gamma(\mathbf{v}) = (\dots, \cos{2 \pi \sigma^{(j/m)} \mathbf{v}} , \sin{2 \pi \sigma^{(j/m)} \mathbf{v}}, \dots)`
        where :math:`j \in \{0, \dots, m-1\}`
    """
    j = torch.arange(m, device=v.device)
    coeffs = 2 * np.pi * sigma ** (j / m)
    vp = coeffs * torch.unsqueeze(v, -1)
    vp_cat = torch.cat((torch.cos(vp), torch.sin(vp)), dim=-1)
    return vp_cat.flatten(-2, -1)


class PositionalEncoding(nn.Module):
    """Layer for mapping coordinates using the positional encoding"""

    def __init__(self, sigma: float, m: int):
        super().__init__()
        self.sigma = sigma
        self.m = m

    def forward(self, v: Tensor) -> Tensor:
        return positional_encoding(v, self.sigma, self.m)


if __name__ == '__main__':
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    layer = PositionalEncoding(sigma=1.0, m=10).to(device)
    v = torch.rand(256, 2).to(device)
    print(layer(v).shape)
