import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class LMSCNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv3d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv3d(4, 2, 1))

    def forward(self, x):
        return self.net(x)

    def compute_loss(self, scores, labels):
        loss_1_1 = nn.functional.cross_entropy(scores, labels)
        return {'total': loss_1_1, 'semantic_1_1': loss_1_1}


def train(model, optimizer, dset, device, epochs=1):
    for epoch in range(epochs):
        epoch_loss = {}
        for t, (data, labels) in enumerate(dset):
            data, labels = data.to(device), labels.to(device)
            scores = model(data)
            loss = model.compute_loss(scores, labels)
            optimizer.zero_grad()
            loss['total'].backward()
            optimizer.step()
            for l_key in loss:
                epoch_loss[l_key] = epoch_loss.get(l_key, 0) + loss[l_key].item()
        print({k: v / len(dset) for k, v in epoch_loss.items()})


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = LMSCNet().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
dset = DataLoader(TensorDataset(torch.rand(4, 1, 4, 4, 4), torch.randint(0, 2, (4, 4, 4, 4))), batch_size=2)
train(model, optimizer, dset, device)
