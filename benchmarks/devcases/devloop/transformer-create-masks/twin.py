"""SamLynnEvans/Transformer train.py (with Batch.py and Models.get_model), minimised."""
import argparse
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


# --- Batch.py ---
def nopeak_mask(size, opt):
    np_mask = np.triu(np.ones((1, size, size)),
    k=1).astype('uint8')
    np_mask =  Variable(torch.from_numpy(np_mask) == 0)

    np_mask = np_mask.to(opt.device)
    return np_mask

def create_masks(src, trg, opt):

    src_mask = (src != opt.src_pad).unsqueeze(-2)

    if trg is not None:
        trg_mask = (trg != opt.trg_pad).unsqueeze(-2)
        size = trg.size(1) # get seq_len for matrix
        np_mask = nopeak_mask(size, opt)
        if trg.is_cuda:
            np_mask = np_mask.cuda()
        trg_mask = trg_mask & np_mask

    else:
        trg_mask = None
    return src_mask, trg_mask


class Batch:
    def __init__(self, src, trg):
        self.src = src
        self.trg = trg


class MyIterator:
    """Stands in for torchtext's iterator: it yields batches on the CPU."""
    def __init__(self, n, src_len, trg_len, vocab):
        self.batches = [Batch(torch.randint(1, vocab, (src_len, 4)),
                              torch.randint(1, vocab, (trg_len, 4))) for _ in range(n)]

    def __iter__(self):
        return iter(self.batches)


# --- Models.py ---
class Transformer(nn.Module):
    def __init__(self, src_vocab, trg_vocab, d_model):
        super().__init__()
        self.src_embed = nn.Embedding(src_vocab, d_model)
        self.trg_embed = nn.Embedding(trg_vocab, d_model)
        self.out = nn.Linear(d_model, trg_vocab)

    def forward(self, src, trg, src_mask, trg_mask):
        e = self.src_embed(src).mean(1, keepdim=True)
        d = self.trg_embed(trg) + e
        d = d * trg_mask[:, -1, :].unsqueeze(-1)
        return self.out(d)


def get_model(opt, src_vocab, trg_vocab):
    model = Transformer(src_vocab, trg_vocab, opt.d_model)
    if opt.device == 0:
        model = model.cuda()
    return model


# --- train.py ---
def train_model(model, opt):

    print("training model...")
    model.train()
    start = time.time()

    for epoch in range(opt.epochs):

        total_loss = 0

        for i, batch in enumerate(opt.train):

            src = batch.src.transpose(0,1).to(opt.device)
            trg = batch.trg.transpose(0,1).to(opt.device)
            trg_input = trg[:, :-1]
            src_mask, trg_mask = create_masks(src, trg_input, opt)
            preds = model(src, trg_input, src_mask, trg_mask)
            ys = trg[:, 1:].contiguous().view(-1)
            opt.optimizer.zero_grad()
            loss = F.cross_entropy(preds.view(-1, preds.size(-1)), ys, ignore_index=opt.trg_pad)
            loss.backward()
            opt.optimizer.step()

            total_loss += loss.item()

        print("%dm: epoch %d complete, loss = %.03f" % ((time.time() - start)//60, epoch + 1, total_loss))

def main():

    parser = argparse.ArgumentParser()
    parser.add_argument('-no_cuda', action='store_true')
    parser.add_argument('-epochs', type=int, default=1)
    parser.add_argument('-d_model', type=int, default=16)
    parser.add_argument('-lr', type=int, default=0.0001)

    opt = parser.parse_args()

    opt.device = 0 if opt.no_cuda is False else -1
    if opt.device == 0:
        assert torch.cuda.is_available()

    opt.src_pad = 0
    opt.trg_pad = 0
    opt.train = MyIterator(2, 7, 6, 20)
    model = get_model(opt, 20, 20)

    opt.optimizer = torch.optim.Adam(model.parameters(), lr=opt.lr, betas=(0.9, 0.98), eps=1e-9)
    train_model(model, opt)

if __name__ == "__main__":
    main()
