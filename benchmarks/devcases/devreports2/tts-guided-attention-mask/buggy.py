# mozilla/TTS pull request 549 ("Update losses.py": `torch.arange(olen)` in
# GuidedAttentionLoss._make_ga_mask returns a CPU tensor although `olen` is on cuda, "Without it
# the problem as stated here https://github.com/mozilla/TTS/issues/473 occurs"):
# TTS/tts/layers/losses.py's GuidedAttentionLoss with tts/utils/generic_utils.py's
# sequence_mask, minimised: a dot-product attention stands in for the Tacotron decoder and its
# alignments, and a single training step replaces train.py's loop.
import torch
from torch import nn


def sequence_mask(sequence_length, max_len=None):
    if max_len is None:
        max_len = sequence_length.data.max()
    seq_range = torch.arange(max_len, dtype=sequence_length.dtype, device=sequence_length.device)
    # B x T_max
    return seq_range.unsqueeze(0) < sequence_length.unsqueeze(1)


class GuidedAttentionLoss(torch.nn.Module):
    def __init__(self, sigma=0.4):
        super(GuidedAttentionLoss, self).__init__()
        self.sigma = sigma

    def _make_ga_masks(self, ilens, olens):
        B = len(ilens)
        max_ilen = max(ilens)
        max_olen = max(olens)
        ga_masks = torch.zeros((B, max_olen, max_ilen))
        for idx, (ilen, olen) in enumerate(zip(ilens, olens)):
            ga_masks[idx, :olen, :ilen] = self._make_ga_mask(ilen, olen, self.sigma)
        return ga_masks

    def forward(self, att_ws, ilens, olens):
        ga_masks = self._make_ga_masks(ilens, olens).to(att_ws.device)
        seq_masks = self._make_masks(ilens, olens).to(att_ws.device)
        losses = ga_masks * att_ws
        loss = torch.mean(losses.masked_select(seq_masks))
        return loss

    @staticmethod
    def _make_ga_mask(ilen, olen, sigma):
        grid_x, grid_y = torch.meshgrid(torch.arange(olen), torch.arange(ilen))
        grid_x, grid_y = grid_x.float(), grid_y.float()
        return 1.0 - torch.exp(-(grid_y / ilen - grid_x / olen)**2 / (2 * (sigma**2)))

    @staticmethod
    def _make_masks(ilens, olens):
        in_masks = sequence_mask(ilens)
        out_masks = sequence_mask(olens)
        return out_masks.unsqueeze(-1) & in_masks.unsqueeze(-2)


class ToyAttention(nn.Module):
    def __init__(self, n_chars, dim):
        super().__init__()
        self.embedding = nn.Embedding(n_chars, dim)
        self.query = nn.Linear(dim, dim)

    def forward(self, text, mel_queries):
        keys = self.embedding(text)
        return torch.softmax(self.query(mel_queries) @ keys.transpose(1, 2), dim=-1)


if __name__ == "__main__":
    use_cuda = torch.cuda.is_available()
    model = ToyAttention(n_chars=20, dim=8)
    criterion_ga = GuidedAttentionLoss(sigma=0.4)
    if use_cuda:
        model.cuda()
        criterion_ga.cuda()
    text_input = torch.randint(0, 20, (2, 6))
    mel_queries = torch.randn(2, 9, 8)
    text_lengths = torch.tensor([6, 4])
    mel_lengths = torch.tensor([9, 7])
    if use_cuda:
        text_input, mel_queries = text_input.cuda(non_blocking=True), mel_queries.cuda(non_blocking=True)
        text_lengths, mel_lengths = text_lengths.cuda(non_blocking=True), mel_lengths.cuda(non_blocking=True)
    alignments = model(text_input, mel_queries)
    ga_loss = criterion_ga(alignments, text_lengths, mel_lengths)
    ga_loss.backward()
    print(ga_loss.item())
