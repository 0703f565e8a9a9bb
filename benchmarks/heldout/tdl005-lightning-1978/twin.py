import torch
import torch.nn as nn


class LitClassifier(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.layer = nn.Linear(8, num_classes)
        self.register_buffer('class_weights', torch.tensor([1.0, 2.0, 2.0, 0.5]))

    def forward(self, x):
        return self.layer(x)

    def training_step(self, batch):
        x, y = batch
        logits = self(x)
        return nn.functional.cross_entropy(logits, y, weight=self.class_weights)


device = "cuda" if torch.cuda.is_available() else "cpu"
model = LitClassifier().to(device)
batch = (torch.randn(4, 8, device=device), torch.randint(0, 4, (4,), device=device))
loss = model.training_step(batch)
loss.backward()
