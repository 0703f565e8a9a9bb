# pytorch-Learning-to-See-in-the-Dark issue 10 (fixed upstream in eef3d66 with .cpu()):
# train_Sony.py's training loop that stores each step's loss.data in the numpy array g_loss,
# minimised (random patches replace the raw Sony images, a one-layer SeeInDark, two epochs).
import numpy as np

import torch
import torch.nn as nn
import torch.optim as optim


class SeeInDark(nn.Module):
    def __init__(self, num_classes=10):
        super(SeeInDark, self).__init__()
        self.conv1_1 = nn.Conv2d(4, 12, kernel_size=3, stride=1, padding=1)

    def forward(self, x):
        conv1 = self.lrelu(self.conv1_1(x))
        out = nn.functional.pixel_shuffle(conv1, 2)
        return out

    def lrelu(self, x):
        outt = torch.max(0.2*x, x)
        return outt


device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')

train_ids = [0, 1, 2, 3]
ps = 16  # patch size for training

input_images = [np.random.rand(1, ps, ps, 4).astype(np.float32) for _ in train_ids]
gt_images = [np.random.rand(1, ps * 2, ps * 2, 3).astype(np.float32) for _ in train_ids]


def reduce_mean(out_im, gt_im):
    return torch.abs(out_im - gt_im).mean()


g_loss = np.zeros((5000, 1))

learning_rate = 1e-4
model = SeeInDark().to(device)
opt = optim.Adam(model.parameters(), lr=learning_rate)
for epoch in range(0, 2):
    cnt = 0
    for ind in np.random.permutation(len(train_ids)):
        cnt += 1
        input_patch = np.minimum(input_images[ind], 1.0)
        gt_patch = np.maximum(gt_images[ind], 0.0)

        in_img = torch.from_numpy(input_patch).permute(0, 3, 1, 2).to(device)
        gt_img = torch.from_numpy(gt_patch).permute(0, 3, 1, 2).to(device)

        model.zero_grad()
        out_img = model(in_img)

        loss = reduce_mean(out_img, gt_img)
        loss.backward()

        opt.step()
        g_loss[ind] = loss.data

        print("%d %d Loss=%.3f" % (epoch, cnt, np.mean(g_loss[np.where(g_loss)])))
