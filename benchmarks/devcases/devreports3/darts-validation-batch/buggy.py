# unit8co/darts issue 453 ("RuntimeError: Expected object of device type cuda but got device type
# cpu for argument #1 'self' in call to _thnn_conv2d_forward" when calling fit on a TCNModel on a
# GPU with a val_series; without val_series it works; fixed by pull request 449, "The validation
# dataset batch is not being moved to the gpu device before being used", which adds
# val_batch = self._batch_to_device(val_batch) to _evaluate_validation_loss):
# darts/models/torch_forecasting_model.py before 2379c2d (TorchForecastingModel: __init__,
# _batch_collate_fn, _init_model, fit_from_dataset, _batch_to_device, _train, _compute_loss,
# _evaluate_validation_loss; PastCovariatesTorchModel._produce_train_output) and the TCN model,
# minimised: a one-layer Conv1d module stands in for _TCNModule, a Dataset of (past_target,
# past_covariates, future_target) numpy windows for PastCovariatesTrainingDataset, no
# TimeSeries, tqdm, tensorboard writer, checkpoints or learning-rate scheduler.
from abc import ABC, abstractmethod
from typing import List, Optional, Tuple

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class TorchForecastingModel(ABC):
    def __init__(self, input_chunk_length, output_chunk_length, batch_size=32, n_epochs=100,
                 optimizer_cls=torch.optim.Adam, optimizer_kwargs=None, loss_fn=nn.MSELoss(),
                 nr_epochs_val_period=10, torch_device_str=None):
        super().__init__()

        if torch_device_str is None:
            self.device = self._get_best_torch_device()
        else:
            self.device = torch.device(torch_device_str)

        # We will fill these dynamically, upon first call of fit_from_dataset():
        self.model = None
        self.train_sample = None
        self.output_dim = None

        self.input_chunk_length = input_chunk_length
        self.output_chunk_length = output_chunk_length
        self.nr_epochs_val_period = nr_epochs_val_period
        self.batch_size = batch_size
        self.n_epochs = n_epochs
        self.total_epochs = 0
        self.criterion = loss_fn
        self.optimizer_cls = optimizer_cls
        self.optimizer_kwargs = optimizer_kwargs if optimizer_kwargs is not None else {'lr': 1e-3}

    def _batch_collate_fn(self, batch: List[Tuple]) -> Tuple:
        aggregated = []
        first_sample = batch[0]
        for i in range(len(first_sample)):
            elem = first_sample[i]
            if isinstance(elem, np.ndarray):
                aggregated.append(
                    torch.from_numpy(np.stack([sample[i] for sample in batch], axis=0))
                )
            elif elem is None:
                aggregated.append(None)
        return tuple(aggregated)

    def _init_model(self) -> None:
        model = self._create_model(self.train_sample)

        if np.issubdtype(self.train_sample[0].dtype, np.float32):
            self.model = model.float()
        elif np.issubdtype(self.train_sample[0].dtype, np.float64):
            self.model = model.double()

        self.model = self.model.to(self.device)

        optimizer_kws = {k: v for k, v in self.optimizer_kwargs.items()}
        optimizer_kws['params'] = self.model.parameters()
        self.optimizer = self.optimizer_cls(**optimizer_kws)

    @abstractmethod
    def _create_model(self, train_sample: Tuple[torch.Tensor]) -> torch.nn.Module:
        pass

    @abstractmethod
    def _produce_train_output(self, input_batch: Tuple) -> torch.Tensor:
        pass

    def fit_from_dataset(self, train_dataset: Dataset, val_dataset: Optional[Dataset] = None,
                         verbose: bool = False, epochs: int = 0) -> None:
        train_sample = train_dataset[0]
        if self.model is None:
            # Build model, based on the dimensions of the first series in the train set.
            self.train_sample, self.output_dim = train_sample, train_sample[-1].shape[1]
            self._init_model()

        train_loader = DataLoader(train_dataset,
                                  batch_size=self.batch_size,
                                  shuffle=True,
                                  num_workers=0,
                                  drop_last=False,
                                  collate_fn=self._batch_collate_fn)

        # Prepare validation data
        val_loader = None if val_dataset is None else DataLoader(val_dataset,
                                                                 batch_size=self.batch_size,
                                                                 shuffle=False,
                                                                 num_workers=0,
                                                                 drop_last=False,
                                                                 collate_fn=self._batch_collate_fn)

        # if user wants to train the model for more epochs, ignore the n_epochs parameter
        train_num_epochs = epochs if epochs > 0 else self.n_epochs

        # Train model
        self._train(train_loader, val_loader, verbose, train_num_epochs)

    def _batch_to_device(self, batch):
        batch = [elem.to(self.device) if isinstance(elem, torch.Tensor) else elem for elem in batch]
        return tuple(batch)

    def _train(self, train_loader: DataLoader, val_loader: Optional[DataLoader], verbose: bool,
               epochs: int = 0) -> None:
        best_loss = np.inf

        for epoch in range(self.total_epochs, self.total_epochs + epochs):
            total_loss = 0

            for batch_idx, train_batch in enumerate(train_loader):
                self.model.train()
                train_batch = self._batch_to_device(train_batch)
                output = self._produce_train_output(train_batch[:-1])
                target = train_batch[-1]  # By convention target is always the last element returned by datasets
                loss = self._compute_loss(output, target)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                total_loss += loss.item()

            self.total_epochs = epoch + 1

            if epoch % self.nr_epochs_val_period == 0:
                training_loss = total_loss / len(train_loader)
                if val_loader is not None:
                    validation_loss = self._evaluate_validation_loss(val_loader)

                    if validation_loss < best_loss:
                        best_loss = validation_loss

                    if verbose:
                        print("Training loss: {:.4f}, validation loss: {:.4f}, best val loss: {:.4f}".
                              format(training_loss, validation_loss, best_loss))
                elif verbose:
                    print("Training loss: {:.4f}".format(training_loss))

    def _compute_loss(self, output, target):
        return self.criterion(output, target)

    def _evaluate_validation_loss(self, val_loader: DataLoader):
        total_loss = 0
        self.model.eval()
        with torch.no_grad():
            for batch_idx, val_batch in enumerate(val_loader):
                output = self._produce_train_output(val_batch[:-1])
                target = val_batch[-1]
                loss = self._compute_loss(output, target)
                total_loss += loss.item()

        validation_loss = total_loss / (batch_idx + 1)
        return validation_loss

    def _get_best_torch_device(self):
        is_cuda = torch.cuda.is_available()
        if is_cuda:
            return torch.device("cuda:0")
        else:
            return torch.device("cpu")


