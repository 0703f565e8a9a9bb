# jcwleo/random-network-distillation-pytorch pull request 14 ("TypeError: can't convert CUDA tensor
# to numpy. Use Tensor.cpu() to copy the tensor to host memory first. GPU only problem." at
# train.py's total_logging_policy = np.vstack(total_policy); the fix, 82573ee: also collect
# policy.cpu().numpy() in total_policy_np and vstack that): train.py's main, agents.py's
# RNDAgent, model.py and utils.py before 82573ee, minimised: small convolutional actor-critic
# and RND networks on 4x16x16 frames, a random environment stepped in-process instead of the
# Pipe-connected Atari workers, no tensorboard writer, config file, observation-normalisation
# warm-up loop or PPO epochs (train_model only computes the old policy's log-probabilities).
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions.categorical import Categorical


def softmax(z):
    assert len(z.shape) == 2
    s = np.max(z, axis=1)
    s = s[:, np.newaxis]  # necessary step to do broadcasting
    e_x = np.exp(z - s)
    div = np.sum(e_x, axis=1)
    div = div[:, np.newaxis]  # dito
    return e_x / div


class RunningMeanStd(object):
    def __init__(self, epsilon=1e-4, shape=()):
        self.mean = np.zeros(shape, 'float64')
        self.var = np.ones(shape, 'float64')
        self.count = epsilon

    def update(self, x):
        batch_mean = np.mean(x, axis=0)
        batch_var = np.var(x, axis=0)
        batch_count = x.shape[0]
        delta = batch_mean - self.mean
        tot_count = self.count + batch_count
        self.mean = self.mean + delta * batch_count / tot_count
        M2 = self.var * self.count + batch_var * batch_count + np.square(delta) * self.count * batch_count / tot_count
        self.var = M2 / tot_count
        self.count = tot_count


class CnnActorCriticNetwork(nn.Module):
    def __init__(self, input_size, output_size):
        super(CnnActorCriticNetwork, self).__init__()
        self.feature = nn.Sequential(nn.Conv2d(4, 8, 4, 2), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 7 * 7, 32), nn.ReLU())
        self.actor = nn.Linear(32, output_size)
        self.critic_ext = nn.Linear(32, 1)
        self.critic_int = nn.Linear(32, 1)

    def forward(self, state):
        x = self.feature(state)
        policy = self.actor(x)
        value_ext = self.critic_ext(x)
        value_int = self.critic_int(x)
        return policy, value_ext, value_int


class RNDModel(nn.Module):
    def __init__(self, input_size, output_size):
        super(RNDModel, self).__init__()
        self.predictor = nn.Sequential(nn.Conv2d(1, 4, 4, 2), nn.LeakyReLU(), nn.Flatten(), nn.Linear(4 * 7 * 7, 16))
        self.target = nn.Sequential(nn.Conv2d(1, 4, 4, 2), nn.LeakyReLU(), nn.Flatten(), nn.Linear(4 * 7 * 7, 16))
        for param in self.target.parameters():
            param.requires_grad = False

    def forward(self, next_obs):
        return self.predictor(next_obs), self.target(next_obs)


class RNDAgent(object):
    def __init__(self, input_size, output_size, num_env, num_step, gamma, learning_rate=1e-4,
                 use_cuda=False):
        self.model = CnnActorCriticNetwork(input_size, output_size)
        self.num_env = num_env
        self.output_size = output_size
        self.num_step = num_step
        self.gamma = gamma
        self.device = torch.device('cuda' if use_cuda else 'cpu')

        self.rnd = RNDModel(input_size, output_size)
        self.optimizer = torch.optim.Adam(list(self.model.parameters()) + list(self.rnd.predictor.parameters()),
                                          lr=learning_rate)
        self.rnd = self.rnd.to(self.device)

        self.model = self.model.to(self.device)

    def get_action(self, state):
        state = torch.Tensor(state).to(self.device)
        state = state.float()
        policy, value_ext, value_int = self.model(state)
        action_prob = F.softmax(policy, dim=-1).data.cpu().numpy()

        action = self.random_choice_prob_index(action_prob)

        return action, value_ext.data.cpu().numpy().squeeze(), value_int.data.cpu().numpy().squeeze(), policy.detach()

    @staticmethod
    def random_choice_prob_index(p, axis=1):
        r = np.expand_dims(np.random.rand(p.shape[1 - axis]), axis=axis)
        return (p.cumsum(axis=axis) > r).argmax(axis=axis)

    def compute_intrinsic_reward(self, next_obs):
        next_obs = torch.FloatTensor(next_obs).to(self.device)

        target_next_feature = self.rnd.target(next_obs)
        predict_next_feature = self.rnd.predictor(next_obs)
        intrinsic_reward = (target_next_feature - predict_next_feature).pow(2).sum(1) / 2

        return intrinsic_reward.data.cpu().numpy()

    def train_model(self, s_batch, y_batch, old_policy):
        y_batch = torch.LongTensor(y_batch).to(self.device)
        with torch.no_grad():
            policy_old_list = torch.stack(old_policy).permute(1, 0, 2).contiguous().view(-1, self.output_size).to(
                self.device)

            m_old = Categorical(F.softmax(policy_old_list, dim=-1))
            log_prob_old = m_old.log_prob(y_batch)
        return log_prob_old.mean().item()


