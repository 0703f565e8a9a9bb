# mmaction2 pull request 1188 ("[Fix] Fix device bug for class weight": the soft-label branch
# of CrossEntropyLoss multiplies by `self.class_weight`, a plain tensor attribute left on the
# CPU when the recognizer is moved to the GPU): mmaction/models/losses/base.py's
# BaseWeightedLoss and losses/cross_entropy_loss.py's CrossEntropyLoss, with a TSN-style head
# and a mixup blend producing the soft labels, minimised (no registry, no backbone).
from abc import ABCMeta, abstractmethod

import torch
import torch.nn as nn
import torch.nn.functional as F


class BaseWeightedLoss(nn.Module, metaclass=ABCMeta):
    def __init__(self, loss_weight=1.0):
        super().__init__()
        self.loss_weight = loss_weight

    @abstractmethod
    def _forward(self, *args, **kwargs):
        pass

    def forward(self, *args, **kwargs):
        ret = self._forward(*args, **kwargs)
        if isinstance(ret, dict):
            for k in ret:
                if 'loss' in k:
                    ret[k] *= self.loss_weight
        else:
            ret *= self.loss_weight
        return ret


class CrossEntropyLoss(BaseWeightedLoss):
    def __init__(self, loss_weight=1.0, class_weight=None):
        super().__init__(loss_weight=loss_weight)
        self.class_weight = None
        if class_weight is not None:
            self.class_weight = torch.Tensor(class_weight)

    def _forward(self, cls_score, label, **kwargs):
        if cls_score.size() == label.size():
            # calculate loss for soft label
            assert cls_score.dim() == 2, 'Only support 2-dim soft label'
            lsm = F.log_softmax(cls_score, 1)
            if self.class_weight is not None:
                lsm = lsm * self.class_weight.unsqueeze(0)
            loss_cls = -(label * lsm).sum(1)
            if self.class_weight is not None:
                loss_cls = loss_cls.sum() / torch.sum(
                    self.class_weight.unsqueeze(0) * label)
            else:
                loss_cls = loss_cls.mean()
        else:
            # calculate loss for hard label
            if self.class_weight is not None:
                kwargs['weight'] = self.class_weight.to(cls_score.device)
            loss_cls = F.cross_entropy(cls_score, label, **kwargs)
        return loss_cls


class TSNHead(nn.Module):
    def __init__(self, num_classes, in_channels, loss_cls):
        super().__init__()
        self.fc_cls = nn.Linear(in_channels, num_classes)
        self.loss_cls = loss_cls

    def forward(self, x):
        return self.fc_cls(x)

    def loss(self, cls_score, labels):
        return dict(loss_cls=self.loss_cls(cls_score, labels))


def mixup_blend(feats, label, num_classes, alpha=0.2):
    one_hot_label = F.one_hot(label, num_classes=num_classes)
    lam = torch.distributions.Beta(alpha, alpha).sample()
    rand_index = torch.randperm(feats.size(0))
    mixed = lam * feats + (1 - lam) * feats[rand_index, :]
    mixed_label = lam * one_hot_label + (1 - lam) * one_hot_label[rand_index, :]
    return mixed, mixed_label


if __name__ == '__main__':
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    head = TSNHead(num_classes=4, in_channels=8,
                   loss_cls=CrossEntropyLoss(class_weight=[1.0, 2.0, 1.0, 0.5])).to(device)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.01)
    for _ in range(2):
        feats = torch.randn(6, 8).to(device)
        labels = torch.randint(0, 4, (6,)).to(device)
        feats, soft_labels = mixup_blend(feats, labels, num_classes=4)
        losses = head.loss(head(feats), soft_labels)
        optimizer.zero_grad()
        losses['loss_cls'].backward()
        optimizer.step()
        print(losses['loss_cls'].item())