class PastCovariatesTorchModel(TorchForecastingModel, ABC):
    def _produce_train_output(self, input_batch: Tuple):
        past_target, past_covariate = input_batch
        # Currently all our PastCovariates models require past target and covariates concatenated
        inpt = torch.cat([past_target, past_covariate], dim=2) if past_covariate is not None else past_target
        return self.model(inpt)


class _TCNModule(nn.Module):
    def __init__(self, input_size, input_chunk_length, target_size, target_length, kernel_size):
        super(_TCNModule, self).__init__()
        self.conv = nn.Conv1d(input_size, target_size, kernel_size, padding=kernel_size - 1)
        self.target_length = target_length

    def forward(self, x):
        # data is of size (batch_size, input_chunk_length, input_size)
        x = x.transpose(1, 2)
        x = self.conv(x)[:, :, -self.target_length:]
        return x.transpose(1, 2)


class TCNModel(PastCovariatesTorchModel):
    def __init__(self, input_chunk_length, output_chunk_length, kernel_size=3, **kwargs):
        super().__init__(input_chunk_length=input_chunk_length,
                         output_chunk_length=output_chunk_length, **kwargs)
        self.kernel_size = kernel_size

    def _create_model(self, train_sample: Tuple[torch.Tensor]) -> torch.nn.Module:
        # samples are made of (past_target, past_covariates, future_target)
        input_dim = train_sample[0].shape[1] + (train_sample[1].shape[1] if train_sample[1] is not None else 0)
        output_dim = train_sample[-1].shape[1]
        return _TCNModule(input_size=input_dim, input_chunk_length=self.input_chunk_length,
                          target_size=output_dim, target_length=self.output_chunk_length,
                          kernel_size=self.kernel_size)


class PastCovariatesSequentialDataset(Dataset):
    def __init__(self, target, covariates, input_chunk_length, output_chunk_length):
        self.target, self.covariates = target, covariates
        self.icl, self.ocl = input_chunk_length, output_chunk_length

    def __len__(self):
        return len(self.target) - self.icl - self.ocl + 1

    def __getitem__(self, idx):
        past = slice(idx, idx + self.icl)
        future = slice(idx + self.icl, idx + self.icl + self.ocl)
        return self.target[past], self.covariates[past], self.target[future]


if __name__ == '__main__':
    series = np.random.rand(60, 1).astype(np.float32)
    covariates = np.random.rand(60, 2).astype(np.float32)
    train = PastCovariatesSequentialDataset(series[:45], covariates[:45], 12, 6)
    val = PastCovariatesSequentialDataset(series[33:], covariates[33:], 12, 6)

    model = TCNModel(input_chunk_length=12, output_chunk_length=6, n_epochs=2, batch_size=8,
                     nr_epochs_val_period=1)
    model.fit_from_dataset(train, val_dataset=val, verbose=True)
