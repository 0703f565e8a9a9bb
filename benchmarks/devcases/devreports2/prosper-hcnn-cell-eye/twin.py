# prosper_nn issue 13 ("Unregistered Parameter in modules": "If the model is moved to gpu these
# parameters stay at cpu"; fixed in pull request 18, which makes HCNNCell's `self.eye` an
# nn.Parameter and creates HCNN.forward's output buffers on the device):
# prosper_nn/models/hcnn/hcnn_cell.py (PartialTeacherForcing, HCNNCell) and
# models/hcnn/hcnn.py (HCNN) with examples/hcnn_example.py's training loop, minimised: no
# LSTM variant, no pruning, random series instead of generate_time_series_data.
from typing import Optional, Type

import torch
import torch.nn as nn
import torch.optim as optim
from torch import Tensor


class PartialTeacherForcing(nn.Dropout):
    def forward(self, input: Tensor) -> Tensor:
        if not self.training or self.p == 0:
            return input
        else:
            scaled_output = super().forward(input)
            return (1 - self.p) * scaled_output


class HCNNCell(nn.Module):
    def __init__(self, n_state_neurons: int, n_features_Y: int,
                 activation: Type[torch.autograd.Function] = torch.tanh, teacher_forcing: float = 1):
        super(HCNNCell, self).__init__()
        self.n_state_neurons = n_state_neurons
        self.n_features_Y = n_features_Y
        self.activation = activation
        self.teacher_forcing = teacher_forcing
        self.A = nn.Linear(in_features=self.n_state_neurons, out_features=self.n_state_neurons, bias=False)
        self.eye = nn.Parameter(torch.eye(
            self.n_features_Y, self.n_state_neurons), requires_grad=False
        )
        self.ptf_dropout = PartialTeacherForcing(1 - self.teacher_forcing)

    def forward(self, state: torch.Tensor, observation: Optional[torch.Tensor] = None):
        expectation = torch.mm(state, self.eye.T)
        if observation is not None:
            output = expectation - observation
            teacher_forcing = torch.mm(self.ptf_dropout(output), self.eye)
            state = self.activation(state - teacher_forcing)
        else:  # Forecasts
            output = expectation
            state = self.activation(state)
        state = self.A(state)
        return state, output


class HCNN(nn.Module):
    def __init__(self, n_state_neurons: int, n_features_Y: int, past_horizon: int,
                 forecast_horizon: int, teacher_forcing: float = 1):
        super(HCNN, self).__init__()
        self.n_features_Y = n_features_Y
        self.past_horizon = past_horizon
        self.forecast_horizon = forecast_horizon
        self.state = [torch.tensor for _ in range(past_horizon + forecast_horizon + 1)]
        self.init_state = nn.Parameter(torch.randn(1, n_state_neurons), requires_grad=True)
        self.HCNNCell = HCNNCell(n_state_neurons, n_features_Y, torch.tanh, teacher_forcing)

    def forward(self, Y: torch.Tensor):
        device = self.init_state.device
        self.state[0] = self.init_state
        batchsize = Y.shape[1]
        # reset saved cell outputs
        past_error = torch.zeros((self.past_horizon, batchsize, self.n_features_Y), device=device)
        forecast = torch.zeros((self.forecast_horizon, batchsize, self.n_features_Y), device=device)
        for t in range(self.past_horizon):
            if t == 0:
                self.state[t + 1], past_error[t] = self.HCNNCell(self.state[t].repeat(batchsize, 1), Y[t])
            else:
                self.state[t + 1], past_error[t] = self.HCNNCell(self.state[t], Y[t])
        for t in range(self.past_horizon, self.past_horizon + self.forecast_horizon):
            self.state[t + 1], forecast[t - self.past_horizon] = self.HCNNCell(self.state[t])
        return torch.cat([past_error, forecast], dim=0)


if __name__ == "__main__":
    n_features_Y, n_state_neurons, past_horizon, forecast_horizon, batchsize = 3, 6, 5, 2, 4
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    Y_batches = torch.randn(2, past_horizon, batchsize, n_features_Y).to(device)
    hcnn_model = HCNN(n_state_neurons, n_features_Y, past_horizon, forecast_horizon).to(device)
    optimizer = optim.Adam(hcnn_model.parameters(), lr=0.01)
    loss_function = nn.MSELoss()
    targets = torch.zeros((past_horizon, batchsize, n_features_Y), device=device)
    for batch_index in range(0, Y_batches.shape[0]):
        hcnn_model.zero_grad()
        model_out = hcnn_model(Y_batches[batch_index])
        past_error, forecast = torch.split(model_out, past_horizon)
        loss = loss_function(past_error, targets)
        loss.backward()
        optimizer.step()
        print(loss.item())
