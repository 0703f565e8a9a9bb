# MPRNet issue 91 (the line it quotes, the maintainer's fix): Deblurring/train.py's training loop
# with losses.py's CharbonnierLoss and EdgeLoss, minimised (a three-stage toy network returning
# its stage outputs like MPRNet, random image pairs, one epoch, no scheduler or validation).
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

import numpy as np


class CharbonnierLoss(nn.Module):
    """Charbonnier Loss (L1)"""

    def __init__(self, eps=1e-3):
        super(CharbonnierLoss, self).__init__()
        self.eps = eps

    def forward(self, x, y):
        diff = x - y
        loss = torch.mean(torch.sqrt((diff * diff) + (self.eps*self.eps)))
        return loss


class EdgeLoss(nn.Module):
    def __init__(self):
        super(EdgeLoss, self).__init__()
        k = torch.Tensor([[.05, .25, .4, .25, .05]])
        self.kernel = torch.matmul(k.t(),k).unsqueeze(0).repeat(3,1,1,1)
        if torch.cuda.is_available():
            self.kernel = self.kernel.cuda()
        self.loss = CharbonnierLoss()

    def conv_gauss(self, img):
        n_channels, _, kw, kh = self.kernel.shape
        img = F.pad(img, (kw//2, kh//2, kw//2, kh//2), mode='replicate')
        return F.conv2d(img, self.kernel, groups=n_channels)

    def laplacian_kernel(self, current):
        filtered    = self.conv_gauss(current)    # filter
        down        = filtered[:,:,::2,::2]               # downsample
        new_filter  = torch.zeros_like(filtered)
        new_filter[:,:,::2,::2] = down*4                  # upsample
        filtered    = self.conv_gauss(new_filter) # filter
        diff = current - filtered
        return diff

    def forward(self, x, y):
        loss = self.loss(self.laplacian_kernel(x), self.laplacian_kernel(y))
        return loss


class MPRNet(nn.Module):
    def __init__(self):
        super(MPRNet, self).__init__()
        self.stage1 = nn.Conv2d(3, 3, 3, padding=1)
        self.stage2 = nn.Conv2d(3, 3, 3, padding=1)
        self.stage3 = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x3_img):
        stage1_img = self.stage1(x3_img) + x3_img
        stage2_img = self.stage2(stage1_img) + x3_img
        stage3_img = self.stage3(stage2_img) + x3_img
        return [stage3_img, stage2_img, stage1_img]


model_restoration = MPRNet()
model_restoration.cuda()

optimizer = optim.Adam(model_restoration.parameters(), lr=2e-4, betas=(0.9, 0.999), eps=1e-8)

criterion_char = CharbonnierLoss()
criterion_edge = EdgeLoss()

train_dataset = TensorDataset(torch.rand(4, 3, 16, 16), torch.rand(4, 3, 16, 16))
train_loader = DataLoader(dataset=train_dataset, batch_size=2, shuffle=True, drop_last=False)

for epoch in range(1, 2):
    epoch_loss = 0

    model_restoration.train()
    for i, data in enumerate(train_loader, 0):

        # zero_grad
        for param in model_restoration.parameters():
            param.grad = None

        target = data[0].cuda()
        input_ = data[1].cuda()

        restored = model_restoration(input_)

        # Compute loss at each stage
        loss_char = np.sum([criterion_char(restored[j],target) for j in range(len(restored))])
        loss_edge = np.sum([criterion_edge(restored[j],target) for j in range(len(restored))])
        loss = (loss_char) + (0.05*loss_edge)

        loss.backward()
        optimizer.step()
        epoch_loss +=loss.item()

    print("Epoch: {}\tLoss: {:.4f}".format(epoch, epoch_loss))
