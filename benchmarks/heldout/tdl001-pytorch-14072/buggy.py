import torch
import torch.nn as nn
from torch.utils import data


class DNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(129, 256), nn.ReLU(), nn.Linear(256, 129))

    def forward(self, x):
        return self.fc(x)


def train(epochs=1):
    train_set = data.TensorDataset(torch.randn(16, 129), torch.randn(16, 129))
    train_loader = data.DataLoader(train_set, batch_size=4)
    model = DNN()
    if torch.cuda.is_available():
        device = torch.device("cuda")
        model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for i, (inputs, labels) in enumerate(train_loader):
            inputs.to(device)
            labels.to(device)
            outputs = model(inputs)
            loss = nn.functional.mse_loss(outputs, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


train()
