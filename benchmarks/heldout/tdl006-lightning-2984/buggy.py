import torch
import torch.nn as nn


class JJG_Transformer(nn.Module):

    def __init__(self, weights_per_position):
        super().__init__()
        self.head = nn.Linear(16, 94 * len(weights_per_position))
        self.n_pos = len(weights_per_position)
        self.criterions = []
        for weight in weights_per_position:
            self.criterions.append(torch.nn.CrossEntropyLoss(weight=weight))

    def forward(self, x):
        return self.head(x).view(x.size(0), self.n_pos, 94)

    def training_step(self, batch, batch_idx):
        x, y = batch
        out = self(x)
        loss = 0
        for i in range(self.n_pos):
            loss = loss + self.criterions[i](out[:, i, :], y[:, i])
        return loss


weights_per_position = [torch.ones(94, dtype=torch.float32) for _ in range(3)]
device = "cuda" if torch.cuda.is_available() else "cpu"
model = JJG_Transformer(weights_per_position).to(device)
batch = (torch.randn(4, 16, device=device), torch.randint(0, 94, (4, 3), device=device))
print(model.training_step(batch, 0))
