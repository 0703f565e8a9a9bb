# RetNet issue 1 ("Tensor created in [get_parallel_decay_mask] is default created on cpu. If
# train on cuda, it will throw ... Expected all tensors to be on the same device"): model.py's
# MultiScaleRetention (parallel and chunkwise paths) with utils.py's split helpers, minimised;
# the XPOS rotation is left out and a random batch replaces the play notebook's text.
from dataclasses import dataclass

import torch
import torch.nn as nn


def split_chunks(*tensors, size, dim=0):
    return (torch.split(x, size, dim=dim) for x in tensors)


def split_heads(tensors, bsz, seqlen, num_heads):
    assert isinstance(tensors, (tuple, list))
    return (x.view(bsz, seqlen, num_heads, -1).transpose(1, 2) for x in tensors)


@dataclass
class RetNetConfig:
    hidden_size: int
    num_heads: int
    qk_dim: int = None
    v_dim: int = None
    chunk_size: int = None

    def __post_init__(self):
        if self.qk_dim is None:
            self.qk_dim = self.hidden_size
        if self.v_dim is None:
            self.v_dim = self.hidden_size * 2


class MultiScaleRetention(nn.Module):
    def __init__(self, config: RetNetConfig):
        super().__init__()
        self.config = config
        self.qkv = nn.Linear(config.hidden_size, config.qk_dim * 2 + config.v_dim, bias=False)
        self.silu = nn.SiLU()
        self.gated = nn.Linear(config.hidden_size, config.v_dim, bias=False)
        self.proj = nn.Linear(config.v_dim, config.hidden_size)
        self.gn = nn.GroupNorm(num_groups=config.num_heads, num_channels=config.v_dim, affine=False)
        s = torch.log(torch.tensor(1 / 32))
        e = torch.log(torch.tensor(1 / 512))
        gamma = 1 - torch.exp(torch.linspace(s, e, config.num_heads))  # [h,]
        self.decay = nn.Parameter(gamma, requires_grad=False)

    def get_parallel_decay_mask(self, length):
        range_tensor = torch.arange(length)
        range_tensor = range_tensor[None, :, None].expand(self.config.num_heads, length, 1)
        exponent = range_tensor - range_tensor.transpose(-1, -2)
        decay_mask = self.decay.view(-1, 1, 1)**exponent
        decay_mask = torch.tril(decay_mask, diagonal=0)
        return decay_mask

    def get_chunkwise_decay(self, chunk_size):
        decay_mask = self.get_parallel_decay_mask(chunk_size)
        chunk_decay = self.decay.view(1, self.config.num_heads, 1, 1)**chunk_size
        exponent = torch.arange(chunk_size, dtype=torch.float).unsqueeze(0) + 1
        inner_decay = (self.decay.unsqueeze(-1)**exponent).view(1, self.config.num_heads,
                                                                chunk_size, 1)
        return decay_mask, chunk_decay, inner_decay

    def parallel_retention(self, q, k, v, decay_mask):
        retention = q @ k.transpose(-1, -2) * k.size(-1)**-0.5
        retention = retention * decay_mask
        return retention @ v

    def chunkwise_retention(self, q, k, v, decay_mask, past_kv=None, chunk_decay=None,
                            inner_decay=None):
        retention = q @ k.transpose(-1, -2) * k.size(-1)**-0.5
        retention = retention * decay_mask
        inner_retention = retention @ v
        if past_kv is None:
            cross_retention = 0
            past_chunk = 0
        else:
            cross_retention = (q @ past_kv) * inner_decay * k.size(-1)**-0.5
            past_chunk = chunk_decay * past_kv
        retention = inner_retention + cross_retention
        current_kv = k.unsqueeze(-1) * v.unsqueeze(-2)
        intra_decay = decay_mask[None, :, -1, :, None, None]
        current_kv = past_chunk + (current_kv * intra_decay).sum(2)
        return retention, current_kv

    def forward(self, x, past_kv=None, forward_impl='parallel'):
        B, T, H = x.size()
        q, k, v = self.qkv(x).split([self.config.qk_dim, self.config.qk_dim, self.config.v_dim],
                                    dim=-1)
        q, k, v = split_heads((q, k, v), B, T, self.config.num_heads)
        if forward_impl == 'parallel':
            decay_mask = self.get_parallel_decay_mask(T)
            retention_out = self.parallel_retention(q, k, v, decay_mask)
        else:
            q_chunks, k_chunks, v_chunks = split_chunks(q, k, v, size=self.config.chunk_size, dim=2)
            ret_chunks = []
            for _q, _k, _v in zip(q_chunks, k_chunks, v_chunks):
                decay_mask, chunk_decay, inner_decay = self.get_chunkwise_decay(_q.size(2))
                out_chunk, past_kv = self.chunkwise_retention(_q, _k, _v, decay_mask,
                                                              past_kv=past_kv,
                                                              chunk_decay=chunk_decay,
                                                              inner_decay=inner_decay)
                ret_chunks.append(out_chunk)
            retention_out = torch.cat(ret_chunks, dim=2)
        retention_out = retention_out.transpose(1, 2).contiguous().view(B, T, self.config.v_dim)
        normed = self.gn(retention_out.view(B * T, self.config.v_dim)).view(B, T, self.config.v_dim)
        out = self.silu(self.gated(x)) * normed
        return self.proj(out)


if __name__ == '__main__':
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    config = RetNetConfig(hidden_size=8, num_heads=2, chunk_size=2)
    msr = MultiScaleRetention(config).to(device)
    x = torch.randn(2, 4, 8, device=device)
    print(msr(x, forward_impl='parallel').shape)
    print(msr(x, forward_impl='chunkwise').shape)
