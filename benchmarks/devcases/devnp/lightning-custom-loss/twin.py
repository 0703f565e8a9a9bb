# Lightning issue 17299: a custom loss creates a tensor in forward, minimised (the
# LightningModule's training_step run by hand).
import torch
import torch.nn as nn


class AvgReturnTop10Loss(nn.Module):
    def __init__(self, alpha=5):
        super(AvgReturnTop10Loss, self).__init__()
        self.alpha = alpha

    def forward(self, y_pred: torch.Tensor, y_true: torch.Tensor) -> torch.Tensor:
        errors = torch.pow(y_true - y_pred, 2)

        top_10_percent = int(y_pred.size(0) * 0.1)
        _, indices = torch.topk(y_pred, top_10_percent)

        penalty_factor = torch.ones(
            y_pred.size(0), dtype=torch.float32, device=y_pred.device,
        ) # error occur from this line

        weighted_errors = penalty_factor * errors

        loss = torch.mean(torch.abs(weighted_errors))
        return loss


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)
        self.loss_fn = AvgReturnTop10Loss()

    def training_step(self, batch, batch_idx):
        x, y = batch
        y_pred = self.net(x).squeeze(-1)
        return self.loss_fn(y_pred, y)


if __name__ == '__main__':
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Regressor().to(device)
    batch = (torch.randn(20, 8).to(device), torch.randn(20).to(device))
    print(model.training_step(batch, 0))
