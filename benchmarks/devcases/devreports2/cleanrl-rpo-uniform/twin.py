# cleanrl pull request 396 ("Update rpo_continuous_action.py": "Fix RuntimeError: Expected all
# tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"):
# cleanrl/rpo_continuous_action.py's layer_init and Agent with its rollout and PPO update,
# minimised: random observations stand in for the gym vector env (its spaces kept as shapes),
# one update of one minibatch, no tensorboard.
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.distributions.normal import Normal


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self, envs, rpo_alpha):
        super().__init__()
        self.rpo_alpha = rpo_alpha
        self.critic = nn.Sequential(
            layer_init(nn.Linear(np.array(envs.single_observation_space.shape).prod(), 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 1), std=1.0),
        )
        self.actor_mean = nn.Sequential(
            layer_init(nn.Linear(np.array(envs.single_observation_space.shape).prod(), 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, np.prod(envs.single_action_space.shape)), std=0.01),
        )
        self.actor_logstd = nn.Parameter(torch.zeros(1, np.prod(envs.single_action_space.shape)))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        action_mean = self.actor_mean(x)
        action_logstd = self.actor_logstd.expand_as(action_mean)
        action_std = torch.exp(action_logstd)
        probs = Normal(action_mean, action_std)
        if action is None:
            action = probs.sample()
        else:  # new to RPO
            # sample again to add stochasticity to the policy
            z = torch.FloatTensor(action_mean.shape).uniform_(-self.rpo_alpha, self.rpo_alpha).to(device)
            action_mean = action_mean + z
            probs = Normal(action_mean, action_std)

        return action, probs.log_prob(action).sum(1), probs.entropy().sum(1), self.critic(x)


if __name__ == "__main__":
    args = SimpleNamespace(num_envs=2, num_steps=4, rpo_alpha=0.5, learning_rate=3e-4, cuda=True)
    device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")
    envs = SimpleNamespace(single_observation_space=SimpleNamespace(shape=(3,)),
                           single_action_space=SimpleNamespace(shape=(1,)))
    agent = Agent(envs, args.rpo_alpha).to(device)
    optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    obs = torch.zeros((args.num_steps, args.num_envs) + envs.single_observation_space.shape).to(device)
    actions = torch.zeros((args.num_steps, args.num_envs) + envs.single_action_space.shape).to(device)
    logprobs = torch.zeros((args.num_steps, args.num_envs)).to(device)
    next_obs = torch.Tensor(np.random.randn(args.num_envs, 3)).to(device)
    for step in range(0, args.num_steps):
        obs[step] = next_obs
        with torch.no_grad():
            action, logprob, _, value = agent.get_action_and_value(next_obs)
        actions[step] = action
        logprobs[step] = logprob
        next_obs = torch.Tensor(np.random.randn(args.num_envs, 3)).to(device)

    b_obs = obs.reshape((-1,) + envs.single_observation_space.shape)
    b_actions = actions.reshape((-1,) + envs.single_action_space.shape)
    b_logprobs = logprobs.reshape(-1)
    _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs, b_actions)
    ratio = (newlogprob - b_logprobs).exp()
    loss = -ratio.mean() - 0.01 * entropy.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(loss.item())
