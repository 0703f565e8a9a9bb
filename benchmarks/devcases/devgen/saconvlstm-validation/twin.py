# SA-ConvLSTM-Pytorch pull request 26: pipeline/trainer.py Trainer before the fix, minimised: a
# one-layer ConvLSTM stand-in for the Seq2Seq model, random tensors in the loaders, no early stopping
# and no csv; core.constants.DEVICE inlined.
from typing import Callable, Dict, Tuple

import torch
from torch import nn
from torch.nn.modules.loss import _Loss
from torch.optim import Optimizer
from torch.utils.data import DataLoader, TensorDataset

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class Seq2Seq(nn.Module):
    def __init__(self, num_channels: int = 1, num_kernels: int = 4) -> None:
        super().__init__()
        self.num_kernels = num_kernels
        self.conv = nn.Conv2d(num_channels + num_kernels, 4 * num_kernels, 3, padding=1)
        self.out = nn.Conv2d(num_kernels, num_channels, 1)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        batch_size, _, seq_len, height, width = X.size()
        h = torch.zeros(batch_size, self.num_kernels, height, width, device=DEVICE)
        c = torch.zeros(batch_size, self.num_kernels, height, width, device=DEVICE)
        outputs = []
        for t in range(seq_len):
            i, f, g, o = torch.chunk(self.conv(torch.cat([X[:, :, t], h], dim=1)), 4, dim=1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            outputs.append(self.out(h))
        return torch.sigmoid(torch.stack(outputs, dim=2))


class Trainer:
    def __init__(
        self,
        model: nn.Module,
        train_epochs: int,
        train_dataloader: DataLoader,
        valid_dataloader: DataLoader,
        loss_criterion: _Loss,
        accuracy_criterion: Callable,
        optimizer: Optimizer,
    ) -> None:
        self.model = model.to(DEVICE)
        self.train_epochs = train_epochs
        self.train_dataloader = train_dataloader
        self.valid_dataloader = valid_dataloader
        self.loss_criterion = loss_criterion
        self.accuracy_criterion = accuracy_criterion
        self.optimizer = optimizer

    def run(self) -> None:
        results = self.train()
        print(results)

    def train(self) -> Dict:
        results = {"train_loss": [], "validation_loss": [], "accuracy": []}
        for epoch in range(1, self.train_epochs + 1):
            train_loss = 0
            self.model.train()
            for _, (input, target) in enumerate(self.train_dataloader, start=1):
                input, target = input.to(DEVICE), target.to(DEVICE)

                output = self.model(input)
                loss = self.loss_criterion(output.flatten(), target.flatten())

                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

                train_loss = loss.item()

            train_loss /= len(self.train_dataloader)
            valid_loss, valid_acc = self.validation()

            results["train_loss"].append(train_loss)
            results["validation_loss"].append(valid_loss)
            results["accuracy"].append(valid_acc)
        return results

    def validation(self) -> Tuple[float, float]:
        self.model.eval()
        with torch.no_grad():
            input, target = next(iter(self.valid_dataloader))
            input, target = input.to(DEVICE), target.to(DEVICE)
            output = self.model(input)
            loss = self.loss_criterion(output.flatten(), target.flatten())
            acc = self.accuracy_criterion(output.flatten(), target.flatten())

        return loss.item(), acc.item()


if __name__ == "__main__":
    model = Seq2Seq()
    data = TensorDataset(torch.rand(8, 1, 4, 8, 8), torch.rand(8, 1, 4, 8, 8))
    trainer = Trainer(
        model=model,
        train_epochs=1,
        train_dataloader=DataLoader(data, batch_size=4),
        valid_dataloader=DataLoader(data, batch_size=4),
        loss_criterion=nn.MSELoss(),
        accuracy_criterion=nn.L1Loss(),
        optimizer=torch.optim.Adam(model.parameters(), lr=1e-3),
    )
    trainer.run()
