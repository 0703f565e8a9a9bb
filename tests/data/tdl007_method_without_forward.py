"""A module with no `forward` of its own: a scene of blocks whose methods the program calls on
the model it moved to the GPU. `face_colors` makes its values with `torch.linspace` on the CPU
and keeps those whose opacity (computed from the GPU parameter) is high: a CPU tensor indexed
with a mask on the GPU. `shaded` scales CPU values by the GPU opacities.
Source: https://github.com/monniert/differentiable-blocksworld/issues/2 (`get_scene_face_colors`,
"indices should be either on cpu or on the same device as the indexed tensor (cpu)"). The meta
stand-in of the fixture proofs cannot index with a mask (`nonzero` has no meta kernel), so this
program lives here and is proved under the pretend accelerator:
tests/runtime/test_fake_accelerator.py."""
import torch
import torch.nn as nn


class BlocksWorld(nn.Module):
    def __init__(self, n_blocks=4):
        super().__init__()
        self.n_blocks = n_blocks
        self.alpha_logit = nn.Parameter(torch.zeros(n_blocks))

    def get_opacities(self):
        return torch.sigmoid(self.alpha_logit)

    @torch.no_grad()
    def face_colors(self, filter_transparent=False):
        values = torch.linspace(0, 1, self.n_blocks + 1)[1:]  # expect: TDL007@18
        if filter_transparent:
            values = values[self.get_opacities() > 0.4]
        return values

    def shaded(self):
        levels = torch.linspace(0.5, 1, self.n_blocks)  # expect: TDL007@18
        return levels * self.get_opacities()


def main(device):
    scene = BlocksWorld().to(device)
    return scene.face_colors(filter_transparent=True), scene.shaded()


if __name__ == "__main__":
    main(torch.device("cuda" if torch.cuda.is_available() else "cpu"))
