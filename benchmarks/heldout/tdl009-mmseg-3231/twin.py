import torch
import torch.nn as nn
import torch.nn.functional as F


class NMF2D(nn.Module):
    def __init__(self, S=1, D=16, R=4):
        super().__init__()
        self.S, self.D, self.R = S, D, R

    def _build_bases(self, B, S, D, R, device=None):
        if device is None:
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        bases = torch.rand((B * S, D, R), device=device)
        bases = F.normalize(bases, dim=1)
        return bases

    def forward(self, x):
        B, C, H, W = x.shape
        D = C // self.S
        N = H * W
        x = x.view(B * self.S, D, N)
        bases = self._build_bases(B, self.S, D, self.R, device=x.device)
        coef = torch.softmax(torch.bmm(x.transpose(1, 2), bases), dim=-1)
        x = torch.bmm(bases, coef.transpose(1, 2))
        return x.view(B, C, H, W)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
ham = NMF2D().to(device)
print(ham(torch.rand(2, 16, 4, 4, device=device)).shape)
