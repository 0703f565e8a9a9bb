# auraloss issue 34 ("MelSTFTLoss does not correctly register filterbanks as buffers": `self.fb`
# "will not get moved automatically to the correct device ... should only require registering
# the filterbank object as a buffer"; fixed in commit 4e8c4ee with `self.register_buffer("fb",
# fb)`): auraloss/freq.py's SpectralConvergenceLoss, STFTMagnitudeLoss, STFTLoss and
# MelSTFTLoss with the commit's tests/simple_train_gpu.py loop, minimised: a small numpy
# triangular filterbank stands in for librosa.filters.mel, a one-layer model for the TCN, and
# the sizes are small.
import numpy as np
import torch

def mel_filters(sr, n_fft, n_mels):
    hz = lambda m: 700.0 * (10 ** (m / 2595.0) - 1)
    mel = lambda f: 2595.0 * np.log10(1.0 + f / 700.0)
    bins = np.floor((n_fft + 1) * hz(np.linspace(mel(0), mel(sr / 2), n_mels + 2)) / sr).astype(int)
    fb = np.zeros((n_mels, n_fft // 2 + 1), dtype=np.float32)
    for m in range(1, n_mels + 1):
        l, c, r = bins[m - 1], bins[m], max(bins[m + 1], bins[m] + 1)
        fb[m - 1, l:c] = np.linspace(0, 1, max(c - l, 1), endpoint=False)[: c - l]
        fb[m - 1, c:r] = np.linspace(1, 0, r - c, endpoint=False)
    return fb

def apply_reduction(losses, reduction="none"):
    if reduction == "mean":
        losses = losses.mean()
    elif reduction == "sum":
        losses = losses.sum()
    return losses

class SpectralConvergenceLoss(torch.nn.Module):
    def forward(self, x_mag, y_mag):
        return torch.norm(y_mag - x_mag, p="fro") / torch.norm(y_mag, p="fro")

class STFTMagnitudeLoss(torch.nn.Module):
    def __init__(self, log=True, reduction="mean"):
        super(STFTMagnitudeLoss, self).__init__()
        self.log = log
        self.distance = torch.nn.L1Loss(reduction=reduction)
    def forward(self, x_mag, y_mag):
        if self.log:
            x_mag = torch.log(x_mag)
            y_mag = torch.log(y_mag)
        return self.distance(x_mag, y_mag)

class STFTLoss(torch.nn.Module):
    def __init__(self, fft_size=1024, hop_size=256, win_length=1024, window="hann_window",
                 sample_rate=None, scale=None, n_bins=None, eps=1e-8, reduction="mean", device=None):
        super(STFTLoss, self).__init__()
        self.fft_size = fft_size
        self.hop_size = hop_size
        self.win_length = win_length
        self.window = getattr(torch, window)(win_length)
        self.sample_rate = sample_rate
        self.scale = scale
        self.n_bins = n_bins
        self.eps = eps
        self.reduction = reduction
        self.device = device
        self.spectralconv = SpectralConvergenceLoss()
        self.logstft = STFTMagnitudeLoss(log=True, reduction=reduction)

        # setup mel filterbank
        if scale is not None:
            if self.scale == "mel":
                assert sample_rate != None  # Must set sample rate to use mel scale
                assert n_bins <= fft_size  # Must be more FFT bins than Mel bins
                fb = mel_filters(sr=sample_rate, n_fft=fft_size, n_mels=n_bins)
                fb = torch.tensor(fb).unsqueeze(0)
            else:
                raise ValueError(f"Invalid scale: {self.scale}. Must be 'mel' or 'chroma'.")

            self.register_buffer("fb", fb)

        if scale is not None and device is not None:
            self.fb = self.fb.to(self.device)  # move filterbank to device
    def stft(self, x):
        x_stft = torch.stft(x, self.fft_size, self.hop_size, self.win_length, self.window,
                            return_complex=True)
        x_mag = torch.sqrt(torch.clamp((x_stft.real**2) + (x_stft.imag**2), min=self.eps))
        return x_mag, torch.angle(x_stft)
    def forward(self, x, y):
        self.window = self.window.to(x.device)
        x_mag, x_phs = self.stft(x.view(-1, x.size(-1)))
        y_mag, y_phs = self.stft(y.view(-1, y.size(-1)))

        # apply relevant transforms
        if self.scale is not None:
            x_mag = torch.matmul(self.fb, x_mag)
            y_mag = torch.matmul(self.fb, y_mag)

        loss = self.spectralconv(x_mag, y_mag) + self.logstft(x_mag, y_mag)
        return apply_reduction(loss, reduction=self.reduction)

class MelSTFTLoss(STFTLoss):
    """Mel-scale STFT loss module."""
    def __init__(self, sample_rate, fft_size=1024, hop_size=256, win_length=1024,
                 window="hann_window", n_mels=128, **kwargs):
        super(MelSTFTLoss, self).__init__(fft_size, hop_size, win_length, window,
                                          sample_rate, "mel", n_mels, **kwargs)

if __name__ == "__main__":
    y = torch.randn(1, 2, 512)
    y /= y.abs().max()
    x = y + (0.01 * torch.randn(y.shape))
    # move data to gpu
    x = x.cuda()
    y = y.cuda()

    model = torch.nn.Conv1d(2, 2, kernel_size=1)
    model.cuda()

    loss_fn = MelSTFTLoss(sample_rate=8000, fft_size=64, hop_size=16, win_length=64, n_mels=16)
    loss_fn.cuda()

    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    for iter_idx in range(2):
        optimizer.zero_grad()
        y_hat = torch.tanh(model(x))
        loss = loss_fn(y_hat, y)
        loss.backward()
        optimizer.step()
        print(f"loss: {loss.item():0.4f}")
