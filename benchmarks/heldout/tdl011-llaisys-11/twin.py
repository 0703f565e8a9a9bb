import math
import torch


def torch_self_attention(attn_val, query, key, value, scale):
    query = query.transpose(-2, -3)
    key = key.transpose(-2, -3)
    value = value.transpose(-2, -3)
    L, S = query.size(-2), key.size(-2)
    attn_bias = torch.zeros(L, S, dtype=query.dtype, device=query.device)
    temp_mask = torch.ones(L, S, dtype=torch.bool, device=query.device).tril(diagonal=S - L)
    attn_bias.masked_fill_(temp_mask.logical_not(), float("-inf"))
    attn_weight = query @ key.transpose(-2, -1) * scale
    attn_weight += attn_bias
    attn_weight = torch.softmax(attn_weight, dim=-1)
    attn_val.copy_((attn_weight @ value).transpose(-2, -3))


def test_op_self_attention(qlen, kvlen, nh, hd, device_name):
    device = torch.device(device_name)
    q = torch.randn(qlen, nh, hd, device=device)
    k = torch.randn(kvlen, nh, hd, device=device)
    v = torch.randn(kvlen, nh, hd, device=device)
    attn_val = torch.zeros(qlen, nh, hd, device=device)
    torch_self_attention(attn_val, q, k, v, 1.0 / math.sqrt(hd))
    print(attn_val.shape)


test_op_self_attention(5, 7, 2, 4, "cuda" if torch.cuda.is_available() else "cpu")
