# PyPOTS issue 10 ("BRITS imputation test fails on cuda device mismatch": `if
# np.equal(self.best_loss, float("inf"))` in imputation/base.py raises "can't convert cuda:0
# device type tensor to numpy"; fixed in commit 137b35d with `self.best_loss.item()`):
# pypots/base.py's BaseModel.check_input, imputation/base.py's BaseNNImputer._train_model and
# utils/metrics.py's cal_mae, minimised: a one-layer imputer stands in for BRITS, and a simple
# MCAR mask for pypots.data.mcar.
import os

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

def cal_mae(inputs, target, mask=None):
    """ calculate Mean Absolute Error"""
    lib = np if isinstance(inputs, np.ndarray) else torch
    if mask is not None:
        return lib.sum(lib.abs(inputs - target) * mask) / (lib.sum(mask) + 1e-9)
    else:
        return lib.mean(lib.abs(inputs - target))

def mcar(X, rate):
    X_intact = torch.nan_to_num(X)
    indicating_mask = (torch.rand(X.shape, device=X.device) < rate).float()
    missing_mask = 1 - indicating_mask
    return X_intact, X_intact * missing_mask, missing_mask, indicating_mask

class _Imputer(nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.linear = nn.Linear(n_features, n_features)
    def forward(self, inputs):
        X, mask = inputs['X'], inputs['missing_mask']
        estimation = self.linear(X * mask)
        imputed_data = mask * X + (1 - mask) * estimation
        loss = cal_mae(estimation, X, mask)
        return {'loss': loss, 'imputed_data': imputed_data}

class BaseNNImputer:
    def __init__(self, n_steps, n_features, learning_rate=1e-3, epochs=2, patience=5, batch_size=4, device=None):
        self.logger = {'training_loss': [], 'validating_loss': []}
        if device is None:
            self.device = torch.device(
                "cuda:0" if torch.cuda.is_available() and torch.cuda.device_count() > 0 else "cpu"
            )
        else:
            self.device = device
        self.n_steps, self.n_features = n_steps, n_features
        self.lr, self.epochs, self.batch_size = learning_rate, epochs, batch_size
        self.patience = self.original_patience = patience
        self.model = _Imputer(n_features).to(self.device)
    def check_input(self, X):
        return torch.from_numpy(X).to(self.device)
    def assemble_input_data(self, data):
        X, = data
        return {'X': torch.nan_to_num(X), 'missing_mask': (~torch.isnan(X)).float()}
    def fit(self, train_X, val_X):
        train_X = self.check_input(train_X)
        val_X = self.check_input(val_X)
        training_loader = DataLoader(TensorDataset(train_X), batch_size=self.batch_size, shuffle=True)
        val_X_intact, val_X, val_X_missing_mask, val_X_indicating_mask = mcar(val_X, 0.2)
        val_X = val_X.masked_fill(val_X_missing_mask == 0, torch.nan)
        val_loader = DataLoader(TensorDataset(val_X), batch_size=self.batch_size, shuffle=False)
        self._train_model(training_loader, val_loader, val_X_intact, val_X_indicating_mask)
        self.model.load_state_dict(self.best_model_dict)
        return self
    def _train_model(self, training_loader, val_loader=None, val_X_intact=None, val_indicating_mask=None):
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self.lr)
        self.best_loss = float('inf')
        self.best_model_dict = None
        try:
            for epoch in range(self.epochs):
                self.model.train()
                epoch_train_loss_collector = []
                for idx, data in enumerate(training_loader):
                    inputs = self.assemble_input_data(data)
                    self.optimizer.zero_grad()
                    results = self.model.forward(inputs)
                    results['loss'].backward()
                    self.optimizer.step()
                    epoch_train_loss_collector.append(results['loss'].item())
                mean_train_loss = np.mean(epoch_train_loss_collector)
                self.logger['training_loss'].append(mean_train_loss)

                self.model.eval()
                imputation_collector = []
                with torch.no_grad():
                    for idx, data in enumerate(val_loader):
                        inputs = self.assemble_input_data(data)
                        results = self.model.forward(inputs)
                        imputation_collector.append(results['imputed_data'])
                imputation_collector = torch.cat(imputation_collector)
                mean_val_loss = cal_mae(imputation_collector, val_X_intact, val_indicating_mask)
                self.logger['validating_loss'].append(mean_val_loss)
                print(f'epoch {epoch}: training loss {mean_train_loss:.4f}, validating loss {mean_val_loss:.4f}')
                mean_loss = mean_val_loss

                if mean_loss < self.best_loss:
                    self.best_loss = mean_loss
                    self.best_model_dict = self.model.state_dict()
                    self.patience = self.original_patience
                else:
                    self.patience -= 1
                if self.patience == 0:
                    break
        except Exception as e:
            print(f'Exception: {e}')
            if self.best_model_dict is None:
                raise RuntimeError('Training got interrupted. Model was not get trained. Please try fit() again.')

        if np.equal(self.best_loss, float('inf')):
            raise ValueError('Something is wrong. best_loss is Nan after training.')

        print('Finished training.')

if __name__ == '__main__':
    X = np.random.randn(16, 6, 3).astype(np.float32)
    X[np.random.rand(*X.shape) < 0.1] = np.nan
    imputer = BaseNNImputer(n_steps=6, n_features=3)
    imputer.fit(X[:12], X[12:])
