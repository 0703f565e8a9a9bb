import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class BasicNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.fc1(x.flatten(1)))
        return F.log_softmax(self.fc2(x), dim=1)


device = "cuda" if torch.cuda.is_available() else "cpu"
train_loader = DataLoader(TensorDataset(torch.rand(32, 1, 28, 28), torch.randint(0, 10, (32,))), batch_size=8)
test_loader = DataLoader(TensorDataset(torch.rand(16, 1, 28, 28), torch.randint(0, 10, (16,))), batch_size=8)
model = BasicNet().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

model.train()
for batch_idx, (data, target) in enumerate(train_loader):
    data, target = data.to(device), target.to(device)
    output = model(data)
    loss = F.nll_loss(output, target)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()

model.eval()
correct = 0
with torch.no_grad():
    for data, target in test_loader:
        output = model(data)
        pred = output.argmax(dim=1, keepdim=True)
        correct += pred.eq(target.view_as(pred)).sum().item()
print(f'Accuracy: {100. * correct / len(test_loader.dataset)}')
