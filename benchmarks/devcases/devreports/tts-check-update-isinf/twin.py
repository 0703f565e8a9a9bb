# mozilla/TTS pull request 398 ("numpy to use CPU when using CUDA"): utils/generic_utils.py
# check_update and the training step of train.py that calls it after backward, minimised (a toy
# Tacotron with a decoder stopnet, an L1 + BCE loss, random batches; no schedulers or logging).
import numpy as np
import torch
import torch.nn as nn

use_cuda = torch.cuda.is_available()
print(" > Using CUDA: ", use_cuda)


def check_update(model, grad_clip, ignore_stopnet=False):
    r'''Check model gradient against unexpected jumps and failures'''
    skip_flag = False
    if ignore_stopnet:
        grad_norm = torch.nn.utils.clip_grad_norm_([param for name, param in model.named_parameters() if 'stopnet' not in name], grad_clip)
    else:
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    if np.isinf(grad_norm.cpu()):
        print(" | > Gradient is INF !!")
        skip_flag = True
    return grad_norm, skip_flag


class Decoder(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.r = 1
        self.proj = nn.Linear(in_dim, out_dim)
        self.stopnet = nn.Linear(out_dim, 1)

    def forward(self, x):
        decoder_output = self.proj(x)
        return decoder_output, self.stopnet(decoder_output).squeeze(-1)


class Tacotron(nn.Module):
    def __init__(self, num_chars, mel_dim):
        super().__init__()
        self.embedding = nn.Embedding(num_chars, 16)
        self.decoder = Decoder(16, mel_dim)

    def forward(self, text_input):
        return self.decoder(self.embedding(text_input))


class TacotronLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.L1Loss()
        self.bce = nn.BCEWithLogitsLoss()

    def forward(self, decoder_output, mel_input, stop_tokens, stop_targets):
        return {'loss': self.l1(decoder_output, mel_input) + self.bce(stop_tokens, stop_targets)}


def format_data(data):
    text_input, mel_input, stop_targets = data
    if use_cuda:
        text_input = text_input.cuda(non_blocking=True)
        mel_input = mel_input.cuda(non_blocking=True)
        stop_targets = stop_targets.cuda(non_blocking=True)
    return text_input, mel_input, stop_targets


def train(model, criterion, optimizer, data_loader, grad_clip):
    model.train()
    for num_iter, data in enumerate(data_loader):
        text_input, mel_input, stop_targets = format_data(data)
        optimizer.zero_grad()

        # forward pass model
        decoder_output, stop_tokens = model(text_input)

        # compute loss
        loss_dict = criterion(decoder_output, mel_input, stop_tokens, stop_targets)

        # backward pass
        loss_dict['loss'].backward()
        grad_norm, grad_flag = check_update(model, grad_clip, ignore_stopnet=True)
        optimizer.step()
        print(num_iter, loss_dict['loss'].item(), float(grad_norm))


if __name__ == '__main__':
    model = Tacotron(num_chars=20, mel_dim=8)
    criterion = TacotronLoss()
    if use_cuda:
        model.cuda()
        criterion.cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data_loader = [(torch.randint(0, 20, (2, 5)), torch.randn(2, 5, 8), torch.randint(0, 2, (2, 5)).float())
                   for _ in range(2)]
    train(model, criterion, optimizer, data_loader, grad_clip=1.0)
