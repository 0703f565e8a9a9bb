# NJODE issue 14 ("Expected all tensors to be on same device", in ODEFunc.forward's torch.cat):
# NJODE/models.py (ODEFunc, FFNN, NJODE.ode_step/forward, compute_loss) with train.py's device
# choice and training step, minimised (no masking, no residual encoder, no path output; a
# synthetic batch of irregular observations replaces the stock-model dataset).
import numpy as np
import torch


def init_weights(m, bias=0.0):
    if type(m) == torch.nn.Linear:
        torch.nn.init.xavier_uniform_(m.weight)
        if m.bias is not None:
            m.bias.data.fill_(bias)


def compute_loss(X_obs, Y_obs, Y_obs_bj, n_obs_ot, batch_size, eps=1e-10,
                 weight=0.5, M_obs=None):
    inner = (2*weight * torch.sqrt(torch.sum((X_obs - Y_obs) ** 2, dim=1)+eps) +
             2*(1-weight) * torch.sqrt(torch.sum((Y_obs_bj - Y_obs) ** 2, dim=1)
                                       + eps)) ** 2
    outer = torch.sum(inner / n_obs_ot)
    return outer / batch_size


def get_ffnn(input_size, output_size, nn_desc, dropout_rate, bias):
    layers = [torch.nn.Linear(input_size, nn_desc[0][0], bias=bias), torch.nn.Tanh(),
              torch.nn.Dropout(p=dropout_rate),
              torch.nn.Linear(nn_desc[-1][0], output_size, bias=bias)]
    return torch.nn.Sequential(*layers)


class ODEFunc(torch.nn.Module):
    """
    implementing continuous update between observatios, f_{\theta} in paper
    """
    def __init__(self, input_size, hidden_size, ode_nn, dropout_rate=0.0,
                 bias=True, input_current_t=False):
        super().__init__()
        self.input_current_t = input_current_t

        # create feed-forward NN, f(H,X,tau,t-tau)
        add = 2
        if input_current_t:
            add = 3
        self.f = get_ffnn(
            input_size=input_size+hidden_size+add, output_size=hidden_size,
            nn_desc=ode_nn, dropout_rate=dropout_rate, bias=bias
        )

    def forward(self, x, h, tau, tdiff):
        # dimension should be (batch, input_size) for x, (batch, hidden) for h,
        #    (batch, 1) for times
        if self.input_current_t:
            input_f = torch.cat(
                [torch.tanh(x), torch.tanh(h), tau, tdiff, tau+tdiff], dim=1
            )
        else:
            input_f = torch.cat([torch.tanh(x), torch.tanh(h), tau, tdiff],
                                dim=1)
        df = self.f(input_f)
        return df


class FFNN(torch.nn.Module):
    def __init__(self, input_size, output_size, nn_desc, dropout_rate=0.0,
                 bias=True):
        super().__init__()
        self.ffnn = get_ffnn(
            input_size=input_size, output_size=output_size,
            nn_desc=nn_desc, dropout_rate=dropout_rate, bias=bias
        )

    def forward(self, nn_input):
        return self.ffnn(torch.tanh(nn_input))


class NJODE(torch.nn.Module):
    """
    NJ-ODE model
    """
    def __init__(self, input_size, hidden_size, output_size, ode_nn, readout_nn, enc_nn,
                 bias=True, dropout_rate=0, solver="euler", weight=0.5):
        super().__init__()
        self.epoch = 1
        self.weight = weight
        self.ode_f = ODEFunc(input_size, hidden_size, ode_nn, dropout_rate, bias)
        self.encoder_map = FFNN(input_size, hidden_size, enc_nn, dropout_rate, bias)
        self.readout_map = FFNN(hidden_size, output_size, readout_nn, dropout_rate, bias)
        self.solver = solver
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.apply(init_weights)

    def ode_step(self, h, delta_t, current_time, last_X, tau):
        """Executes a single ODE step"""
        if self.solver == "euler":
            h = h + delta_t * self.ode_f(last_X, h, tau, current_time - tau)
        else:
            raise ValueError("Unknown solver '{}'.".format(self.solver))

        current_time += delta_t
        return h, current_time

    def forward(self, times, time_ptr, X, obs_idx, delta_t, T, start_X,
                n_obs_ot, get_loss=True):
        h = self.encoder_map(start_X)

        last_X = start_X
        batch_size = start_X.size()[0]
        tau = torch.tensor([[0.0]]).repeat(batch_size, 1)
        current_time = 0.0

        loss = 0

        for i, obs_time in enumerate(times):
            # Propagation of the ODE until next observation
            while current_time < (obs_time - 1e-10 * delta_t):
                if current_time < obs_time - delta_t:
                    delta_t_ = delta_t
                else:
                    delta_t_ = obs_time - current_time
                if self.solver == 'euler':
                    h, current_time = self.ode_step(h, delta_t_, current_time,
                                                    last_X=last_X, tau=tau)

            # Reached an observation - only update those elements of the batch,
            #    for which an observation is made
            start = time_ptr[i]
            end = time_ptr[i + 1]
            X_obs = X[start:end]
            i_obs = obs_idx[start:end]

            Y_bj = self.readout_map(h)
            temp = h.clone()
            temp[i_obs] = self.encoder_map(X_obs)
            h = temp
            Y = self.readout_map(h)

            if get_loss:
                loss = loss + compute_loss(
                    X_obs=X_obs, Y_obs=Y[i_obs], Y_obs_bj=Y_bj[i_obs],
                    n_obs_ot=n_obs_ot[i_obs], batch_size=batch_size,
                    weight=self.weight)

            # make update of last_X and tau, that is not inplace
            #    (otherwise problems in autograd)
            temp_X = last_X.clone()
            temp_tau = tau.clone()
            temp_X[i_obs] = X_obs
            temp_tau[i_obs] = obs_time.astype(np.float64)
            last_X = temp_X
            tau = temp_tau

        return h, loss


if __name__ == '__main__':
    # get the device for torch
    if torch.cuda.is_available():
        gpu_num = 0
        device = torch.device("cuda:{}".format(gpu_num))
    else:
        device = torch.device("cpu")

    model = NJODE(input_size=1, hidden_size=8, output_size=1, ode_nn=((16, 'tanh'),),
                  readout_nn=((16, 'tanh'),), enc_nn=((16, 'tanh'),))
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)

    b = {"times": np.array([0.1, 0.25, 0.4]), "time_ptr": [0, 2, 3, 5],
         "X": torch.randn(5, 1), "start_X": torch.zeros(3, 1),
         "obs_idx": torch.tensor([0, 2, 1, 0, 1])}
    model.train()
    optimizer.zero_grad()
    times = b["times"]
    time_ptr = b["time_ptr"]
    X = b["X"].to(device)
    start_X = b["start_X"].to(device)
    obs_idx = b["obs_idx"]
    b_size = start_X.size()[0]
    unique_idx, counts = np.unique(obs_idx.detach().numpy(), return_counts=True)
    n_obs_ot = np.zeros((b_size))
    n_obs_ot[unique_idx] = counts
    n_obs_ot = torch.tensor(n_obs_ot.astype(int)).to(device)
    hT, loss = model(times, time_ptr, X, obs_idx, 0.05, 0.5, start_X, n_obs_ot, get_loss=True)
    loss.backward()
    optimizer.step()
    print(loss.item())
