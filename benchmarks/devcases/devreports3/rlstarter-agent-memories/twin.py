# lcswillems/rl-starter-files pull request 47 (fixes issues 41 and 46: scripts/evaluate.py with
# --memory on CUDA fails in Agent.get_actions at self.acmodel(preprocessed_obss, self.memories),
# "RuntimeError: Expected object of backend CPU but got backend CUDA for argument #2 'mat2'", and
# "Expected object of device type cuda but got device type cpu for argument #1 'self' in call to
# _th_mm"; the fix, b12ea43: the memories and the masks of Agent are made with device=self.device):
# utils/agent.py, model.py (ACModel with memory), utils/format.py's preprocess_images and
# scripts/evaluate.py before b12ea43, minimised: a small image convolution, a random-walk
# environment stands in for ParallelEnv of MiniGrid environments, no argparse, model directory
# (the weights are the fresh model's own state_dict), text GRU or logs synthesis.
import time

import numpy
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions.categorical import Categorical


class DictList(dict):
    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__


def preprocess_images(images, device=None):
    # Bug of Pytorch: very slow if not first converted to numpy array
    images = numpy.array(images)
    return torch.tensor(images, device=device, dtype=torch.float)


def get_obss_preprocessor(obs_space):
    obs_space = {"image": obs_space["image"]}

    def preprocess_obss(obss, device=None):
        return DictList({"image": preprocess_images([obs["image"] for obs in obss], device=device)})

    return obs_space, preprocess_obss


def init_params(m):
    classname = m.__class__.__name__
    if classname.find("Linear") != -1:
        m.weight.data.normal_(0, 1)
        m.weight.data *= 1 / torch.sqrt(m.weight.data.pow(2).sum(1, keepdim=True))
        if m.bias is not None:
            m.bias.data.fill_(0)


class ACModel(nn.Module):
    def __init__(self, obs_space, action_space, use_memory=False, use_text=False):
        super().__init__()
        self.use_text = use_text
        self.use_memory = use_memory

        self.image_conv = nn.Sequential(
            nn.Conv2d(3, 8, (2, 2)),
            nn.ReLU(),
            nn.MaxPool2d((2, 2)),
            nn.Conv2d(8, 8, (2, 2)),
            nn.ReLU()
        )
        n = obs_space["image"][0]
        m = obs_space["image"][1]
        self.image_embedding_size = ((n-1)//2-1)*((m-1)//2-1)*8

        if self.use_memory:
            self.memory_rnn = nn.LSTMCell(self.image_embedding_size, self.semi_memory_size)

        self.embedding_size = self.semi_memory_size
        self.actor = nn.Sequential(nn.Linear(self.embedding_size, 16), nn.Tanh(), nn.Linear(16, action_space))
        self.critic = nn.Sequential(nn.Linear(self.embedding_size, 16), nn.Tanh(), nn.Linear(16, 1))
        self.apply(init_params)

    @property
    def recurrent(self):
        return self.use_memory

    @property
    def memory_size(self):
        return 2*self.semi_memory_size

    @property
    def semi_memory_size(self):
        return self.image_embedding_size

    def forward(self, obs, memory):
        x = obs.image.transpose(1, 3).transpose(2, 3)
        x = self.image_conv(x)
        x = x.reshape(x.shape[0], -1)

        if self.use_memory:
            hidden = (memory[:, :self.semi_memory_size], memory[:, self.semi_memory_size:])
            hidden = self.memory_rnn(x, hidden)
            embedding = hidden[0]
            memory = torch.cat(hidden, dim=1)
        else:
            embedding = x

        x = self.actor(embedding)
        dist = Categorical(logits=F.log_softmax(x, dim=1))
        x = self.critic(embedding)
        value = x.squeeze(1)
        return dist, value, memory


class Agent:
    """An agent.

    It is able:
    - to choose an action given an observation,
    - to analyze the feedback (i.e. reward and done state) of its action."""

    def __init__(self, obs_space, action_space, model_state,
                 device=None, argmax=False, num_envs=1, use_memory=False, use_text=False):
        obs_space, self.preprocess_obss = get_obss_preprocessor(obs_space)
        self.acmodel = ACModel(obs_space, action_space, use_memory=use_memory, use_text=use_text)
        self.device = device
        self.argmax = argmax
        self.num_envs = num_envs

        if self.acmodel.recurrent:
            self.memories = torch.zeros(self.num_envs, self.acmodel.memory_size, device=self.device)

        self.acmodel.load_state_dict(model_state or self.acmodel.state_dict())
        self.acmodel.to(self.device)
        self.acmodel.eval()

    def get_actions(self, obss):
        preprocessed_obss = self.preprocess_obss(obss, device=self.device)

        with torch.no_grad():
            if self.acmodel.recurrent:
                dist, _, self.memories = self.acmodel(preprocessed_obss, self.memories)
            else:
                dist, _ = self.acmodel(preprocessed_obss)

        if self.argmax:
            actions = dist.probs.max(1, keepdim=True)[1]
        else:
            actions = dist.sample()

        return actions.cpu().numpy()

    def get_action(self, obs):
        return self.get_actions([obs])[0]

    def analyze_feedbacks(self, rewards, dones):
        if self.acmodel.recurrent:
            masks = 1 - torch.tensor(dones, dtype=torch.float, device=self.device).unsqueeze(1)
            self.memories *= masks

    def analyze_feedback(self, reward, done):
        return self.analyze_feedbacks([reward], [done])


class RandomWalkEnvs:
    observation_space = {"image": (7, 7, 3)}
    action_space = 3

    def __init__(self, procs, seed):
        self.rng = numpy.random.RandomState(seed)
        self.procs = procs

    def _obs(self):
        return [{"image": self.rng.randint(0, 5, (7, 7, 3))} for _ in range(self.procs)]

    def reset(self):
        return self._obs()

    def step(self, actions):
        rewards = list(self.rng.rand(self.procs))
        dones = list(self.rng.rand(self.procs) < 0.3)
        return self._obs(), rewards, dones, None


# --- scripts/evaluate.py --------------------------------------------------------------------

procs, episodes = 4, 6
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print(f"Device: {device}\n")

env = RandomWalkEnvs(procs, seed=0)
agent = Agent(env.observation_space, env.action_space, None,
              device=device, argmax=False, num_envs=procs, use_memory=True)
print("Agent loaded\n")

logs = {"num_frames_per_episode": [], "return_per_episode": []}
start_time = time.time()
obss = env.reset()

log_done_counter = 0
log_episode_return = torch.zeros(procs, device=device)
log_episode_num_frames = torch.zeros(procs, device=device)

while log_done_counter < episodes:
    actions = agent.get_actions(obss)
    obss, rewards, dones, _ = env.step(actions)
    agent.analyze_feedbacks(rewards, dones)

    log_episode_return += torch.tensor(rewards, device=device, dtype=torch.float)
    log_episode_num_frames += torch.ones(procs, device=device)

    for i, done in enumerate(dones):
        if done:
            log_done_counter += 1
            logs["return_per_episode"].append(log_episode_return[i].item())
            logs["num_frames_per_episode"].append(log_episode_num_frames[i].item())

    mask = 1 - torch.tensor(dones, device=device, dtype=torch.float)
    log_episode_return *= mask
    log_episode_num_frames *= mask

print(logs)
