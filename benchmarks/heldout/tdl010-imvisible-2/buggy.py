import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class LytNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.cls = nn.Linear(8, 5)
        self.reg = nn.Linear(8, 4)

    def forward(self, x):
        f = self.body(x)
        return self.cls(f), self.reg(f)


def my_loss(classifier, regression, points, light_mode):
    MSE = nn.functional.mse_loss(regression, points)
    cross_entropy = nn.functional.cross_entropy(classifier, light_mode)
    return MSE + cross_entropy, MSE, cross_entropy


net = LytNet().to(device)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
dataset = TensorDataset(torch.rand(8, 3, 32, 32), torch.randint(0, 5, (8,)), torch.rand(8, 4))
traindataloader = DataLoader(dataset, batch_size=4)
valdataloader = DataLoader(dataset, batch_size=4)

for epoch in range(1):
    running_loss = 0.0
    running_loss_MSE = 0.0
    running_loss_cross_entropy = 0.0
    for i, data in enumerate(traindataloader, 0):
        images, mode, points = data
        images, mode, points = images.to(device), mode.to(device), points.to(device)
        optimizer.zero_grad()
        pred_classes, pred_direc = net(images)
        loss, MSE, cross_entropy = my_loss(pred_classes, pred_direc, points, mode)
        loss.backward()
        optimizer.step()
        running_loss += loss
        running_loss_MSE += MSE
        running_loss_cross_entropy += cross_entropy
    print('train', running_loss / len(traindataloader))

    val_running_loss = 0.0
    for j, data in enumerate(valdataloader, 0):
        images, mode, points = data
        images, mode, points = images.to(device), mode.to(device), points.to(device)
        pred_classes, pred_direc = net(images)
        loss, MSE, cross_entropy = my_loss(pred_classes, pred_direc, points, mode)
        val_running_loss += loss
    print('val', val_running_loss / len(valdataloader))
