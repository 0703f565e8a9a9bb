import numpy as np
import torch
import torch.nn as nn


class UniformSampler:
    def __init__(self, num_timesteps):
        self.num_timesteps = num_timesteps

    def weights(self):
        return np.ones([self.num_timesteps])

    def sample(self, batch_size):
        w = self.weights()
        p = w / np.sum(w)
        indices_np = np.random.choice(len(p), size=(batch_size,), p=p)
        indices = torch.from_numpy(indices_np).long()
        weights_np = 1 / (len(p) * p[indices_np])
        weights = torch.from_numpy(weights_np).float()
        return indices, weights


class Trainer:
    def __init__(self, model, device):
        self.model = model.to(device)
        self.schedule_sampler = UniformSampler(1000)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4)

    def run_step(self, batch):
        t, weights = self.schedule_sampler.sample(batch.shape[0])
        t = t.to(batch.device)
        weights = weights.to(batch.device)
        noise = torch.randn_like(batch)
        pred = self.model(batch + noise)
        losses = ((pred - noise) ** 2).mean(dim=1)
        loss = (losses * weights).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
trainer = Trainer(nn.Linear(8, 8), device)
for _ in range(2):
    trainer.run_step(torch.randn(4, 8, device=device))
