import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class LabelModel(nn.Module):
    def __init__(self, num_classes, num_lfs):
        super().__init__()
        self.accuracy = nn.Parameter(torch.ones(num_lfs, num_classes))

    def get_neg_log_likelihood(self, votes):
        return -torch.logsumexp(votes @ self.accuracy, dim=1).mean()

    def _do_estimate_label_model(self, batches, config):
        optimizer = torch.optim.SGD(self.parameters(), lr=config["step_size"])
        for epoch in range(config["epochs"]):
            running_loss = 0.0
            for i_batch, inputs in enumerate(batches):
                optimizer.zero_grad()
                log_likelihood = self.get_neg_log_likelihood(*inputs)
                loss = log_likelihood
                loss.backward()
                optimizer.step()
                running_loss += loss.item()
            epoch_loss = running_loss / len(batches)
            print('Epoch', epoch, 'loss', epoch_loss)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = LabelModel(num_classes=2, num_lfs=3).to(device)
votes = torch.rand(16, 3, device=device)
batches = DataLoader(TensorDataset(votes), batch_size=4)
model._do_estimate_label_model(batches, {"epochs": 1, "step_size": 0.1})
