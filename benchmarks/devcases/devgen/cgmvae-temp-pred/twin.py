# C-GMVAE pull request 1: train.py train() before 2c5d895, minimised: a small VAE stand-in,
# compute_loss returns the loss and the predictions as the original does, get_feat/get_label
# read from an in-memory array, evals.compute_metrics is a small micro-F1; the smoothed losses,
# the summary writer and the validation step are left out.
import argparse
import datetime

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from copy import deepcopy

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class VAE(nn.Module):
    def __init__(self, args):
        super(VAE, self).__init__()
        self.fx = nn.Linear(args.feature_dim, args.label_dim)

    def forward(self, input_label, input_feat):
        return {"feat_out": self.fx(input_feat)}


def compute_loss(input_label, output, args, epoch, class_weights):
    pred_x = torch.sigmoid(output["feat_out"])
    total_loss = F.binary_cross_entropy(pred_x, input_label)
    return total_loss, pred_x


def compute_metrics(pred, label, thres):
    pred = (pred > thres).astype(np.float32)
    tp = (pred * label).sum()
    return {"miF1": 2 * tp / max(pred.sum() + label.sum(), 1.0)}


def get_feat(data, idxs, meta_offset, label_dim, feature_dim):
    return data[idxs, meta_offset + label_dim:meta_offset + label_dim + feature_dim]


def get_label(data, idxs, meta_offset, label_dim):
    return data[idxs, meta_offset:meta_offset + label_dim]


def train(args, data, train_idx):
    vae = VAE(args).to(device)
    vae.train()
    optimizer = optim.Adam(vae.parameters(), lr=args.learning_rate, weight_decay=1e-5)
    class_weights = None
    current_step = 0
    smooth_micro_f1 = 0.0

    temp_label = []
    temp_pred_x = []

    for one_epoch in range(args.max_epoch):
        np.random.shuffle(train_idx)
        for i in range(int(len(train_idx) / float(args.batch_size))):
            optimizer.zero_grad()
            start = i * args.batch_size
            end = min(args.batch_size * (i + 1), len(train_idx))
            input_feat = get_feat(data, train_idx[start:end], args.meta_offset, args.label_dim, args.feature_dim)
            input_label = get_label(data, train_idx[start:end], args.meta_offset, args.label_dim)
            input_feat, input_label = torch.from_numpy(input_feat).to(device), torch.from_numpy(input_label)
            input_label = deepcopy(input_label).float().to(device)
            output = vae(input_label, input_feat)

            total_loss, pred_x = compute_loss(input_label, output, args, one_epoch, class_weights)

            total_loss.backward()
            optimizer.step()

            train_metrics = compute_metrics(pred_x.cpu().data.numpy(), input_label.cpu().data.numpy(), 0.5)
            smooth_micro_f1 += train_metrics['miF1']

            temp_label.append(input_label)
            temp_pred_x.append(pred_x)

            current_step += 1
            if current_step % args.check_freq == 0:
                micro_f1 = smooth_micro_f1 / float(args.check_freq)

                temp_pred_x = [v.cpu().detach().numpy()  for v in temp_pred_x]
                temp_label = [v.cpu().detach().numpy()  for v in temp_label]
                temp_pred_x = np.reshape(np.array(temp_pred_x, dtype=object), (-1))
                temp_label = np.reshape(np.array(temp_label, dtype=object), (-1))

                time_str = datetime.datetime.now().isoformat()
                print("step=%d  %s\nmicro_f1=%.6f\n" % (current_step, time_str, micro_f1))
                temp_pred_x = []
                temp_label = []
                smooth_micro_f1 = 0


if __name__ == "__main__":
    args = argparse.Namespace(feature_dim=6, label_dim=3, meta_offset=0, learning_rate=1e-3,
                              max_epoch=1, batch_size=4, check_freq=2)
    data = np.random.rand(8, 9).astype(np.float32)
    data[:, :3] = (data[:, :3] > 0.5)
    train(args, data, np.arange(8))
