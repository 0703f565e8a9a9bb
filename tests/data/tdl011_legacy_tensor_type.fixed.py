"""Code written before torch 0.4 (PyTorch-GAN's DRAGAN): the batch goes to the GPU through
`.type(Tensor)` with `Tensor = torch.cuda.FloatTensor`, and the perturbation that the gradient
penalty adds to it is drawn with `torch.rand(...)` on the CPU."""
import torch
import torch.nn as nn


def perturbed(real, device):
    cuda = device.type == "cuda"
    Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
    X = real.type(Tensor)
    return X + (0.5 * torch.rand(X.size(0), 4)).to(X.device)  # expect: TDL011@12


def main(device):
    D = nn.Linear(4, 1).to(device)
    return D(perturbed(torch.randn(8, 4), device))


if __name__ == "__main__":
    main(torch.device("cuda" if torch.cuda.is_available() else "cpu"))
