import math
import torch
import torch.nn as nn


def get_2dalibi(num_heads, num_patches):
    points = [(i, j) for i in range(int(math.sqrt(num_patches))) for j in range(int(math.sqrt(num_patches)))]
    slopes = torch.tensor([2 ** (-8 * (h + 1) / num_heads) for h in range(num_heads)]).unsqueeze(1)
    idxs = []
    for p1 in points:
        for p2 in points:
            idxs.append(math.sqrt((p1[0] - p2[0]) ** 2 + (p1[1] - p2[1]) ** 2))
    all_bias = torch.tensor(idxs).view(1, num_patches * num_patches) * slopes * -1
    return all_bias.view(1, num_heads, num_patches, num_patches)


class Attention(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)

    def forward(self, x, relative_position_bias):
        b, n, d = x.shape
        q, k, v = self.to_qkv(x).view(b, n, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        attn = (q @ k.transpose(-2, -1)) * q.shape[-1] ** -0.5 + relative_position_bias
        return (attn.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d)


class CROMA(nn.Module):
    def __init__(self, dim=16, num_heads=2, image_resolution=16, patch_size=4):
        super().__init__()
        self.num_patches = (image_resolution // patch_size) ** 2
        self.patch_embed = nn.Linear(patch_size * patch_size * 3, dim)
        self.attn = Attention(dim, num_heads)
        self.register_buffer('attn_bias', get_2dalibi(num_heads=num_heads, num_patches=self.num_patches))
        self.patch_size = patch_size

    def forward(self, x):
        p = self.patch_size
        patches = x.unfold(2, p, p).unfold(3, p, p).permute(0, 2, 3, 1, 4, 5).flatten(3).flatten(1, 2)
        return self.attn(self.patch_embed(patches), relative_position_bias=self.attn_bias)


device = "cuda" if torch.cuda.is_available() else "cpu"
model = CROMA().to(device)
print(model(torch.randn(2, 3, 16, 16, device=device)).shape)
