# ClimateNet issue 21 ("Indices should be either on cpu or on the same device as the indexed
# tensor (cpu)" at `true_1_hot = torch.eye(num_classes)[true.squeeze(1)]` in
# climatenet/utils/losses.py; the reporter's fix, pull request 22: `torch.eye(num_classes)
# .to(true.device)[true.squeeze(1)]`): utils/losses.py's jaccard_loss, utils/metrics.py's
# get_cm and models.py's CGNet.train, minimised: a two-layer convolution stands in for
# CGNetModule, random fields and labels for the xarray dataset, and tqdm is left out.
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam
from torch.utils.data import DataLoader, TensorDataset


def jaccard_loss(logits, true, eps=1e-7):
    """Computes the Jaccard loss, a.k.a the IoU loss."""
    num_classes = logits.shape[1]
    true_1_hot = torch.eye(num_classes).to(true.device)[true.squeeze(1)]
    true_1_hot = true_1_hot.permute(0, 3, 1, 2).float()
    probas = F.softmax(logits, dim=1)
    true_1_hot = true_1_hot.type(logits.type())
    dims = (0,) + tuple(range(2, true.ndimension()))
    intersection = torch.sum(probas * true_1_hot, dims)
    cardinality = torch.sum(probas + true_1_hot, dims)
    union = cardinality - intersection
    jacc_loss = (intersection / (union + eps)).mean()
    return (1 - jacc_loss)


def get_cm(pred, gt, n_classes=3):
    cm = np.zeros((n_classes, n_classes))
    for i in range(len(pred)):
        pred_tmp = pred[i].int()
        gt_tmp = gt[i].int()
        for actual in range(n_classes):
            for predicted in range(n_classes):
                is_actual = torch.eq(gt_tmp, actual)
                is_pred = torch.eq(pred_tmp, predicted)
                cm[actual][predicted] += len(torch.nonzero(is_actual & is_pred))
    return cm


class CGNetModule(nn.Module):
    def __init__(self, classes=3, channels=4):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(channels, 8, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(8, classes, 1))

    def forward(self, x):
        return self.body(x)


class CGNet():
    def __init__(self, config):
        self.config = config
        self.network = CGNetModule(classes=len(self.config.labels), channels=len(list(self.config.fields))).cuda()
        self.optimizer = Adam(self.network.parameters(), lr=self.config.lr)

    def train(self, dataset):
        '''Train the network on the given dataset for the given amount of epochs'''
        self.network.train()
        loader = DataLoader(dataset, batch_size=self.config.train_batch_size, shuffle=True)
        for epoch in range(1, self.config.epochs+1):
            print(f'Epoch {epoch}:')
            aggregate_cm = np.zeros((3,3))
            for features, labels in loader:
                # Push data on GPU and pass forward
                features = torch.tensor(features.numpy()).cuda()
                labels = torch.tensor(labels.numpy()).cuda()
                outputs = torch.softmax(self.network(features), 1)
                # Update training CM
                predictions = torch.max(outputs, 1)[1]
                aggregate_cm += get_cm(predictions, labels, 3)
                # Pass backward
                loss = jaccard_loss(outputs, labels)
                print(f'Loss: {loss.item()}')
                loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad()
            print('Epoch stats:')
            print(aggregate_cm)


if __name__ == '__main__':
    config = SimpleNamespace(labels=['Background', 'TC', 'AR'], fields=['TMQ', 'U850', 'V850', 'PSL'],
                             lr=0.001, train_batch_size=2, epochs=1)
    train = TensorDataset(torch.randn(4, 4, 8, 8), torch.randint(0, 3, (4, 8, 8)))
    cgnet = CGNet(config)
    cgnet.train(train)
