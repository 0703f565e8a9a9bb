import numpy as np
import torch
import torch.nn as nn


def get_fancy_cmap():
    colors = np.array([[0.9, 0.1, 0.1], [0.1, 0.9, 0.1], [0.1, 0.1, 0.9]])

    def cmap(values):
        idx = np.clip((values * (len(colors) - 1)).round().astype(int), 0, len(colors) - 1)
        return colors[idx]
    return cmap


class DifferentiableBlocksWorld(nn.Module):
    name = 'dbw'

    def __init__(self, n_blocks=4, opacity_init=0.5, kill_blocks=False):
        super().__init__()
        self.n_blocks = n_blocks
        self.BNF = 6  # faces per block
        N = n_blocks
        self.alpha_logit = nn.Parameter(torch.logit(torch.ones(N) * opacity_init) + 1e-3)
        self.kill_blocks = kill_blocks

    @property
    def env_n_faces(self):
        return 2

    def get_opacities(self):
        alpha = torch.sigmoid(self.alpha_logit)
        if self.kill_blocks:
            alpha = alpha * (alpha > 0.01)
        return alpha

    @torch.no_grad()
    def get_nb_opaque_blocks(self):
        return (self.get_opacities() > 0.5).sum().item()

    @torch.no_grad()
    def get_scene_face_colors(self, filter_transparent=False, w_env=True):
        val_blocks = torch.linspace(0, 1, self.n_blocks + 1)[1:].to(self.alpha_logit.device)
        if filter_transparent:
            val_blocks = val_blocks[self.get_opacities() > 0.5]
        elif self.kill_blocks:
            val_blocks = val_blocks[self.get_opacities() > 0.01]
        cmap = get_fancy_cmap()
        NFE = self.env_n_faces if w_env else 0
        values = torch.cat([torch.zeros(NFE).to(self.alpha_logit.device) , val_blocks.repeat_interleave(self.BNF)])
        colors = cmap(values.cpu().numpy())
        return torch.from_numpy(colors).float().to(self.alpha_logit.device)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = DifferentiableBlocksWorld(n_blocks=4, kill_blocks=True).to(device)
    print(model.get_nb_opaque_blocks())
    print(model.get_scene_face_colors(filter_transparent=True).shape)
