import math
import torch


class TorchSelfAttention(torch.nn.Module):
    def __init__(self, scale=None):
        super().__init__()
        self.scale = scale

    def forward(self, query, key, value):
        L, S = query.size(-2), key.size(-2)
        scale_factor = 1 / math.sqrt(query.size(-1)) if self.scale is None else self.scale
        attn_bias = torch.zeros(L, S, dtype=query.dtype, device=query.device)
        temp_mask = torch.ones(L, S, dtype=torch.bool, device=query.device).tril(diagonal=S - L)
        attn_bias.masked_fill_(temp_mask.logical_not(), float("-inf"))
        attn_weight = query @ key.transpose(-2, -1) * scale_factor
        attn_weight += attn_bias
        attn_weight = torch.softmax(attn_weight, dim=-1)
        return attn_weight @ value


device = "cuda" if torch.cuda.is_available() else "cpu"
q = torch.randn(2, 5, 8, device=device)
k = torch.randn(2, 7, 8, device=device)
v = torch.randn(2, 7, 8, device=device)
print(TorchSelfAttention()(q, k, v).shape)
