import torch
import torch.nn as nn
net = nn.Module()
net.conv0 = nn.Conv2d(3, 9, 3, padding=1)
torch.save({"arch": "SpixelNet1l_bn", "state_dict": net.to("cuda").state_dict()}, "SpixelNet_bsd_ckpt.tar")
