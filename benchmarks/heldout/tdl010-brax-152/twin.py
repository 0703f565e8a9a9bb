import torch
import torch.nn as nn


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.policy = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 2))

    def loss(self, td):
        logits = self.policy(td["observation"])
        return ((logits - td["action"]) ** 2).mean()


def train(num_update_epochs=2, num_minibatches=4):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    agent = Agent().to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=3e-4)
    td = {"observation": torch.randn(32, 8, device=device), "action": torch.randn(32, 2, device=device)}
    total_loss = 0
    for _ in range(num_update_epochs):
        for idx in torch.randperm(32, device=device).chunk(num_minibatches):
            minibatch = {k: v[idx] for k, v in td.items()}
            loss = agent.loss(minibatch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total_loss += float(loss)
    total_loss = total_loss / (num_update_epochs * num_minibatches)
    print("loss", total_loss)


train()
