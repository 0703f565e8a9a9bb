# TUD_RL issue 21 ("RuntimeError: Input and parameter tensors are not at the same device, found
# input tensor at cpu and parameter tensor at cuda:0" for LSTMRecDQN on cuda; fixed in commit
# 9e65820 "bug fix cuda LSTMRecDQN", which creates `x_tilde` on the net's device):
# tud_rl/common/nets.py's RecDQN and LSTMRecDQN with agents/_discrete/LSTMRecDQN.py's net
# construction, minimised: the inner recurrences keep their dense layer and LSTM but drop the
# nan handling of absent target ships, and a random batch replaces the replay buffer.
import torch
import torch.nn as nn
import torch.nn.functional as F


class RecDQN(nn.Module):
    def __init__(self, num_actions, num_obs_OS=7, num_obs_TS=6) -> None:
        super(RecDQN, self).__init__()
        self.num_actions = num_actions
        self.num_obs_OS = num_obs_OS
        self.num_obs_TS = num_obs_TS
        self.denseOS_inner0 = nn.Linear(num_obs_OS, 64)
        self.LSTM_inner0    = nn.LSTM(input_size = num_obs_TS, hidden_size = 64, num_layers = 1, batch_first = True)
        self.post_comb_dense1 = nn.Linear(128, 64)
        self.post_comb_dense2 = nn.Linear(64, num_actions)

    def _inner_rec(self, s):
        s_OS = s[:, :self.num_obs_OS]
        s_TS = s[:, self.num_obs_OS:].reshape(s.shape[0], -1, self.num_obs_TS)
        x_OS = F.relu(self.denseOS_inner0(s_OS))
        x_TS, (_, _) = self.LSTM_inner0(s_TS)
        return torch.cat([x_OS, x_TS[:, -1]], dim=1)


class LSTMRecDQN(RecDQN):
    def __init__(self, num_actions, num_obs_OS=7, num_obs_TS=6) -> None:
        super(LSTMRecDQN, self).__init__(num_actions=num_actions, num_obs_OS=num_obs_OS, num_obs_TS=num_obs_TS)
        del self.post_comb_dense1
        del self.post_comb_dense2
        self.denseOS_inner2 = nn.Linear(num_obs_OS, 64)
        self.LSTM_inner2    = nn.LSTM(input_size = num_obs_TS, hidden_size = 64, num_layers = 1, batch_first = True)
        self.denseOS_inner1 = nn.Linear(num_obs_OS, 64)
        self.LSTM_inner1    = nn.LSTM(input_size = num_obs_TS, hidden_size = 64, num_layers = 1, batch_first = True)
        self.LSTM_outer = nn.LSTM(input_size=128, hidden_size=64, num_layers=1, batch_first=True)
        self.PI_dense1 = nn.Linear(64, 64)
        self.PI_dense2 = nn.Linear(64, num_actions)

    def forward(self, s, s_hist, a_hist, hist_len) -> tuple:
        # setup x_tilde which comes into outer LSTM
        batch_size, history_length, _ = s_hist.shape
        x_tilde = torch.zeros((batch_size, history_length + 1, 128))

        # get s_{t-2} and s_{t-1} from s_hist since there might be incomplete histories
        s_t2 = s_hist[:, 0, :]
        s_t2[hist_len < 2, :] = 0.0
        t1_idx = hist_len - 1
        t1_idx[t1_idx < 0] = 0
        s_t1 = s_hist[torch.arange(batch_size), t1_idx, :]
        s_t1[hist_len < 1, :] = 0.0

        x_tilde[:, 0, :] = self._inner_rec(s_t2, time=2)
        x_tilde[:, 1, :] = self._inner_rec(s_t1, time=1)
        x_tilde[:, 2, :] = self._inner_rec(s, time=0)

        # roll entries according to hist_len
        x_tilde_f = torch.zeros_like(x_tilde)
        for b_idx in range(batch_size):
            x_tilde_f[b_idx, :, :] = torch.roll(x_tilde[b_idx, :, :], shifts=hist_len[b_idx].item()-2, dims=0)

        # push through outer LSTM
        extracted_mem, (_, _) = self.LSTM_outer(x_tilde_f)
        hidden_mem = extracted_mem[torch.arange(batch_size), hist_len]
        x = F.relu(self.PI_dense1(hidden_mem))
        return self.PI_dense2(x)

    def _inner_rec(self, s, time):
        assert time in [0, 1, 2], "Unknown time step."
        if time == 0:
            return super()._inner_rec(s)
        s_OS = s[:, :self.num_obs_OS]
        s_TS = s[:, self.num_obs_OS:].reshape(s.shape[0], -1, self.num_obs_TS)
        if time == 1:
            x_OS = F.relu(self.denseOS_inner1(s_OS))
            x_TS, (_, _) = self.LSTM_inner1(s_TS)
        elif time == 2:
            x_OS = F.relu(self.denseOS_inner2(s_OS))
            x_TS, (_, _) = self.LSTM_inner2(s_TS)
        return torch.cat([x_OS, x_TS[:, -1]], dim=1)


class LSTMRecDQNAgent:
    def __init__(self, num_actions, device):
        self.num_actions = num_actions
        self.device = device
        self.DQN = LSTMRecDQN(num_actions = self.num_actions).to(self.device)

    def select_action(self, s, s_hist, a_hist, hist_len):
        with torch.no_grad():
            q = self.DQN(s.to(self.device), s_hist.to(self.device), a_hist, hist_len.to(self.device))
        return torch.argmax(q, dim=1)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    agent = LSTMRecDQNAgent(num_actions=3, device=device)
    s = torch.randn(4, 7 + 2 * 6)
    s_hist = torch.randn(4, 2, 7 + 2 * 6)
    hist_len = torch.tensor([2, 1, 0, 2])
    print(agent.select_action(s, s_hist, None, hist_len))