class RandomEnv(object):
    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)

    def step(self, action):
        s = self.rng.randint(0, 255, (4, 16, 16))
        r, d = float(self.rng.rand() < 0.1), bool(self.rng.rand() < 0.05)
        return s, r, d, d, r


def main():
    use_cuda = True
    num_worker, num_step, output_size = 2, 4, 3
    gamma = 0.999

    obs_rms = RunningMeanStd(shape=(1, 1, 16, 16))
    agent = RNDAgent((4, 16, 16), output_size, num_worker, num_step, gamma, use_cuda=use_cuda)
    works = [RandomEnv(idx) for idx in range(num_worker)]

    states = np.zeros([num_worker, 4, 16, 16])
    global_update = 0

    for _ in range(2):
        total_state, total_reward, total_done, total_action, total_int_reward, total_next_obs, total_ext_values, total_int_values, total_policy, total_policy_np = \
            [], [], [], [], [], [], [], [], [], []
        global_update += 1

        # Step 1. n-step rollout
        for _ in range(num_step):
            actions, value_ext, value_int, policy = agent.get_action(np.float32(states) / 255.)

            next_states, rewards, dones, real_dones, log_rewards, next_obs = [], [], [], [], [], []
            for work, action in zip(works, actions):
                s, r, d, rd, lr = work.step(action)
                next_states.append(s)
                rewards.append(r)
                dones.append(d)
                real_dones.append(rd)
                log_rewards.append(lr)
                next_obs.append(s[3, :, :].reshape([1, 16, 16]))

            next_states = np.stack(next_states)
            rewards = np.hstack(rewards)
            dones = np.hstack(dones)
            next_obs = np.stack(next_obs)

            # total reward = int reward + ext Reward
            intrinsic_reward = agent.compute_intrinsic_reward(
                ((next_obs - obs_rms.mean) / np.sqrt(obs_rms.var)).clip(-5, 5))
            intrinsic_reward = np.hstack(intrinsic_reward)

            total_next_obs.append(next_obs)
            total_int_reward.append(intrinsic_reward)
            total_state.append(states)
            total_reward.append(rewards)
            total_done.append(dones)
            total_action.append(actions)
            total_ext_values.append(value_ext)
            total_int_values.append(value_int)
            total_policy.append(policy)
            total_policy_np.append(policy.cpu().numpy())

            states = next_states[:, :, :, :]

        # calculate last next value
        _, value_ext, value_int, _ = agent.get_action(np.float32(states) / 255.)
        total_ext_values.append(value_ext)
        total_int_values.append(value_int)

        total_state = np.stack(total_state).transpose([1, 0, 2, 3, 4]).reshape([-1, 4, 16, 16])
        total_reward = np.stack(total_reward).transpose().clip(-1, 1)
        total_action = np.stack(total_action).transpose().reshape([-1])
        total_done = np.stack(total_done).transpose()
        total_next_obs = np.stack(total_next_obs).transpose([1, 0, 2, 3, 4]).reshape([-1, 1, 16, 16])
        total_ext_values = np.stack(total_ext_values).transpose()
        total_int_values = np.stack(total_int_values).transpose()
        total_logging_policy = np.vstack(total_policy_np)

        # logging Max action probability
        print('data/max_prob', softmax(total_logging_policy).max(1).mean(), global_update)

        # Step 4. update obs normalize param
        obs_rms.update(total_next_obs)

        # Step 5. Training!
        print('log_prob_old', agent.train_model(np.float32(total_state) / 255., total_action, total_policy))


if __name__ == '__main__':
    main()
