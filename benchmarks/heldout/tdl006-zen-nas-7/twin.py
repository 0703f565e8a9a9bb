import torch
import torch.nn as nn


class ConvKX(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding=kernel_size // 2)

    def forward(self, x):
        return self.conv(x)


def create_netblock_list_from_str(plainnet_struct):
    block_list = []
    in_channels = 3
    for out_channels, stride in plainnet_struct:
        block_list.append(ConvKX(in_channels, out_channels, 3, stride))
        in_channels = out_channels
    return block_list


class PlainNet(nn.Module):
    def __init__(self, plainnet_struct, num_classes=10):
        super().__init__()
        self.block_list = nn.ModuleList(create_netblock_list_from_str(plainnet_struct))
        self.fc_linear = nn.Linear(plainnet_struct[-1][0], num_classes)

    def forward(self, x):
        output = x
        for the_block in self.block_list:
            output = the_block(output)
        output = output.mean(dim=(2, 3))
        return self.fc_linear(output)


gpu = 0 if torch.cuda.is_available() else None
model = PlainNet([(8, 2), (16, 2)])
if gpu is not None:
    torch.cuda.set_device(gpu)
    model = model.cuda(gpu)
x = torch.randn(2, 3, 16, 16)
if gpu is not None:
    x = x.cuda(gpu)
print(model(x).shape)
