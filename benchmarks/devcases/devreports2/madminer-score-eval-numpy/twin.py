# madminer pull request 210 ("Copying back tensors to CPU for model evaluation when running on
# GPUs to prevent crash": "TypeError: can't convert CUDA tensor to numpy. Use Tensor.cpu() to
# copy the tensor to host memory first"): madminer/utils/ml/models/score.py's
# LocalScoreEstimator and utils/ml/score_trainer.py's evaluate_local_score_model, minimised:
# tanh stands in for get_activation_function and the caller evaluates random observables.
import logging

import numpy as np
import torch
import torch.nn as nn
from torch import tensor
from torch.autograd import grad

logger = logging.getLogger(__name__)


class LocalScoreEstimator(nn.Module):
    def __init__(self, n_observables, n_parameters, n_hidden, activation="tanh"):
        super(LocalScoreEstimator, self).__init__()
        self.n_hidden = n_hidden
        self.activation = torch.tanh
        self.layers = nn.ModuleList()
        n_last = n_observables
        for n_hidden_units in n_hidden:
            self.layers.append(nn.Linear(n_last, n_hidden_units))
            n_last = n_hidden_units
        self.layers.append(nn.Linear(n_last, n_parameters))

    def forward(self, x, return_grad_x=False):
        if return_grad_x and not x.requires_grad:
            x.requires_grad = True
        t_hat = x
        for i, layer in enumerate(self.layers):
            if i > 0:
                t_hat = self.activation(t_hat)
            t_hat = layer(t_hat)
        if return_grad_x:
            x_gradient = grad(t_hat, x, grad_outputs=torch.ones_like(t_hat.data), only_inputs=True, create_graph=True)[
                0
            ]
            return t_hat, x_gradient
        return t_hat

    def to(self, *args, **kwargs):
        self = super(LocalScoreEstimator, self).to(*args, **kwargs)
        for i, layer in enumerate(self.layers):
            self.layers[i] = layer.to(*args, **kwargs)
        return self


def evaluate_local_score_model(model, xs=None, run_on_gpu=True, double_precision=False, return_grad_x=False):
    # CPU or GPU?
    run_on_gpu = run_on_gpu and torch.cuda.is_available()
    device = torch.device("cuda" if run_on_gpu else "cpu")
    dtype = torch.double if double_precision else torch.float

    # Prepare data
    xs = torch.stack([tensor(i) for i in xs])

    model = model.to(device, dtype)
    xs = xs.to(device, dtype)

    # Evaluate networks
    if return_grad_x:
        model.eval()
        t_hat, x_gradients = model(xs, return_grad_x=True)
    else:
        with torch.no_grad():
            model.eval()
            t_hat = model(xs)
        x_gradients = None

    # Copy back tensors to CPU
    if run_on_gpu:
      t_hat = t_hat.cpu()
      x_gradients = x_gradients.cpu()

    # Get data and return
    t_hat = t_hat.detach().numpy()

    if return_grad_x:
        x_gradients = x_gradients.detach().numpy()
        return t_hat, x_gradients

    return t_hat


if __name__ == "__main__":
    model = LocalScoreEstimator(n_observables=4, n_parameters=2, n_hidden=(8, 8))
    xs = np.random.randn(5, 4)
    t_hat, x_gradients = evaluate_local_score_model(model, xs, return_grad_x=True)
    logger.info("score shape %s", t_hat.shape)
    print(t_hat.shape, x_gradients.shape)
