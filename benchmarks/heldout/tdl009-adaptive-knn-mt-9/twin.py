import torch


class KNN_Dstore(object):
    def __init__(self, k=4, dimension=8, dstore_size=32, vocab_size=20):
        self.k = k
        self.vocab_size = vocab_size
        self.keys = torch.randn(dstore_size, dimension)
        self.vals = torch.randint(0, vocab_size, (dstore_size,))

    def retrieve(self, queries):
        bsz, seq_len, q_dim = queries.size()
        dists = torch.cdist(queries.view(-1, q_dim).cpu(), self.keys)
        knn_dists, knns = dists.topk(self.k, largest=False)
        tgt_idx = self.vals[knns].to(queries.device)
        knn_tgt_prob = torch.zeros(bsz * seq_len, self.k, self.vocab_size, device=queries.device)
        knn_tgt_prob.scatter_(2, tgt_idx.unsqueeze(-1), 1.0)
        probs = torch.softmax(-knn_dists.to(queries.device), dim=-1)
        prob = torch.zeros(bsz * seq_len, self.vocab_size, device=queries.device)
        prob += (knn_tgt_prob * probs.unsqueeze(-1)).sum(1)
        return prob.view(bsz, seq_len, -1)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
dstore = KNN_Dstore()
print(dstore.retrieve(torch.randn(2, 3, 8, device=device)).shape)
