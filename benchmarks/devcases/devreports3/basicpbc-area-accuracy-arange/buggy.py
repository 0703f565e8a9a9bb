# ykdai/BasicPBC issue 4 (training on CUDA with torch 2.2.1: "RuntimeError: indices should be
# either on cpu or on the same device as the indexed tensor (cpu)" at basicpbc_arch.py's
# area_accuracy = torch.tensor([(data["segment"] == ii + 1).sum() for ii in torch.arange(0,
# all_matches_origin[0].shape[0])[all_matches_origin[0] == indices0[0]]]) ...; the reporter's
# fix: indices_new = torch.arange(0, all_matches_origin[0].shape[0]).to(all_matches_origin[0]
# .device), indexed instead; "torch.arange() will create tensors on CPU by default"):
# basicsr/archs/basicpbc_arch.py at 8e79358 (MLP, normalize_keypoints, KeypointEncoder,
# AttentionalGNN, transport, BasicPBC.forward) and the model's feed_data/optimize step,
# minimised: a linear segment descriptor on given per-segment colours stands in for the RAFT flow
# warp and the UNet SegmentDescriptor, one self/cross GNN layer pair of width 16 with plain
# dot-product attention, a random 1-pair sample for the PaintBucket dataset.
import argparse

import torch
import torch.nn as nn


def MLP(channels: list, do_bn=True):
    """Multi-layer perceptron"""
    n = len(channels)
    layers = []
    for i in range(1, n):
        layers.append(nn.Conv1d(channels[i - 1], channels[i], kernel_size=1, bias=True))
        if i < (n - 1):
            if do_bn:
                layers.append(nn.InstanceNorm1d(channels[i]))
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def normalize_keypoints(kpts, image_shape):
    """Normalize keypoints locations based on image image_shape"""
    _, _, height, width = image_shape
    one = kpts.new_tensor(1)
    size = torch.stack([one * width, one * width, one * height, one * height])[None]
    center = size / 2
    scaling = size.max(1, keepdim=True).values * 0.7
    return (kpts - center[:, None, :]) / scaling[:, None, :]


class KeypointEncoder(nn.Module):
    """Joint encoding of visual appearance and location using MLPs"""

    def __init__(self, feature_dim, layers):
        super().__init__()
        self.encoder = MLP([4] + layers + [feature_dim])
        nn.init.constant_(self.encoder[-1].bias, 0.0)

    def forward(self, kpts):
        inputs = kpts.transpose(1, 2)
        x = self.encoder(inputs)
        return x


class AttentionalPropagation(nn.Module):
    def __init__(self, feature_dim: int):
        super().__init__()
        self.proj = nn.Conv1d(feature_dim, feature_dim, kernel_size=1)
        self.mlp = MLP([feature_dim * 2, feature_dim * 2, feature_dim])
        nn.init.constant_(self.mlp[-1].bias, 0.0)

    def forward(self, x, source):
        scores = torch.einsum("bdn,bdm->bnm", self.proj(x), self.proj(source)) / x.shape[1] ** 0.5
        message = torch.einsum("bnm,bdm->bdn", torch.softmax(scores, dim=-1), source)
        return self.mlp(torch.cat([x, message], dim=1))


class AttentionalGNN(nn.Module):
    def __init__(self, feature_dim: int, layer_names: list):
        super().__init__()
        self.layers = nn.ModuleList([AttentionalPropagation(feature_dim) for _ in range(len(layer_names))])
        self.names = layer_names

    def forward(self, desc0, desc1):
        for layer, name in zip(self.layers, self.names):
            if name == "cross":
                src0, src1 = desc1, desc0
            else:  # if name == 'self':
                src0, src1 = desc0, desc1
            delta0, delta1 = layer(desc0, src0), layer(desc1, src1)
            desc0, desc1 = (desc0 + delta0), (desc1 + delta1)
        return desc0, desc1


def transport(scores, alpha):
    """Perform Differentiable Optimal Transport in Log-space for stability"""
    b, m, n = scores.shape

    bins0 = alpha.expand(b, m, 1)
    bins1 = alpha.expand(b, 1, n)
    alpha = alpha.expand(b, 1, 1)

    # pad additional scores for unmatcheed (to -1)
    # alpha is the learned threshold
    couplings = torch.cat([torch.cat([scores, bins0], -1), torch.cat([bins1, alpha], -1)], 1)

    return couplings


