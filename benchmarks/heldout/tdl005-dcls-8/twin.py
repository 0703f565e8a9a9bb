import torch
import torch.nn as nn


class ConstructKernel2d(nn.Module):
    def __init__(self, out_channels, in_channels, kernel_count, dilated_kernel_size):
        super().__init__()
        self.out_channels = out_channels
        self.in_channels = in_channels
        self.kernel_count = kernel_count
        self.dilated_kernel_size = dilated_kernel_size
        self.__init_tmp_variables__()

    def __init_tmp_variables__(self):
        J = torch.arange(0, self.dilated_kernel_size[0]).to(torch.float32)
        I = torch.arange(0, self.dilated_kernel_size[1]).to(torch.float32)
        I = I.expand(self.dilated_kernel_size[0], -1)
        J = J.expand(self.dilated_kernel_size[1], -1).t()
        self.register_buffer('IDX', torch.stack((I, J)))
        self.register_buffer('lim', torch.tensor(self.dilated_kernel_size).view(2, 1, 1, 1))

    def forward(self, W, P):
        P = P + self.lim // 2
        X = self.IDX.view(2, 1, 1, 1, *self.dilated_kernel_size) - P.unsqueeze(-1).unsqueeze(-1)
        X = torch.exp(-0.5 * (X ** 2).sum(0))
        return (W.unsqueeze(-1).unsqueeze(-1) * X).sum(2)


class Dcls2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_count=3, dilated_kernel_size=(5, 5)):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_channels, in_channels, kernel_count))
        self.P = nn.Parameter(torch.randn(2, out_channels, in_channels, kernel_count))
        self.kernel = ConstructKernel2d(out_channels, in_channels, kernel_count, dilated_kernel_size)

    def forward(self, x):
        return nn.functional.conv2d(x, self.kernel(self.weight, self.P), padding=2)


device = "cuda" if torch.cuda.is_available() else "cpu"
layer = Dcls2d(3, 4).to(device)
print(layer(torch.randn(1, 3, 8, 8, device=device)).shape)
