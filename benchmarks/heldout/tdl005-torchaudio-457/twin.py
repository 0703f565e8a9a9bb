import math
import torch


def phase_vocoder(complex_specgrams, rate, phase_advance):
    time_steps = torch.arange(0, complex_specgrams.size(-2), rate, device=complex_specgrams.device)
    spec = complex_specgrams.index_select(-2, time_steps.long())
    angle = torch.atan2(spec[..., 1], spec[..., 0])
    phase = angle + phase_advance
    mag = spec.pow(2).sum(-1).sqrt()
    return torch.stack([mag * torch.cos(phase), mag * torch.sin(phase)], dim=-1)


class TimeStretch(torch.nn.Module):
    __constants__ = ['fixed_rate']

    def __init__(self, hop_length=None, n_freq=201, fixed_rate=None):
        super(TimeStretch, self).__init__()
        self.fixed_rate = fixed_rate
        n_fft = (n_freq - 1) * 2
        hop_length = hop_length if hop_length is not None else n_fft // 2
        self.register_buffer('phase_advance', torch.linspace(0, math.pi * hop_length, n_freq)[..., None])

    def forward(self, complex_specgrams, overriding_rate=None):
        if overriding_rate is None:
            rate = self.fixed_rate
        else:
            rate = overriding_rate
        if rate == 1.0:
            return complex_specgrams
        return phase_vocoder(complex_specgrams, rate, self.phase_advance)


m = TimeStretch().cuda() if torch.cuda.is_available() else TimeStretch()
x = torch.randn(1, 2, 201, 40, 2)
if torch.cuda.is_available():
    x = x.cuda()
print(m(x, 1.3).shape)
