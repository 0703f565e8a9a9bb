import torch
import torch.nn as nn
inner = nn.Module()
inner.key = nn.Conv2d(4, 8, 3, padding=1)
torch.save({"module." + k: v for k, v in inner.to("cuda").state_dict().items()}, "STM_weights.pth")
