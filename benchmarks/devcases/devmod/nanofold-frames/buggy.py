import torch
from torch import nn


class Frame:
    def __init__(self, rotations=torch.empty(0, 3, 3), translations=torch.empty(0, 3)):
        self.rotations = rotations
        self.translations = translations
        r = rotations.shape
        t = translations.shape

        if len(r) < 2 or len(t) < 1 or r[:-2] != t[:-1] or (r[-2], r[-1], t[-1]) != (3, 3, 3):
            raise ValueError(
                f"Expected rotations to have shape (3, 3) and translations to have shape (3) with equal batch dimensions, got {r} and {t}"
            )

    @staticmethod
    def compose(a, b):
        rotations = a.rotations @ b.rotations
        translations = Frame.apply(a, b.translations)
        return Frame(rotations, translations)

    @staticmethod
    def apply(frames, vectors):
        result = frames.rotations @ vectors.unsqueeze(-1) + frames.translations.unsqueeze(-1)
        return result.squeeze(-1)


class BackboneUpdate(nn.Module):
    def __init__(self, single_embedding_size):
        super().__init__()
        self.linear = nn.Linear(single_embedding_size, 3 + 1 + 1 + 1)

    def forward(self, single):
        out = self.linear(single)
        bcd = out[..., :3]

        a = 1 / torch.sqrt(1 + bcd[..., 0] ** 2 + bcd[..., 1] ** 2 + bcd[..., 2] ** 2)
        quaternion = a.unsqueeze(-1) * bcd
        b, c, d = (quaternion[..., 0], quaternion[..., 1], quaternion[..., 2])

        r0 = torch.stack(
            [a**2 + b**2 - c**2 - d**2, 2 * (b * c - a * d), 2 * (a * c + b * d)], dim=-1
        )
        r1 = torch.stack(
            [2 * (b * c + a * d), a**2 - b**2 + c**2 - d**2, 2 * (c * d - a * b)], dim=-1
        )
        r2 = torch.stack(
            [2 * (b * d - a * c), 2 * (a * b + c * d), a**2 - b**2 - c**2 + d**2], dim=-1
        )
        rotations = torch.stack([r0, r1, r2], dim=-2)
        return Frame(rotations=rotations, translations=out[..., 3:])


class StructureModuleLayer(nn.Module):
    def __init__(self, single_embedding_size, pair_embedding_size, dropout):
        super().__init__()
        self.backbone_update = BackboneUpdate(single_embedding_size)
        self.dropout = nn.Dropout(dropout)
        self.layer_norm1 = nn.LayerNorm(single_embedding_size)
        self.layer_norm2 = nn.LayerNorm(single_embedding_size)
        self.relu = nn.ReLU()
        self.linear1 = nn.Linear(single_embedding_size, single_embedding_size)
        self.linear2 = nn.Linear(single_embedding_size, single_embedding_size)
        self.linear3 = nn.Linear(single_embedding_size, single_embedding_size)

    def forward(self, single, pair, frames, frames_truth=None):
        single = self.layer_norm1(self.dropout(single))
        single = single + self.linear3(self.relu(self.linear2(self.relu(self.linear1(single)))))
        single = self.layer_norm2(self.dropout(single))
        frames = Frame.compose(frames, self.backbone_update(single))
        return single, frames, None


class StructureModule(nn.Module):
    def __init__(self, num_layers, single_embedding_size, pair_embedding_size, *args, **kwargs):
        super().__init__()
        self.layers = nn.ModuleList(
            [
                StructureModuleLayer(
                    single_embedding_size=single_embedding_size,
                    pair_embedding_size=pair_embedding_size,
                    *args,
                    **kwargs,
                )
                for _ in range(num_layers)
            ]
        )
        self.single_layer_norm = nn.LayerNorm(single_embedding_size)
        self.pair_layer_norm = nn.LayerNorm(pair_embedding_size)
        self.single_linear = nn.Linear(single_embedding_size, single_embedding_size)

    def forward(self, single, pair, local_coords, frames_truth=None):
        batch_dims = single.shape[:-1]
        single = self.single_layer_norm(single)
        pair = self.pair_layer_norm(pair)
        single = self.single_linear(single)
        frames = Frame(
            rotations=torch.eye(3).unsqueeze(0).repeat(*batch_dims, 1, 1),
            translations=torch.zeros(*batch_dims, 3),
        )

        aux_losses = []
        for i, layer in enumerate(self.layers):
            single, frames, loss = layer(single, pair, frames, frames_truth)
            aux_losses.append(loss)
            if i < len(self.layers) - 1:
                frames.rotations = frames.rotations.detach()

        batched_frames = Frame(frames.rotations.unsqueeze(-3), frames.translations.unsqueeze(-2))
        coords = Frame.apply(batched_frames, local_coords)

        return coords


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = StructureModule(num_layers=2, single_embedding_size=16, pair_embedding_size=8, dropout=0.1)
    model = model.to(device)
    n_residues = 5
    single_representations = torch.zeros(n_residues, 16, device=device)
    pair_representations = torch.randn(n_residues, n_residues, 8, device=device)
    local_coords = torch.randn(n_residues, 3, 3, device=device)
    coords = model(single_representations, pair_representations, local_coords)
    print(coords.shape)