class BasicPBC(nn.Module):
    def __init__(self, ch_in=6, descriptor_dim=16, keypoint_encoder=[8, 16], GNN_layer_num=1):
        super().__init__()

        config = argparse.Namespace()
        config.ch_in = ch_in
        config.descriptor_dim = descriptor_dim
        config.keypoint_encoder = keypoint_encoder
        config.GNN_layers = ["self", "cross"] * GNN_layer_num
        self.config = config

        self.kenc = KeypointEncoder(self.config.descriptor_dim, self.config.keypoint_encoder)
        self.gnn = AttentionalGNN(self.config.descriptor_dim, self.config.GNN_layers)
        self.final_proj = nn.Conv1d(self.config.descriptor_dim, self.config.descriptor_dim, kernel_size=1, bias=True)

        bin_score = torch.nn.Parameter(torch.tensor(1.0))
        self.register_parameter("bin_score", bin_score)
        self.segment_desc = nn.Conv1d(3, self.config.descriptor_dim, kernel_size=1)

    def forward(self, data):
        """Run SuperGlue on a pair of keypoints and descriptors"""
        kpts, kpts_ref = (data["keypoints"].float(), data["keypoints_ref"].float())

        desc = self.segment_desc(data["colors"])
        desc_ref = self.segment_desc(data["colors_ref"])
        desc = desc[..., 1:]
        desc_ref = desc_ref[..., 1:]

        all_matches = data["all_matches"] if "all_matches" in data else None  # shape = (1, K1)

        # Keypoint normalization.
        kpts = normalize_keypoints(kpts, data["line"].shape)
        kpts_ref = normalize_keypoints(kpts_ref, data["line_ref"].shape)

        # Keypoint MLP encoder.
        pos = self.kenc(kpts)
        pos_ref = self.kenc(kpts_ref)

        desc = desc + pos
        desc_ref = desc_ref + pos_ref

        # Multi-layer Transformer network.
        desc, desc_ref = self.gnn(desc, desc_ref)

        # Final MLP projection.
        mdesc, mdesc_ref = self.final_proj(desc), self.final_proj(desc_ref)

        # Compute matching descriptor distance.
        scores = torch.einsum("bdn,bdm->bnm", mdesc, mdesc_ref)

        # b k1 k2
        scores = scores / (self.config.descriptor_dim) ** 0.5

        # Run the optimal transport.
        b, m, n = scores.size()

        scores = transport(scores, self.bin_score)

        weights = data["numpt"].float()  # .cuda()
        all_matches_origin = all_matches.clone() if all_matches is not None else None

        if all_matches is not None:
            all_matches[all_matches == -1] = n
            loss = nn.functional.cross_entropy(scores[:, :-1, :].view(-1, n + 1), all_matches.long().view(-1), reduction="mean")
            loss = loss.mean()

        scores = nn.functional.softmax(scores, dim=2)

        max0, max1 = scores[:, :-1, :].max(2), scores[:, :, :-1].max(1)
        indices0, indices1 = max0.indices, max1.indices
        mscores0 = max0.values

        valid0 = indices0 < n
        valid1 = indices1 < m
        indices0 = torch.where(valid0, indices0, indices0.new_tensor(-1))
        indices1 = torch.where(valid1, indices1, indices1.new_tensor(-1))

        if all_matches is None:
            return {
                "match_scores": scores[:, :-1, :][0],
                "matches0": indices0[0],  # use -1 for invalid match
                "matching_scores0": mscores0[0],
                "loss": -1,
                "skip_train": True,
                "accuracy": -1,
                "area_accuracy": -1,
                "valid_accuracy": -1,
                "invalid_accuracy": -1,
            }
        else:
            accuracy = (all_matches_origin[0] == indices0[0]).sum() / len(all_matches_origin[0])

            area_accuracy = torch.tensor(
                [(data["segment"] == ii + 1).sum() for ii in torch.arange(0, all_matches_origin[0].shape[0])[all_matches_origin[0] == indices0[0]]]
            ).sum() / (weights.sum() * 1.0)

            valid_accuracy = ((all_matches_origin[0] == indices0[0]) & (all_matches_origin[0] != -1)).sum() / (all_matches_origin[0] != -1).sum()

            invalid_accuracy = (
                (((all_matches_origin[0] == indices0[0]) & (all_matches_origin[0] == -1)).sum() / (all_matches_origin[0] == -1).sum()).item()
                if (all_matches_origin[0] == -1).sum() > 0
                else None
            )

            return {
                "match_scores": scores[:, :-1, :][0],
                "matches0": indices0[0],  # use -1 for invalid match
                "matching_scores0": mscores0[0],
                "loss": loss,
                "skip_train": False,
                "accuracy": accuracy.item(),
                "area_accuracy": area_accuracy.item(),
                "valid_accuracy": valid_accuracy.item(),
                "invalid_accuracy": invalid_accuracy,
            }


def make_sample(k1=6, k2=5, h=16, w=16):
    g = torch.Generator().manual_seed(0)
    segment = torch.randint(1, k1 + 1, (1, h, w), generator=g)
    all_matches = torch.randint(-1, k2, (1, k1), generator=g)
    all_matches[0, 0] = 0  # at least one segment matched
    return {
        "keypoints": torch.rand(1, k1, 4, generator=g) * w,
        "keypoints_ref": torch.rand(1, k2, 4, generator=g) * w,
        "colors": torch.rand(1, 3, k1 + 1, generator=g),
        "colors_ref": torch.rand(1, 3, k2 + 1, generator=g),
        "line": torch.rand(1, 3, h, w, generator=g),
        "line_ref": torch.rand(1, 3, h, w, generator=g),
        "segment": segment,
        "numpt": torch.tensor([float(h * w)]),
        "all_matches": all_matches,
    }


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net_g = BasicPBC().to(device)
    optimizer = torch.optim.Adam(net_g.parameters(), lr=1e-4)

    for current_iter in range(2):
        # feed_data: every tensor of the sample goes to the device
        data = {k: v.to(device) for k, v in make_sample().items()}
        output = net_g(data)
        optimizer.zero_grad()
        output["loss"].backward()
        optimizer.step()
        print(current_iter, output["accuracy"], output["area_accuracy"], output["valid_accuracy"])
