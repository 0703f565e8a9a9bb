import numpy as np
import torch
import torch.nn as nn


class intra_att(nn.Module):
    def __init__(self, hidden_dim):
        super().__init__()
        self.att = nn.Parameter(torch.empty(1, 2 * hidden_dim))
        nn.init.xavier_normal_(self.att.data, gain=1.414)

    def forward(self, nei, h, h_refer):
        nei_emb = nn.functional.embedding(nei, h)
        h_refer = torch.unsqueeze(h_refer, 1).expand_as(nei_emb)
        all_emb = torch.cat([h_refer, nei_emb], dim=-1)
        attn = torch.softmax((all_emb * self.att).sum(-1, keepdim=True), dim=1)
        return (attn * nei_emb).sum(dim=1)


class Sc_encoder(nn.Module):
    def __init__(self, hidden_dim, sample_rate, nei_num):
        super().__init__()
        self.intra = nn.ModuleList([intra_att(hidden_dim) for _ in range(nei_num)])
        self.sample_rate = sample_rate
        self.nei_num = nei_num

    def forward(self, nei_h, nei_index):
        embeds = []
        for i in range(self.nei_num):
            sele_nei = []
            sample_num = self.sample_rate[i]
            for per_node_nei in nei_index[i]:
                select_one = torch.tensor(np.random.choice(per_node_nei, sample_num, replace=True))[np.newaxis]
                sele_nei.append(select_one)
            sele_nei = torch.cat(sele_nei, dim=0).cuda()
            one_type_emb = nn.functional.elu(self.intra[i](sele_nei, nei_h[i + 1], nei_h[0]))
            embeds.append(one_type_emb)
        return torch.stack(embeds).mean(0)


encoder = Sc_encoder(hidden_dim=8, sample_rate=[3], nei_num=1)
nei_h = [torch.randn(5, 8), torch.randn(7, 8)]
nei_index = [[np.array([0, 1, 2]), np.array([3, 4]), np.array([5, 6]), np.array([1]), np.array([2, 6])]]
print(encoder(nei_h, nei_index).shape)
