import math
import torch
import torch.nn as nn


def timestep_embedding(timesteps, dim, max_period=10000, repeat_only=False):
    if not repeat_only:
        half = dim // 2
        freqs = torch.exp(
            -math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32, device=timesteps.device) / half
        )
        args = timesteps[:, None].float() * freqs[None]
        embedding = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
        if dim % 2:
            embedding = torch.cat([embedding, torch.zeros_like(embedding[:, :1])], dim=-1)
    else:
        embedding = timesteps[:, None].repeat(1, dim)
    return embedding


class UNetModel(nn.Module):
    def __init__(self, model_channels=8):
        super().__init__()
        self.model_channels = model_channels
        self.time_embed = nn.Sequential(nn.Linear(model_channels, 32), nn.SiLU(), nn.Linear(32, 32))

    def forward(self, x, timesteps):
        t_emb = timestep_embedding(timesteps, self.model_channels, repeat_only=False)
        return self.time_embed(t_emb)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
unet = UNetModel().to(device)
print(unet(None, torch.randint(0, 1000, (4,), device=device)).shape)
