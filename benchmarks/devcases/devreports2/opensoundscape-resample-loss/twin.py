# opensoundscape issue 438 ("cuda device issues": "in loss calculation, one tensor is on cuda one
# on CPU" with ResampleLoss; fixed in commit 0e1f1ae "use correct devices in ResampleLoss", which
# passes the class frequencies as a tensor on the model's device and builds `freq_inv` there):
# opensoundscape/torch/loss.py's binary_cross_entropy and ResampleLoss with
# torch/models/cnn.py's PytorchModel.train_epoch and CnnResampleLoss._init_loss_fn, minimised:
# a linear network, a list of batches and a label array stand in for the architecture,
# Preprocessor loader and dataframe; no logging, one epoch.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def binary_cross_entropy(pred, label, weight=None, reduction="mean"):
    if weight is not None:
        weight = weight.float()
    loss = F.binary_cross_entropy_with_logits(pred, label.float(), weight, reduction="none")
    return loss.mean() if reduction == "mean" else loss


class ResampleLoss(nn.Module):
    def __init__(self, class_freq, reduction="mean", loss_weight=1.0):
        super(ResampleLoss, self).__init__()
        self.loss_weight = loss_weight
        self.reduction = reduction
        self.cls_criterion = binary_cross_entropy
        # mapping function params
        self.map_alpha = 10.0
        self.map_beta = 0.2
        self.map_gamma = 0.1

        self.class_freq = class_freq.float()
        self.neg_class_freq = self.class_freq.sum() - self.class_freq
        self.num_classes = self.class_freq.shape[0]
        self.train_num = self.class_freq.sum()

        self.neg_scale = 0.2  # else 1.0
        init_bias = 0.05  # else 0.0
        self.init_bias = (
            -torch.log(self.train_num / self.class_freq - 1) * init_bias / self.neg_scale
        )
        self.freq_inv = (
            torch.ones(self.class_freq.shape, device=self.class_freq.device)
            / self.class_freq
        )
        self.propotion_inv = self.train_num / self.class_freq

    def forward(self, cls_score, label, reduction_override=None):
        reduction = reduction_override if reduction_override else self.reduction
        weight = self.reweight_functions(label)
        cls_score, weight = self.logit_reg_functions(label.float(), cls_score, weight)
        loss = self.cls_criterion(cls_score, label.float(), weight, reduction=reduction)
        return self.loss_weight * loss

    def reweight_functions(self, label):
        return self.rebalance_weight(label.float())

    def logit_reg_functions(self, labels, logits, weight=None):
        logits += self.init_bias
        logits = logits * (1 - labels) * self.neg_scale + logits * labels
        weight = weight / self.neg_scale * (1 - labels) + weight * labels
        return logits, weight

    def rebalance_weight(self, gt_labels):
        repeat_rate = torch.sum(gt_labels.float() * self.freq_inv, dim=1, keepdim=True)
        pos_weight = self.freq_inv.clone().detach().unsqueeze(0) / repeat_rate
        return torch.sigmoid(self.map_beta * (pos_weight - self.map_gamma)) + self.map_alpha


class PytorchModel:
    def __init__(self, n_features, classes):
        self.classes = classes
        self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        self.network = nn.Linear(n_features, len(classes)).to(self.device)
        self.opt_net = torch.optim.SGD(self.network.parameters(), lr=0.01)

    def train_epoch(self):
        self.network.train()
        batch_loss = []
        for batch_idx, batch_data in enumerate(self.train_loader):
            batch_tensors = batch_data["X"].to(self.device)
            batch_labels = batch_data["y"].to(self.device)
            logits = self.network.forward(batch_tensors)
            loss = self.loss_fn(logits, batch_labels)
            batch_loss.append(loss.detach().cpu().numpy())
            self.opt_net.zero_grad()
            loss.backward()
            self.opt_net.step()
        return np.mean(batch_loss)

    def train(self, train_labels, train_loader):
        self.train_labels = train_labels
        self.train_loader = train_loader
        self._init_loss_fn()
        return self.train_epoch()


class CnnResampleLoss(PytorchModel):
    def __init__(self, n_features, classes):
        super(CnnResampleLoss, self).__init__(n_features, classes)
        self.loss_cls = ResampleLoss

    def _init_loss_fn(self):
        class_frequency = (
            torch.tensor(self.train_labels).sum(0).to(self.device)
        )

        # initializing ResampleLoss requires us to pass class_frequency
        self.loss_fn = self.loss_cls(class_frequency)


if __name__ == "__main__":
    labels = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1]])
    loader = [{"X": torch.randn(2, 5), "y": torch.tensor(labels[i:i + 2])} for i in (0, 2)]
    model = CnnResampleLoss(n_features=5, classes=["a", "b", "c"])
    print(model.train(labels, loader))
