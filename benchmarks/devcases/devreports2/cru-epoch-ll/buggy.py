# Continuous-Recurrent-Units pull request 4 ("Avoid high memory usage from past computations":
# "Computation graph of losses are held in memory because of not using `.item()`"):
# lib/CRU.py's CRU.interpolation / train_epoch / train with lib/losses.py, minimised: a linear
# encoder-decoder stands in for the CRU layer, random series for the datasets, one epoch, no
# tensorboard, and train() prints the epoch's metrics instead of logging them.
import argparse

import torch
import numpy as np

optim = torch.optim
nn = torch.nn


def mse(target, predicted, mask=None):
    """Mean Squared Error"""
    if mask is None:
        mask = torch.ones_like(predicted)
    return torch.sum(mask * torch.square(target - predicted))/torch.sum(mask)


def rmse(target, predicted, mask=None):
    """Root Mean Squared Error"""
    return torch.sqrt(mse(target, predicted, mask))


def GaussianNegLogLik(targets, pred_mean, pred_variance, mask=None):
    epsilon = 1e-6 * torch.ones_like(pred_mean)
    pred_variance = torch.maximum(pred_variance, epsilon)
    if mask == None:
        mask = torch.ones_like(pred_mean)
    sample_dim_time = torch.sum(mask, dim=-1).clamp(min=1)
    const = np.log(2 * np.pi)
    ll = mask * (torch.log(pred_variance) + ((targets - pred_mean)**2) / pred_variance + const)
    return 0.5 * torch.mean(torch.sum(ll, dim=-1) / sample_dim_time)


class CRU(nn.Module):

    def __init__(self, target_dim: int, lsd: int, args, use_cuda_if_available: bool = True):
        super().__init__()
        self._device = torch.device(
            "cuda" if torch.cuda.is_available() and use_cuda_if_available else "cpu")
        self.args = args
        self._enc = nn.Linear(target_dim, lsd).to(self._device)
        self._dec_mean = nn.Linear(lsd, target_dim).to(self._device)
        self._dec_var = nn.Linear(lsd, target_dim).to(self._device)

    def forward(self, obs_batch, time_points=None, obs_valid=None):
        post_mean = torch.tanh(self._enc(obs_batch))
        out_mean = self._dec_mean(post_mean)
        out_var = nn.functional.softplus(self._dec_var(post_mean))
        return out_mean, out_var, {'post_mean': post_mean}

    def interpolation(self, data, track_gradient=True):
        obs, truth, obs_valid, obs_times, mask_truth, mask_obs = [
            j.to(self._device) for j in data]
        obs_times = self.args.ts * obs_times
        with torch.set_grad_enabled(track_gradient):
            output_mean, output_var, intermediates = self.forward(
                obs_batch=obs, time_points=obs_times, obs_valid=obs_valid)
            loss = GaussianNegLogLik(
                output_mean, truth, output_var, mask=mask_truth)
            mask_imput = (~obs_valid[..., None]) * mask_truth
            imput_loss = GaussianNegLogLik(output_mean, truth, output_var, mask=mask_imput)
            imput_mse = mse(truth, output_mean, mask=mask_imput)
        return loss, output_mean, output_var, obs, truth, mask_obs, mask_truth, intermediates, imput_loss, imput_mse

    def train_epoch(self, dl, optimizer):
        epoch_ll = 0
        epoch_rmse = 0
        epoch_mse = 0
        epoch_imput_ll = 0
        epoch_imput_mse = 0

        for i, data in enumerate(dl):
            loss, output_mean, output_var, obs, truth, mask_obs, mask_truth, intermediates, imput_loss, imput_mse = self.interpolation(
                data)

            # backpropagation
            optimizer.zero_grad()
            loss.backward()
            if self.args.grad_clip:
                nn.utils.clip_grad_norm_(self.parameters(), 1)
            optimizer.step()

            # aggregate metrics and intermediates over entire epoch
            epoch_ll += loss
            epoch_rmse += rmse(truth, output_mean, mask_truth).item()
            epoch_mse += mse(truth, output_mean, mask_truth).item()

            epoch_imput_ll += imput_loss
            epoch_imput_mse += imput_mse
            imput_metrics = [epoch_imput_ll/(i+1), epoch_imput_mse/(i+1)]

        return epoch_ll/(i+1), epoch_rmse/(i+1), epoch_mse/(i+1), [output_mean, output_var], intermediates, [obs, truth, mask_obs], imput_metrics

    def train(self, train_dl, epoch_start=0):
        optimizer = optim.Adam(self.parameters(), self.args.lr)
        for epoch in range(epoch_start, self.args.epochs):
            train_ll, train_rmse, train_mse, train_output, intermediates, train_input, train_imput_metrics = self.train_epoch(
                train_dl, optimizer)
            print('train_nll:', train_ll, 'train_mse:', train_mse)
            print('train_nll_imput:', train_imput_metrics[0], 'train_mse_imput:', train_imput_metrics[1])


if __name__ == '__main__':
    args = argparse.Namespace(ts=0.3, lr=1e-3, epochs=1, grad_clip=True)
    n = 12
    obs = torch.randn(n, 5, 3)
    truth = torch.randn(n, 5, 3)
    obs_valid = torch.rand(n, 5) > 0.5
    obs_times = torch.arange(5.).repeat(n, 1)
    mask_truth = torch.ones(n, 5, 3)
    mask_obs = torch.ones(n, 5, 3)
    train_dl = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(obs, truth, obs_valid, obs_times, mask_truth, mask_obs),
        batch_size=4, shuffle=True)
    model = CRU(target_dim=3, lsd=6, args=args)
    model.train(train_dl)
