# pytorch-lightning issue 3674: the reporter's LitModel, minimised: an nn.Module moved to the
# device (as the Trainer does) instead of a LightningModule, random MNIST-sized batches; forward
# adds a slice of self.tem to the logits where the reporter only printed its device.
import torch
import torch.nn.functional as F


class LitModel(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.seg = 20
        self.num_joints = 25
        self.register_buffer("tem", self.one_hot(self.seg, self.num_joints).permute(2, 0, 1))
        self.layer_1 = torch.nn.Linear(28 * 28, 128)
        self.layer_2 = torch.nn.Linear(128, 10)

    def one_hot(self, spa, tem) -> torch.Tensor:

        y = torch.arange(spa).unsqueeze(-1)
        y_onehot = torch.FloatTensor(spa, spa)

        y_onehot.zero_()
        y_onehot.scatter_(1, y, 1)

        y_onehot = y_onehot.unsqueeze(0)
        y_onehot = y_onehot.repeat(tem, 1, 1)

        return y_onehot

    def forward(self, x):
        x = x.view(x.size(0), -1)
        x = self.layer_1(x)
        x = F.relu(x)
        x = self.layer_2(x)
        x = x + self.tem[0, 0, :10]
        return x

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.nll_loss(F.log_softmax(logits, dim=1), y)
        return loss

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        return optimizer


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = LitModel().to(device)
    optimizer = model.configure_optimizers()
    for batch_idx in range(2):
        batch = (torch.rand(4, 1, 28, 28).to(device), torch.randint(0, 10, (4,)).to(device))
        loss = model.training_step(batch, batch_idx)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(loss.item())
