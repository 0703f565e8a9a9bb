from collections import defaultdict
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class ModelTrainer:
    def __init__(self, model, device):
        self.model = model.to(device)
        self.device = device
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def train_one_batch(self, images, targets):
        images, targets = images.to(self.device), targets.to(self.device)
        predicts = self.model(images)
        box_loss = nn.functional.l1_loss(predicts[:, :4], targets[:, :4])
        cls_loss = nn.functional.mse_loss(predicts[:, 4:], targets[:, 4:])
        loss = box_loss + cls_loss
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"BoxLoss": box_loss, "ClsLoss": cls_loss}

    def train_one_epoch(self, dataloader):
        self.model.train()
        total_loss = defaultdict(float)
        for batch_size, images, targets in dataloader:
            loss_each = self.train_one_batch(images, targets)
            for loss_name, loss_val in loss_each.items():
                total_loss[loss_name] += loss_val * batch_size
        return {name: value / len(dataloader) for name, value in total_loss.items()}


def collate(items):
    images = torch.stack([i[0] for i in items])
    return len(items), images, torch.stack([i[1] for i in items])


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
trainer = ModelTrainer(nn.Sequential(nn.Flatten(), nn.Linear(48, 6)), device)
loader = DataLoader(TensorDataset(torch.rand(8, 3, 4, 4), torch.rand(8, 6)), batch_size=4, collate_fn=collate)
print(trainer.train_one_epoch(loader))
