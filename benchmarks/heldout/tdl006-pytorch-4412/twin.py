import torch
import torch.nn as nn


class RegionLayer(nn.Module):
    def __init__(self, in_channels):
        super(RegionLayer, self).__init__()
        self.in_channels = in_channels
        self.convs = nn.ModuleList([nn.Sequential(
            nn.Conv2d(in_channels=self.in_channels, out_channels=self.in_channels,
                      kernel_size=3, stride=1, padding=1),
            nn.Conv2d(in_channels=self.in_channels, out_channels=self.in_channels,
                      kernel_size=3, stride=1, padding=1),
        ),
        nn.Sequential(
            nn.Conv2d(in_channels=self.in_channels, out_channels=self.in_channels,
                      kernel_size=3, stride=1, padding=1),
            nn.Conv2d(in_channels=self.in_channels, out_channels=self.in_channels,
                      kernel_size=3, stride=1, padding=1),
        ), ])

    def forward(self, x):
        output = self.convs[0](x)
        output = self.convs[1](output)
        return output


net = RegionLayer(4)
if torch.cuda.is_available():
    net.cuda()
x = torch.randn(1, 4, 8, 8, device="cuda" if torch.cuda.is_available() else "cpu")
print(net(x).shape)
