# CelestialShine/Longitudinal-Chest-X-Ray issue 2 ("RuntimeError: expected self and mask to be on
# the same device, but got mask on cpu and self on cuda:0" during the evaluation of
# trainer._train_epoch, self.model(images, ..., mode='sample') -> encoder_decoder -> _sample ->
# core -> decode -> attention's scores.masked_fill(mask == 0, -1e9)): EncoderDecoder.core passes
# subsequent_mask(ys.size(1)), made on the CPU by a top-level function, into self.model.decode; the
# R2Gen code it derives from (cuhksz-nlp/R2Gen modules/encoder_decoder.py) moves it with
# .to(memory.device), which the twin does. modules/encoder_decoder.py (attention,
# MultiHeadedAttention, subsequent_mask, Transformer, Decoder, DecoderLayer, EncoderDecoder's
# _prepare_feature, _forward, core), modules/att_model.py (get_logprobs_state, greedy _sample),
# modules/caption_model.py (forward dispatch) and models/r2gen.py, minimised: one decoder layer
# of width 16 with 2 heads, a linear visual extractor, no relational memory, context report,
# second image pair, beam search or trigram blocking (and the .cuda(2) of core's ys is left out,
# as in R2Gen).
import copy
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def clones(module, N):
    return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])


def attention(query, key, value, mask=None, dropout=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = F.softmax(scores, dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


class MultiHeadedAttention(nn.Module):
    def __init__(self, h, d_model, dropout=0.1):
        super(MultiHeadedAttention, self).__init__()
        assert d_model % h == 0
        self.d_k = d_model // h
        self.h = h
        self.linears = clones(nn.Linear(d_model, d_model), 4)
        self.attn = None
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, query, key, value, mask=None):
        if mask is not None:
            mask = mask.unsqueeze(1)
        nbatches = query.size(0)
        query, key, value = \
            [l(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
             for l, x in zip(self.linears, (query, key, value))]

        x, self.attn = attention(query, key, value, mask=mask, dropout=self.dropout)

        x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        return self.linears[-1](x)


def subsequent_mask(size):
    attn_shape = (1, size, size)
    subsequent_mask = np.triu(np.ones(attn_shape), k=1).astype('uint8')
    return torch.from_numpy(subsequent_mask) == 0


class DecoderLayer(nn.Module):
    def __init__(self, d_model, self_attn, src_attn, feed_forward):
        super(DecoderLayer, self).__init__()
        self.self_attn = self_attn
        self.src_attn = src_attn
        self.feed_forward = feed_forward
        self.norm = clones(nn.LayerNorm(d_model), 3)

    def forward(self, x, hidden_states, src_mask, tgt_mask):
        m = hidden_states
        x = x + self.self_attn(self.norm[0](x), self.norm[0](x), self.norm[0](x), tgt_mask)
        x = x + self.src_attn(self.norm[1](x), m, m, src_mask)
        return x + self.feed_forward(self.norm[2](x))


class Decoder(nn.Module):
    def __init__(self, layer, N, d_model):
        super(Decoder, self).__init__()
        self.layers = clones(layer, N)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x, hidden_states, src_mask, tgt_mask):
        for layer in self.layers:
            x = layer(x, hidden_states, src_mask, tgt_mask)
        return self.norm(x)


class Transformer(nn.Module):
    def __init__(self, decoder, src_embed, tgt_embed):
        super(Transformer, self).__init__()
        self.decoder = decoder
        self.src_embed = src_embed
        self.tgt_embed = tgt_embed

    def forward(self, src, tgt, src_mask, tgt_mask):
        return self.decode(self.encode(src, src_mask), src_mask, tgt, tgt_mask)

    def encode(self, src, src_mask):
        return self.src_embed(src)

    def decode(self, hidden_states, src_mask, tgt, tgt_mask):
        return self.decoder(self.tgt_embed(tgt), hidden_states, src_mask, tgt_mask)


class CaptionModel(nn.Module):
    def __init__(self):
        super(CaptionModel, self).__init__()

    def forward(self, *args, **kwargs):
        mode = kwargs.get('mode', 'forward')
        if 'mode' in kwargs:
            del kwargs['mode']
        return getattr(self, '_' + mode)(*args, **kwargs)


class AttModel(CaptionModel):
    def __init__(self, vocab_size, max_seq_length, d_model):
        super(AttModel, self).__init__()
        self.vocab_size = vocab_size
        self.max_seq_length = max_seq_length
        self.bos_idx, self.eos_idx, self.pad_idx = 0, 0, 0
        self.att_embed = nn.Linear(8, d_model)
        self.logit = nn.Linear(d_model, vocab_size + 1)

    def init_hidden(self, bsz):
        return []

    def get_logprobs_state(self, it, fc_feats, att_feats, p_att_feats, att_masks, state, output_logsoftmax=1):
        output, state = self.core(it, fc_feats, att_feats, p_att_feats, state, att_masks)
        if output_logsoftmax:
            logprobs = F.log_softmax(self.logit(output), dim=1)
        else:
            logprobs = self.logit(output)
        return logprobs, state

    def _sample(self, fc_feats, att_feats, att_masks=None, opt={}):
        output_logsoftmax = opt.get('output_logsoftmax', 1)
        batch_size = fc_feats.size(0)
        state = self.init_hidden(batch_size)

        p_fc_feats, p_att_feats, pp_att_feats, p_att_masks = self._prepare_feature(fc_feats, att_feats, att_masks)

        seq = fc_feats.new_full((batch_size, self.max_seq_length), self.pad_idx, dtype=torch.long)
        seqLogprobs = fc_feats.new_zeros(batch_size, self.max_seq_length, self.vocab_size + 1)
        for t in range(self.max_seq_length + 1):
            if t == 0:  # input <bos>
                it = fc_feats.new_full([batch_size], self.bos_idx, dtype=torch.long)

            logprobs, state = self.get_logprobs_state(it, p_fc_feats, p_att_feats, pp_att_feats, p_att_masks, state,
                                                      output_logsoftmax=output_logsoftmax)

            # sample the next word
            if t == self.max_seq_length:  # skip if we achieve maximum length
                break
            sampleLogprobs, it = torch.max(logprobs.data, 1)
            it = it.view(-1).long()

            # stop when all finished
            if t == 0:
                unfinished = it != self.eos_idx
            else:
                it[~unfinished] = self.pad_idx  # This allows eos_idx not being overwritten to 0
                logprobs = logprobs * unfinished.unsqueeze(1).float()
                unfinished = unfinished * (it != self.eos_idx)
            seq[:, t] = it
            seqLogprobs[:, t] = logprobs
            # quit loop if all sequences have finished
            if unfinished.sum() == 0:
                break

        return seq, seqLogprobs


class EncoderDecoder(AttModel):
    def __init__(self, vocab_size, max_seq_length, d_model=16, num_heads=2):
        super(EncoderDecoder, self).__init__(vocab_size, max_seq_length, d_model)
        attn = MultiHeadedAttention(num_heads, d_model)
        ff = nn.Sequential(nn.Linear(d_model, 32), nn.ReLU(), nn.Linear(32, d_model))
        self.model = Transformer(
            Decoder(DecoderLayer(d_model, copy.deepcopy(attn), copy.deepcopy(attn), ff), 1, d_model),
            nn.Identity(),
            nn.Embedding(vocab_size + 1, d_model))

    def _prepare_feature(self, fc_feats, att_feats, att_masks):
        att_feats = self.att_embed(att_feats)
        if att_masks is None:
            att_masks = att_feats.new_ones(att_feats.shape[:2], dtype=torch.long)
        att_masks = att_masks.unsqueeze(-2)
        memory = self.model.encode(att_feats, att_masks)
        return fc_feats[..., :1], att_feats[..., :1], memory, att_masks

    def _forward(self, fc_feats, att_feats, seq, att_masks=None):
        att_feats = self.att_embed(att_feats)
        att_masks = att_feats.new_ones(att_feats.shape[:2], dtype=torch.long).unsqueeze(-2)
        seq = seq[:, :-1]
        seq_mask = (seq.data > 0)
        seq_mask[:, 0] += True
        seq_mask = seq_mask.unsqueeze(-2)
        seq_mask = seq_mask & subsequent_mask(seq.size(-1)).to(seq_mask)
        out = self.model(att_feats, seq, att_masks, seq_mask)
        return F.log_softmax(self.logit(out), dim=-1)

    def core(self, it, fc_feats_ph, att_feats_ph, memory, state, mask):
        if len(state) == 0:
            ys = it.unsqueeze(1)
        else:
            ys = torch.cat([state[0][0], it.unsqueeze(1)], dim=1)

        out = self.model.decode(memory, mask, ys, subsequent_mask(ys.size(1)).to(memory.device))

        return out[:, -1], [ys.unsqueeze(0)]


class R2GenModel(nn.Module):
    def __init__(self, vocab_size=12, max_seq_length=6):
        super(R2GenModel, self).__init__()
        self.visual_extractor = nn.Linear(3 * 4 * 4, 8 * 4)
        self.encoder_decoder = EncoderDecoder(vocab_size, max_seq_length)

    def forward(self, images, targets=None, mode='train'):
        att_feats = self.visual_extractor(images.flatten(1)).view(images.size(0), 4, 8)
        fc_feats = att_feats.mean(1)
        if mode == 'train':
            output = self.encoder_decoder(fc_feats, att_feats, targets, mode='forward')
        elif mode == 'sample':
            output, _ = self.encoder_decoder(fc_feats, att_feats, mode='sample')
        else:
            raise ValueError
        return output


def _train_epoch(model, optimizer, train_dataloader, val_dataloader, device):
    model.train()
    for batch_idx, (images, reports_ids) in enumerate(train_dataloader):
        images, reports_ids = images.to(device), reports_ids.to(device)
        output = model(images, reports_ids, mode='train')
        loss = F.nll_loss(output.reshape(-1, output.size(-1)), reports_ids[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    model.eval()
    with torch.no_grad():
        val_res = []
        for batch_idx, (images, reports_ids) in enumerate(val_dataloader):
            images, reports_ids = images.to(device), reports_ids.to(device)
            output = model(images, mode='sample')
            val_res.extend(output.tolist())
    return val_res


if __name__ == '__main__':
    device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
    model = R2GenModel().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    batches = [(torch.rand(2, 3, 4, 4), torch.randint(1, 12, (2, 7))) for _ in range(2)]
    print(_train_epoch(model, optimizer, batches, batches, device))
