import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Generator(nn.Module):
    def __init__(self, scale_factor=2):
        super().__init__()
        self.block = nn.Sequential(nn.Conv2d(3, 12, 3, padding=1), nn.PixelShuffle(scale_factor))

    def forward(self, x):
        return torch.tanh(self.block(x))


netG = Generator()
if torch.cuda.is_available():
    netG.cuda()
val_loader = DataLoader(TensorDataset(torch.rand(4, 3, 8, 8), torch.rand(4, 3, 16, 16)), batch_size=2)

netG.eval()
torch.set_grad_enabled(False)
valing_results = {'mse': 0, 'batch_sizes': 0}
val_images = []
for val_lr, val_hr in val_loader:
    batch_size = val_lr.size(0)
    valing_results['batch_sizes'] += batch_size
    lr = val_lr
    hr = val_hr
    if torch.cuda.is_available():
        lr = lr.cuda()
        hr = hr.cuda()
    sr = netG(lr)
    batch_mse = ((sr - hr) ** 2).data.mean()
    valing_results['mse'] += batch_mse * batch_size
    val_images.extend([hr.squeeze(0), sr.squeeze(0)])
print(torch.stack(val_images).sum())
