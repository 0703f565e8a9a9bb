# suanfaxiaohuo/SwinOCSR pull request 3 (running the focal-loss model's inference on a machine
# without a suitable GPU: FocalLossModelInference() -> build_decoder -> Transformer ->
# TransformerEncode.__init__ -> positional_encoding_1d, "AssertionError: Torch not compiled with
# CUDA enabled" at its .cuda(); the fix, 9b22d41: .to(device) of a device chosen by
# torch.cuda.is_available()): model/Swin-transformer-focalloss/pre_transformer.py and
# run_ocsr_on_images.py, minimised: one encoder and one decoder layer of width 16, a single-head
# attention, a linear layer standing in for the Swin encoder built by build_model, no checkpoint,
# word map file, argparse config, DeepSMILES conversion or image folder (random images).
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda import amp


def get_angles(pos, i, d_model):
    angle_rates = 1 / np.power(10000, (2 * (i//2)) / np.float32(d_model))
    return pos * angle_rates


def positional_encoding_1d(position, d_model):
    angle_rads = get_angles(np.arange(position)[:, np.newaxis],
                            np.arange(d_model)[np.newaxis, :],
                            d_model)

    angle_rads[:, 0::2] = np.sin(angle_rads[:, 0::2])
    angle_rads[:, 1::2] = np.cos(angle_rads[:, 1::2])
    pos_encoding = angle_rads[np.newaxis, ...]
    return torch.from_numpy(pos_encoding.astype('float32')).cuda()


class FeedForward(nn.Module):
    def __init__(self, dim, ff_dim=2048, dropout=0.1):
        super().__init__()
        self.linear1 = nn.Linear(dim, ff_dim)
        self.linear2 = nn.Linear(ff_dim, dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        x = self.dropout(F.relu(self.linear1(x)))
        x = self.linear2(x)
        return x


class Norm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.alpha = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        z = (x - x.mean(dim=-1, keepdim=True)) / (x.std(dim=-1, keepdim=True) + self.eps)
        x = self.alpha*z + self.bias
        return x


class MultiHeadAttention(nn.Module):
    def __init__(self, dim, num_head, dropout=0.1):
        super().__init__()
        self.dim = dim
        self.q = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, q, k, v, mask=None):
        score = torch.matmul(self.q(q), self.k(k).transpose(-2, -1)) / math.sqrt(self.dim)
        if mask is not None:
            score = score.masked_fill(mask == 0, -6e4)
        value = torch.matmul(F.softmax(score, dim=-1), self.v(v))
        return self.out(value)


class TransformerEncodeLayer(nn.Module):
    def __init__(self, dim, ff_dim, num_head, dropout=0.1):
        super().__init__()
        self.norm1 = Norm(dim)
        self.norm2 = Norm(dim)
        self.attn = MultiHeadAttention(dim, num_head, dropout=dropout)
        self.ff = FeedForward(dim, ff_dim, dropout=dropout)

    def forward(self, x):
        x1 = self.norm1(x)
        x = x + self.attn(x1, x1, x1)
        x = x + self.ff(self.norm2(x))
        return x


class TransformerEncode(nn.Module):
    def __init__(self, dim, ff_dim, num_head, encoder_num_layer, dropout, max_len):
        super().__init__()
        self.pos_encoding_1d = positional_encoding_1d(max_len, dim)
        self.encoder_num_layer = encoder_num_layer
        self.layer = nn.ModuleList([
            TransformerEncodeLayer(dim, ff_dim, num_head, dropout=dropout) for i in range(encoder_num_layer)
        ])
        self.norm = Norm(dim)

    def forward(self, x):
        seq_len = x.shape[1]
        dec_pos = self.pos_encoding_1d[:, :seq_len, :]
        x = x + dec_pos
        for i in range(self.encoder_num_layer):
            x = self.layer[i](x)
        x = self.norm(x)
        return x


class TransformerDecodeLayer(nn.Module):
    def __init__(self, dim, ff_dim, num_head, dropout=0.1):
        super().__init__()
        self.norm1 = Norm(dim)
        self.norm2 = Norm(dim)
        self.norm3 = Norm(dim)
        self.attn1 = MultiHeadAttention(dim, num_head, dropout=dropout)
        self.attn2 = MultiHeadAttention(dim, num_head, dropout=dropout)
        self.ff = FeedForward(dim, ff_dim, dropout=dropout)

    def forward(self, x, mem, x_mask=None, mem_mask=None):
        x1 = self.norm1(x)
        x = x + self.attn1(x1, x1, x1, mask=x_mask)
        if mem is not None:
            x = x + self.attn2(self.norm2(x), mem, mem)
        x = x + self.ff(self.norm3(x))
        return x


class TransformerDecode(nn.Module):
    def __init__(self, dim, ff_dim, num_head, decoder_num_layer, vocab_size, max_len, drop_rate=0):
        super().__init__()
        self.token_embed = nn.Embedding(vocab_size, dim)
        self.pos_encoding_1d = positional_encoding_1d(max_len, dim)
        self.num_layer = decoder_num_layer
        self.layer = nn.ModuleList([
            TransformerDecodeLayer(dim, ff_dim, num_head, dropout=drop_rate) for i in range(decoder_num_layer)
        ])
        self.norm = Norm(dim)
        self.logit = nn.Linear(dim, vocab_size)

    def forward(self, x, mem, x_mask=None, mem_mask=None):
        seq_len = x.shape[1]
        dec_pos = self.pos_encoding_1d[:, :seq_len, :]
        x = self.token_embed(x)
        x = x + dec_pos
        for i in range(self.num_layer):
            x = self.layer[i](x, mem, x_mask, mem_mask)
        x = self.norm(x)
        return self.logit(x)


class Transformer(nn.Module):
    def __init__(self, dim, ff_dim, num_head, vocab_size, max_len, encoder_num_layer=6, decoder_num_layer=6, drop_rate=0.1, tag=False):
        super().__init__()
        self.tag = tag
        self.encoder_dim = nn.Linear(24, dim)
        self.encoder = TransformerEncode(dim=dim, ff_dim=ff_dim, num_head=num_head, encoder_num_layer=encoder_num_layer, dropout=drop_rate, max_len=max_len)
        self.decoder = TransformerDecode(dim=dim, ff_dim=ff_dim, num_head=num_head, decoder_num_layer=decoder_num_layer, vocab_size=vocab_size, max_len=max_len, drop_rate=drop_rate)

    def forward(self, label, mem, x_mask=None, mem_mask=None):
        with amp.autocast(self.tag):
            mem = self.encoder_dim(mem)
            mem = self.encoder(mem)
            predictions = self.decoder(label, mem, x_mask)
        return predictions


def Greedy_decode(model, src, max_len, start_symbol, end_symbol):
    ys = torch.ones(src.size(0), 1).fill_(start_symbol).long().to(src.device)
    for i in range(max_len - 1):
        mask = torch.tril(torch.ones(1, ys.size(1), ys.size(1), device=src.device))
        out = model(ys, src, mask)
        next_word = out[:, -1].argmax(-1, keepdim=True)
        ys = torch.cat([ys, next_word], dim=1)
    return ys, out


class FocalLossModelInference:
    def __init__(self):
        self.word_map = {'<start>': 0, '<end>': 1, 'C': 2, 'O': 3, 'N': 4, '(': 5, ')': 6}
        self.inv_word_map = {v: k for k, v in self.word_map.items()}

        # Define device, load models and weights
        self.dev = "cuda" if torch.cuda.is_available() else "cpu"
        self.encoder = nn.Sequential(nn.Flatten(2), nn.Linear(64, 24))
        self.decoder = self.build_decoder()
        self.load_checkpoint()
        self.decoder = self.decoder.to(self.dev).eval()
        self.encoder = self.encoder.to(self.dev).eval()

    def load_checkpoint(self):
        checkpoint = {'encoder': self.encoder.state_dict(), 'decoder': self.decoder.state_dict()}
        encoder_msg = self.encoder.load_state_dict(checkpoint['encoder'], strict=False)
        decoder_msg = self.decoder.load_state_dict(checkpoint['decoder'], strict=False)
        print(f"Encoder: {encoder_msg}")
        print(f"Decoder: {decoder_msg}")
        del checkpoint
        torch.cuda.empty_cache()

    def build_decoder(self):
        self.decoder_dim = 16
        self.ff_dim = 32
        self.num_head = 1
        self.dropout = 0.1
        self.encoder_num_layer = 1
        self.decoder_num_layer = 1
        self.max_len = 20
        return Transformer(dim=self.decoder_dim,
                           ff_dim=self.ff_dim,
                           num_head=self.num_head,
                           encoder_num_layer=self.encoder_num_layer,
                           decoder_num_layer=self.decoder_num_layer,
                           vocab_size=len(self.word_map),
                           max_len=self.max_len,
                           drop_rate=self.dropout,
                           tag=False)

    def run_inference_on_images(self, images):
        deep_smiles = []
        with torch.no_grad():
            for im_name, imgs in images:
                imgs = imgs[None, :]
                imgs = imgs.to(self.dev)
                imgs = self.encoder(imgs)
                _, logits = Greedy_decode(self.decoder, imgs, max_len=6,
                                          start_symbol=self.word_map['<start>'],
                                          end_symbol=self.word_map['<end>'])
                _, preds = torch.max(logits, dim=-1)
                for r in range(preds.shape[0]):
                    pre_list = []
                    for j in preds[r].tolist():
                        if j != self.word_map['<end>']:
                            pre_list.append(self.inv_word_map[j])
                        else:
                            break
                    deep_smiles.append((im_name, ''.join(pre_list)))
        return deep_smiles


def main():
    inference = FocalLossModelInference()
    images = [('mol_%d.png' % i, torch.rand(3, 8, 8)) for i in range(2)]
    deep_smiles_list = inference.run_inference_on_images(images)
    for im_name, deep_smiles in deep_smiles_list:
        print(f"{im_name}\t{deep_smiles}")


if __name__ == '__main__':
    main()
