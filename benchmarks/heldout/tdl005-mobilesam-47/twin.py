import itertools
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim, key_dim, num_heads=2, resolution=(4, 4)):
        super().__init__()
        self.num_heads = num_heads
        self.scale = key_dim ** -0.5
        self.key_dim = key_dim
        self.qkv = nn.Linear(dim, num_heads * key_dim * 3)
        self.proj = nn.Linear(num_heads * key_dim, dim)
        points = list(itertools.product(range(resolution[0]), range(resolution[1])))
        N = len(points)
        attention_offsets = {}
        idxs = []
        for p1 in points:
            for p2 in points:
                offset = (abs(p1[0] - p2[0]), abs(p1[1] - p2[1]))
                if offset not in attention_offsets:
                    attention_offsets[offset] = len(attention_offsets)
                idxs.append(attention_offsets[offset])
        self.attention_biases = nn.Parameter(torch.zeros(num_heads, len(attention_offsets)))
        self.register_buffer('attention_bias_idxs', torch.LongTensor(idxs).view(N, N), persistent=False)

    @torch.no_grad()
    def train(self, mode=True):
        super().train(mode)
        if mode and hasattr(self, 'ab'):
            del self.ab
        else:
            self.register_buffer('ab', self.attention_biases[:, self.attention_bias_idxs], persistent=False)

    def forward(self, x):
        B, N, _ = x.shape
        qkv = self.qkv(x).view(B, N, self.num_heads, -1).permute(0, 2, 1, 3)
        q, k, v = qkv.split([self.key_dim, self.key_dim, self.key_dim], dim=3)
        attn = ((q @ k.transpose(-2, -1)) * self.scale
                + (self.attention_biases[:, self.attention_bias_idxs] if self.training else self.ab))
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, -1)
        return self.proj(x)


device = "cuda" if torch.cuda.is_available() else "cpu"
model = Attention(dim=8, key_dim=4)
model.eval()
model.to(device)
with torch.no_grad():
    print(model(torch.randn(1, 16, 8, device=device)).shape)
