"""PyTorch trainer module (kindle, before PR #4)."""

from typing import Optional, Tuple, Union

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import TensorDataset
from torch.utils.data.dataloader import DataLoader
from torch.utils.data.sampler import SequentialSampler, SubsetRandomSampler


def _get_n_data_from_dataloader(dataloader: DataLoader) -> int:
    if isinstance(dataloader.sampler, SubsetRandomSampler):
        n_data = len(dataloader.sampler.indices)
    elif isinstance(dataloader.sampler, SequentialSampler):
        n_data = len(dataloader.sampler.data_source)
    else:
        n_data = len(dataloader) * dataloader.batch_size if dataloader.batch_size else 1

    return n_data


def _get_n_batch_from_dataloader(dataloader: DataLoader) -> int:
    n_data = _get_n_data_from_dataloader(dataloader)
    n_batch = dataloader.batch_size if dataloader.batch_size else 1

    return n_data // n_batch


class TorchTrainer:
    """Pytorch Trainer."""

    def __init__(
        self,
        model: nn.Module,
        criterion: nn.Module,
        optimizer: optim.Optimizer,
        device: Union[str, torch.device] = "cpu",
        verbose: int = 1,
    ) -> None:
        if isinstance(device, str):
            device = torch.device(device)

        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.verbose = verbose
        self.device = device

    def train(
        self,
        train_dataloader: DataLoader,
        n_epoch: int,
        shuffle: bool = False,
        test_dataloader: Optional[DataLoader] = None,
    ) -> Tuple[float, float]:
        average_loss, accuracy = -1.0, -1.0
        n_batch = _get_n_batch_from_dataloader(train_dataloader)

        for epoch in range(n_epoch):
            running_loss = 0.0
            correct = 0
            total = 0

            pbar = enumerate(train_dataloader)
            for batch, (data, labels) in pbar:
                self.optimizer.zero_grad()

                model_out = self.model(data.to(self.device))
                loss = self.criterion(model_out, labels)
                loss.backward()
                self.optimizer.step()

                _, predicted = torch.max(model_out, 1)
                total += labels.size(0)
                correct += (predicted == labels).sum().item()

                running_loss += loss.item()

            if test_dataloader is not None:
                self.test(test_dataloader)

            average_loss = running_loss / n_batch
            accuracy = correct / total

        return average_loss, accuracy

    @torch.no_grad()
    def test(self, test_dataloader: DataLoader) -> Tuple[float, float]:
        n_batch = _get_n_batch_from_dataloader(test_dataloader)

        running_loss = 0.0
        correct = 0
        total = 0

        pbar = enumerate(test_dataloader)
        for batch, (data, labels) in pbar:
            model_out = self.model(data.to(self.device))
            running_loss += self.criterion(model_out, labels).item()

            _, predicted = torch.max(model_out, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()

        loss = running_loss / n_batch
        accuracy = correct / total
        return loss, accuracy


if __name__ == "__main__":
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Flatten(), nn.Linear(16, 4)).to(device)
    dataset = TensorDataset(torch.randn(32, 4, 4), torch.randint(0, 4, (32,)))
    train_loader = DataLoader(dataset, batch_size=8)
    test_loader = DataLoader(dataset, batch_size=8)
    trainer = TorchTrainer(
        model, nn.CrossEntropyLoss(), optim.SGD(model.parameters(), lr=0.1), device=device
    )
    trainer.train(train_loader, n_epoch=1, test_dataloader=test_loader)
