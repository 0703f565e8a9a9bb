import numpy as np
import torch
import torch.nn as nn


class Predictor(nn.Module):
    def __init__(self, hidden_size=8):
        super().__init__()
        self.W = nn.Sequential(nn.Linear(16, hidden_size), nn.ReLU(), nn.Linear(hidden_size, 1))

    def forward(self, x):
        return torch.sigmoid(self.W(x)).squeeze(-1)


def predict(model, batches):
    all_preds = []
    with torch.no_grad():
        for fps in batches:
            fps = torch.from_numpy(fps).float().cuda() if torch.cuda.is_available() else torch.from_numpy(fps).float()
            preds = model(fps)
            all_preds.append(preds.cpu().numpy())
    return np.concatenate(all_preds)


model = Predictor()
if torch.cuda.is_available():
    model = model.cuda()
batches = [np.random.rand(4, 16) for _ in range(2)]
print(predict(model, batches))
