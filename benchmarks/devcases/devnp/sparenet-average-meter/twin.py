# SpareNet issue 12: runners/sparenet_runner.py train_step and runners/misc.py AverageMeter,
# with the base runner's epoch loop, minimised.
import torch
import torch.nn as nn


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self, items=None):
        self.items = items
        self.n_items = 1 if items is None else len(items)
        self.reset()

    def reset(self):
        self._val = [0] * self.n_items
        self._sum = [0] * self.n_items
        self._count = [0] * self.n_items

    def update(self, values):
        if type(values).__name__ == "list":
            for idx, v in enumerate(values):
                self._val[idx] = v
                self._sum[idx] += v
                self._count[idx] += 1
        else:
            self._val[0] = values
            self._sum[0] += values
            self._count[0] += 1

    def avg(self, idx=None):
        if idx is None:
            return self._sum[0] / self._count[0] if self.items is None else [self._sum[i] / self._count[i] for i in range(self.n_items)]
        else:
            return self._sum[idx] / self._count[idx]


class SpareNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.coarse = nn.Linear(3, 3)
        self.refine = nn.Linear(3, 3)

    def forward(self, data):
        coarse_ptcloud = self.coarse(data["partial_cloud"])
        refine_ptcloud = self.refine(coarse_ptcloud)
        return coarse_ptcloud, refine_ptcloud


class sparenetRunner(object):
    def __init__(self, gpu_ids):
        self.gpu_ids = gpu_ids
        self.losses = AverageMeter(["CoarseLoss", "RefineLoss"])
        self.models = SpareNet().to(self.gpu_ids[0])
        self.optimizers = torch.optim.Adam(self.models.parameters(), lr=1e-3)
        self.loss = {}

    def train_step(self, items):
        _, (_, _, _, data) = items
        for k, v in data.items():
            data[k] = v.float().to(self.gpu_ids[0])

        _loss, refine_loss, coarse_loss = self.completion(data)
        self.models.zero_grad()
        _loss.backward()
        self.optimizers.step()

        self.loss["coarse_loss"] = coarse_loss * 1000
        self.loss["refine_loss"] = refine_loss * 1000
        self.loss["rec_loss"] = _loss
        self.losses.update([coarse_loss.item() * 1000, refine_loss.item() * 1000])

    def completion(self, data):
        coarse_ptcloud, refine_ptcloud = self.models(data)
        coarse_loss = ((coarse_ptcloud - data["gtcloud"]) ** 2).mean()
        refine_loss = ((refine_ptcloud - data["gtcloud"]) ** 2).mean()
        _loss = coarse_loss + refine_loss
        return _loss, refine_loss, coarse_loss

    def train(self, train_data_loader, epochs=2):
        for epoch_idx in range(epochs):
            self.losses.reset()
            for batch_idx, items in enumerate(train_data_loader):
                self.train_step(items)
            print(self.losses.avg())


if __name__ == '__main__':
    gpu_ids = [torch.device("cuda:0" if torch.cuda.is_available() else "cpu")]
    runner = sparenetRunner(gpu_ids)
    loader = [(i, (None, None, None, {"partial_cloud": torch.rand(4, 3), "gtcloud": torch.rand(4, 3)}))
              for i in range(3)]
    runner.train(loader)
