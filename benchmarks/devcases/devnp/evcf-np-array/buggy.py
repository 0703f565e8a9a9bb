# EVCF issue 1: utils/evaluation.py, minimised (bottleneck's argpartition replaced by NumPy's).
from __future__ import print_function

import argparse

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable


class VAE(nn.Module):
    def __init__(self, n_items):
        super(VAE, self).__init__()
        self.encoder = nn.Linear(n_items, 16)
        self.decoder = nn.Linear(16, n_items)

    def calculate_loss(self, x, average=True):
        x_mean = torch.sigmoid(self.decoder(torch.tanh(self.encoder(x))))
        RE = -((x * torch.log(x_mean + 1e-8)).sum(1)).mean()
        KL = torch.zeros(())
        loss = RE + KL
        return loss, -RE, KL

    def reconstruct_x(self, x):
        return torch.sigmoid(self.decoder(torch.tanh(self.encoder(x))))


def evaluate_vae(args, model, data_loader):
    evaluate_loss = 0
    ndcg_dist = torch.tensor([], dtype=torch.float)

    model.eval()

    def NDCG_binary_at_k_batch(X_pred, heldout_batch, k=100):
        batch_users = X_pred.shape[0]
        idx_topk_part = np.argpartition(-X_pred, k, axis=1)
        topk_part = X_pred[np.arange(batch_users)[:, np.newaxis],
                           idx_topk_part[:, :k]]
        idx_part = np.argsort(-topk_part, axis=1)
        idx_topk = idx_topk_part[np.arange(batch_users)[:, np.newaxis], idx_part]
        tp = 1. / np.log2(np.arange(2, k + 2))
        tp = torch.tensor(tp, dtype=torch.float)

        DCG = (heldout_batch[np.arange(batch_users)[:, np.newaxis],
                             idx_topk].cpu() * tp).sum(dim=1)
        IDCG = torch.tensor([(tp[:min(n, k)]).sum()
                             for n in (heldout_batch != 0).sum(dim=1)])
        return DCG / IDCG

    for batch_idx, (train, test) in enumerate(data_loader):
        if args.cuda:
            train, test = train.cuda(), test.cuda()
        train, test = Variable(train), Variable(test)

        x = train

        with torch.no_grad():
            loss, RE, KL = model.calculate_loss(x, average=True)
            evaluate_loss += loss.data.item()

            pred_val = model.reconstruct_x(x)
            # should be removed if not necessary
            pred_val = np.array(pred_val)
            x = np.array(x)
            pred_val[x.nonzero()] = -np.inf

            ndcg_dist = torch.cat([ndcg_dist, NDCG_binary_at_k_batch(pred_val, test, k=10)])

    evaluate_loss /= len(data_loader)
    return evaluate_loss, ndcg_dist.mean().item()


if __name__ == '__main__':
    args = argparse.Namespace(cuda=torch.cuda.is_available())
    model = VAE(30)
    if args.cuda:
        model.cuda()
    loader = [((torch.rand(4, 30) > 0.7).float(), (torch.rand(4, 30) > 0.7).float()) for _ in range(2)]
    print(evaluate_vae(args, model, loader))
