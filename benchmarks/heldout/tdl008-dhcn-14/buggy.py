import numpy as np
import torch
import torch.nn as nn


class HyperConv(nn.Module):
    def __init__(self, layers, dataset, emb_size=8):
        super(HyperConv, self).__init__()
        self.emb_size = emb_size
        self.layers = layers
        self.dataset = dataset

    def forward(self, adjacency, embedding):
        item_embeddings = embedding
        item_embedding_layer0 = item_embeddings
        final = [item_embedding_layer0]
        for i in range(self.layers):
            item_embeddings = torch.sparse.mm(adjacency, item_embeddings) if adjacency.is_sparse else adjacency @ item_embeddings
            final.append(item_embeddings)
        item_embeddings = np.sum(final, 0) / (self.layers + 1)
        return item_embeddings


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
conv = HyperConv(layers=2, dataset="Tmall").to(device)
adjacency = torch.rand(5, 5).to(device)
embedding = nn.Embedding(5, 8).to(device)
print(conv(adjacency, embedding.weight).shape)
