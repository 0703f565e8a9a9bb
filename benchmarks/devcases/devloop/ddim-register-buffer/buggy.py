"""pix2gestalt ldm/models/diffusion/ddim.py (the latent-diffusion DDIM sampler), minimised; the
diffusion model is a small stand-in that runs on the device inference is given (here "cpu")."""
import numpy as np
import torch


def make_ddim_timesteps(ddim_discr_method, num_ddim_timesteps, num_ddpm_timesteps, verbose=True):
    c = num_ddpm_timesteps // num_ddim_timesteps
    return np.asarray(list(range(0, num_ddpm_timesteps, c))) + 1


class DDIMSampler(object):
    def __init__(self, model, schedule="linear", **kwargs):
        super().__init__()
        self.model = model
        self.ddpm_num_timesteps = model.num_timesteps
        self.schedule = schedule

    def to(self, device):
        """Same as to in torch module
        Don't really underestand why this isn't a module in the first place"""
        for k, v in self.__dict__.items():
            if isinstance(v, torch.Tensor):
                new_v = getattr(self, k).to(device)
                setattr(self, k, new_v)

    def register_buffer(self, name, attr):
        if type(attr) == torch.Tensor:
            if attr.device != torch.device("cuda"):
                attr = attr.to(torch.device("cuda"))
        setattr(self, name, attr)

    def make_schedule(self, ddim_num_steps, ddim_discretize="uniform", ddim_eta=0., verbose=True):
        self.ddim_timesteps = make_ddim_timesteps(ddim_discr_method=ddim_discretize, num_ddim_timesteps=ddim_num_steps,
                                                  num_ddpm_timesteps=self.ddpm_num_timesteps, verbose=verbose)
        alphas_cumprod = self.model.alphas_cumprod
        assert alphas_cumprod.shape[0] == self.ddpm_num_timesteps, 'alphas have to be defined for each timestep'
        to_torch = lambda x: x.clone().detach().to(torch.float32).to(self.model.device)

        self.register_buffer('betas', to_torch(self.model.betas))
        self.register_buffer('alphas_cumprod', to_torch(alphas_cumprod))
        self.register_buffer('sqrt_alphas_cumprod', to_torch(np.sqrt(alphas_cumprod.cpu())))

    @torch.no_grad()
    def sample(self, S, batch_size, shape, eta=0., verbose=True):
        self.make_schedule(ddim_num_steps=S, ddim_eta=eta, verbose=verbose)
        x = torch.randn((batch_size,) + shape, device=self.model.device)
        for index in range(len(self.ddim_timesteps)):
            x = x * self.sqrt_alphas_cumprod[index]
        return x


class LatentDiffusion(torch.nn.Module):
    def __init__(self, num_timesteps=100):
        super().__init__()
        self.num_timesteps = num_timesteps
        betas = torch.linspace(1e-4, 2e-2, num_timesteps, dtype=torch.float64)
        self.register_buffer('betas', betas)
        self.register_buffer('alphas_cumprod', torch.cumprod(1. - betas, dim=0))

    @property
    def device(self):
        return self.betas.device


def run_inference(input_image, model, device, guidance_scale=2.0, n_samples=2, ddim_steps=10):
    sampler = DDIMSampler(model)
    return sampler.sample(S=ddim_steps, batch_size=n_samples, shape=tuple(input_image.shape))


if __name__ == "__main__":
    device = "cpu"
    model = LatentDiffusion().to(device)
    print(run_inference(torch.rand(4, 8, 8), model, device).shape)
