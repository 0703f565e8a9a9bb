import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv1DClassifier(nn.Module):

    def __init__(self, num_classes):
        super(Conv1DClassifier, self).__init__()
        encoder_out_channels = 8
        encoder_kernel_size = 4
        encoder_stride = 4
        n_layers = int(math.log2(encoder_out_channels))
        self.conv_layers = []
        for layer_idx in range(n_layers):
            self.conv_layers.append(
                nn.Conv1d(
                    in_channels=2 ** layer_idx,
                    out_channels=2 ** (layer_idx + 1),
                    kernel_size=encoder_kernel_size,
                    stride=encoder_stride
                )
            )
        self.fc1 = nn.Linear(encoder_out_channels, 16)
        self.fc2 = nn.Linear(16, num_classes)

    def forward(self, x):
        for conv_layer in self.conv_layers:
            x = F.relu(conv_layer(x))
        x = x.mean(-1)
        return self.fc2(F.relu(self.fc1(x)))


device = "cuda" if torch.cuda.is_available() else "cpu"
model = Conv1DClassifier(num_classes=3).to(device)
print(model(torch.randn(2, 1, 256, device=device)).shape)
