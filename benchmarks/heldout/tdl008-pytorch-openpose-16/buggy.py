import numpy as np
import torch
import torch.nn as nn


class handpose_model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 22, 3, padding=1)

    def forward(self, x):
        return self.conv(x)


class Hand(object):
    def __init__(self):
        self.model = handpose_model()
        if torch.cuda.is_available():
            self.model = self.model.cuda()
        self.model.eval()

    def __call__(self, oriImg):
        im = np.transpose(np.float32(oriImg[:, :, :, np.newaxis]), (3, 2, 0, 1)) / 256 - 0.5
        im = np.ascontiguousarray(im)
        data = torch.from_numpy(im).float()
        if torch.cuda.is_available():
            data = data.cuda()
        with torch.no_grad():
            output = self.model(data).numpy()
        heatmap = np.transpose(np.squeeze(output), (1, 2, 0))
        return heatmap.argmax(axis=2)


hand_estimation = Hand()
print(hand_estimation(np.random.rand(16, 16, 3) * 255).shape)
