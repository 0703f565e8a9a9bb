# deepinv issue 383 (the report's reproduction: run on the CPU, then phy.cuda() and x.cuda()):
# deepinv/physics/blur.py BlurFFT with the Physics/DecomposablePhysics methods it uses and
# filter_fft_2d, minimised (no noise or sensor model, no adjoints).
import torch
from torch import fft


def filter_fft_2d(filter, img_size, real_fft=True):
    ph = int((filter.shape[2] - 1) / 2)
    pw = int((filter.shape[3] - 1) / 2)

    filt2 = torch.zeros(
        tuple(filter.shape[:2]) + tuple(img_size[-2:]), device=filter.device
    )

    filt2[..., : filter.shape[2], : filter.shape[3]] = filter
    filt2 = torch.roll(filt2, shifts=(-ph, -pw), dims=(2, 3))

    return fft.rfft2(filt2) if real_fft else fft.fft2(filt2)


class Physics(torch.nn.Module):
    def forward(self, x, **kwargs):
        return self.A(x, **kwargs)


class DecomposablePhysics(Physics):
    def __init__(self, mask=1.0, **kwargs):
        super().__init__(**kwargs)
        mask = torch.tensor(mask) if not isinstance(mask, torch.Tensor) else mask
        self.mask = mask

    def A(self, x, mask=None, **kwargs):
        self.update_parameters(mask=mask, **kwargs)

        return self.U(self.mask * self.V_adjoint(x))

    def update_parameters(self, **kwargs):
        pass


class BlurFFT(DecomposablePhysics):
    """
    FFT-based blur operator.
    """

    def __init__(self, img_size, filter=None, device="cpu", **kwargs):
        super().__init__(**kwargs)
        self.device = device
        self.img_size = img_size
        self.update_parameters(filter=filter, **kwargs)

    def A(self, x, filter=None, **kwargs):
        self.update_parameters(filter, **kwargs)
        return super().A(x)

    def V_adjoint(self, x):
        return torch.view_as_real(
            fft.rfft2(x, norm="ortho")
        )  # make it a true SVD (see J. Romberg notes)

    def U(self, x):
        return fft.irfft2(
            torch.view_as_complex(x) * self.angle,
            norm="ortho",
            s=self.img_size[-2:],
        )

    def update_parameters(self, filter=None, **kwargs):
        r"""
        Updates the current filter.

        :param torch.Tensor filter: New filter to be applied to the input image.
        """
        if filter is not None:
            if self.img_size[0] > filter.shape[1]:
                filter = filter.repeat(1, self.img_size[0], 1, 1)
            self.filter = torch.nn.Parameter(filter, requires_grad=False).to(
                self.device
            )

            mask = filter_fft_2d(filter, self.img_size).to(self.device)
            angle = torch.angle(mask)
            self.register_buffer("angle", torch.exp(-1.0j * angle).to(self.device))
            mask = torch.abs(mask).unsqueeze(-1)
            mask = torch.cat([mask, mask], dim=-1)
            self.mask = torch.nn.Parameter(mask, requires_grad=False)


if __name__ == "__main__":
    h = torch.ones((1, 1, 5, 5))
    phy = BlurFFT((15, 15), h)

    x = torch.ones((1, 1, 15, 15))
    phy(x)

    x = x.cuda()
    phy = phy.cuda()
    print(phy(x).shape)
