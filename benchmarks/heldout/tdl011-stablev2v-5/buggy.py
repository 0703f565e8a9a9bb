import numpy as np
import torch
import torch.nn as nn


class CompletionNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, depth, mask, shape):
        return torch.sigmoid(self.conv(torch.cat([depth, mask, shape], dim=1))), None


def depth_completion_net_inference_runner(depth_maps, masks, shapes, completion_net, device):
    depth_maps_tensor = torch.from_numpy(depth_maps).float().unsqueeze(1)
    mask_tensor = torch.from_numpy(masks).float().unsqueeze(1)
    shape_tensor = torch.from_numpy(shapes).float().unsqueeze(1)
    # 3. Forward
    with torch.no_grad():
        pred_depth_maps, _ = completion_net(depth_maps_tensor.to(device), mask_tensor.to(device), shape_tensor.to(device))
    pred_depth_maps = (1 - mask_tensor) * depth_maps_tensor + mask_tensor * pred_depth_maps
    return pred_depth_maps


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
completion_net = CompletionNet().to(device)
out = depth_completion_net_inference_runner(np.random.rand(2, 8, 8), np.random.rand(2, 8, 8) > 0.5,
                                            np.random.rand(2, 8, 8), completion_net, device)
print(out.shape)
