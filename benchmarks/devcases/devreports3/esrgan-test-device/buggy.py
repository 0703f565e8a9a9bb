# xinntao/ESRGAN issue 88 ("Torch not compiled with CUDA enabled" running test.py on a laptop
# without an NVIDIA GPU; the maintainer's answer: change test.py lines 9-10 from "cuda" to
# "cpu"): test.py at 435851e and RRDBNet_arch.py, minimised: the RRDB trunk has one block of
# 8 channels, the weights are not loaded from models/RRDB_ESRGAN_x4.pth, random arrays stand in
# for the cv2.imread of LR/*, and the result is kept instead of written with cv2.imwrite.
import functools

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

model_path = 'models/RRDB_ESRGAN_x4.pth'  # models/RRDB_ESRGAN_x4.pth OR models/RRDB_PSNR_x4.pth
device = torch.device('cuda')  # if you want to run on CPU, change 'cuda' -> cpu
# device = torch.device('cpu')

test_img_folder = 'LR/*'


def make_layer(block, n_layers):
    layers = []
    for _ in range(n_layers):
        layers.append(block())
    return nn.Sequential(*layers)


class ResidualDenseBlock_5C(nn.Module):
    def __init__(self, nf=64, gc=32, bias=True):
        super(ResidualDenseBlock_5C, self).__init__()
        self.conv1 = nn.Conv2d(nf, gc, 3, 1, 1, bias=bias)
        self.conv2 = nn.Conv2d(nf + gc, nf, 3, 1, 1, bias=bias)
        self.lrelu = nn.LeakyReLU(negative_slope=0.2, inplace=True)

    def forward(self, x):
        x1 = self.lrelu(self.conv1(x))
        x2 = self.conv2(torch.cat((x, x1), 1))
        return x2 * 0.2 + x


class RRDBNet(nn.Module):
    def __init__(self, in_nc, out_nc, nf, nb, gc=32):
        super(RRDBNet, self).__init__()
        RRDB_block_f = functools.partial(ResidualDenseBlock_5C, nf=nf, gc=gc)

        self.conv_first = nn.Conv2d(in_nc, nf, 3, 1, 1, bias=True)
        self.RRDB_trunk = make_layer(RRDB_block_f, nb)
        self.trunk_conv = nn.Conv2d(nf, nf, 3, 1, 1, bias=True)
        self.upconv1 = nn.Conv2d(nf, nf, 3, 1, 1, bias=True)
        self.conv_last = nn.Conv2d(nf, out_nc, 3, 1, 1, bias=True)
        self.lrelu = nn.LeakyReLU(negative_slope=0.2, inplace=True)

    def forward(self, x):
        fea = self.conv_first(x)
        trunk = self.trunk_conv(self.RRDB_trunk(fea))
        fea = fea + trunk
        fea = self.lrelu(self.upconv1(F.interpolate(fea, scale_factor=2, mode='nearest')))
        return self.conv_last(fea)


model = RRDBNet(3, 3, 8, 1, gc=4)
model.eval()
model = model.to(device)

print('Model path {:s}. \nTesting...'.format(model_path))

images = {'baboon': np.random.rand(12, 12, 3), 'comic': np.random.rand(10, 14, 3)}
results = {}
idx = 0
for base, img in images.items():
    idx += 1
    print(idx, base)
    # read images
    img = img * 1.0
    img = torch.from_numpy(np.transpose(img[:, :, [2, 1, 0]], (2, 0, 1))).float()
    img_LR = img.unsqueeze(0)
    img_LR = img_LR.to(device)

    with torch.no_grad():
        output = model(img_LR).data.squeeze().float().cpu().clamp_(0, 1).numpy()
    output = np.transpose(output[[2, 1, 0], :, :], (1, 2, 0))
    output = (output * 255.0).round()
    results[base] = output
print({k: v.shape for k, v in results.items()})
