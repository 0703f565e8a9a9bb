from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn


def to_torch(input):
    return torch.from_numpy(input) if type(input) == np.ndarray else input


def init(module, weight_init, bias_init, gain=1):
    weight_init(module.weight.data, gain=gain)
    bias_init(module.bias.data)
    return module


class MLPBase(nn.Module):
    def __init__(self, args, inputs_dim):
        super(MLPBase, self).__init__()
        self.hidden_size = args.hidden_size
        self.feature_norm = nn.LayerNorm(inputs_dim)
        self.fc1 = nn.Sequential(nn.Linear(inputs_dim, self.hidden_size), nn.ReLU())

    def forward(self, x):
        x = self.feature_norm(x)
        x = self.fc1(x)
        return x


class MADDPG_Critic(nn.Module):
    """
    Critic network class for MADDPG/MATD3. Outputs actions given observations.
    :param args: (argparse.Namespace) arguments containing relevant model information.
    :param central_obs_dim: (int) dimension of the centralized observation vector.
    :param central_act_dim: (int) dimension of the centralized action vector.
    :param device: (torch.device) specifies the device to run on (cpu/gpu).
    :param num_q_outs: (int) number of q values to output (1 for MADDPG, 2 for MATD3).
    """
    def __init__(self, args, central_obs_dim, central_act_dim, device, num_q_outs=1):
        super(MADDPG_Critic, self).__init__()
        self._use_orthogonal = args.use_orthogonal
        self.hidden_size = args.hidden_size
        self.device = device
        self.tpdv = dict(dtype=torch.float32, device=device)

        input_dim = central_obs_dim + central_act_dim

        self.mlp = MLPBase(args, input_dim)

        init_method = [nn.init.xavier_uniform_, nn.init.orthogonal_][self._use_orthogonal]
        def init_(m):
            return init(m, init_method, lambda x: nn.init.constant_(x, 0))
        self.q_outs = nn.ModuleList([init_(nn.Linear(self.hidden_size, 1)) for _ in range(num_q_outs)])
        
        self.to(device)

    def forward(self, central_obs, central_act):
        """
        Compute Q-values using the needed information.
        :param central_obs: (np.ndarray) Centralized observations with which to compute Q-values.
        :param central_act: (np.ndarray) Centralized actions with which to compute Q-values.

        :return q_values: (list) Q-values outputted by each Q-network.
        """
        central_obs = to_torch(central_obs).to(**self.tpdv)
        central_act = to_torch(central_act).to(**self.tpdv)

        x = torch.cat([central_obs, central_act], dim=1)

        x = self.mlp(x)
        q_values = [q_out(x) for q_out in self.q_outs]

        return q_values


class MATD3_Critic(MADDPG_Critic):
    def __init__(self, args, central_obs_dim, central_act_dim, device):
        super(MATD3_Critic, self).__init__(args, central_obs_dim, central_act_dim, device, num_q_outs=2)


if __name__ == "__main__":
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    args = SimpleNamespace(use_orthogonal=True, hidden_size=16)
    critic = MATD3_Critic(args, central_obs_dim=6, central_act_dim=2, device=device)
    obs = np.random.randn(4, 6).astype(np.float32)
    act = np.random.randn(4, 2).astype(np.float32)
    print([q.shape for q in critic(obs, act)])
