# voice-type-classifier issue 12 (the comment it quotes): predictions of a model kept in a
# list in an inference loop, minimised.
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5))

    def forward(self, x):
        return self.net(x)


if __name__ == '__main__':
    model = Classifier().to(torch.device("cuda:0" if torch.cuda.is_available() else "cpu"))
    model.eval()
    dataloader = torch.utils.data.DataLoader(torch.randn(12, 20), batch_size=4)

    predictions = []
    for batch in dataloader:
         p = model(batch.to(torch.device("cuda:0" if torch.cuda.is_available() else "cpu")))
         predictions.append(p.tolist())

    print(predictions[-1])
