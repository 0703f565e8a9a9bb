# ganomaly issue 26: lib/model.py test() and lib/evaluate.py roc(), minimised.
import torch
import torch.nn as nn
from sklearn.metrics import roc_curve, auc


def evaluate(labels, scores, metric='roc'):
    if metric == 'roc':
        return roc(labels, scores)
    else:
        raise NotImplementedError("Check the evaluation metric.")


def roc(labels, scores, saveto=None):
    """Compute ROC curve and ROC area for each class"""
    fpr = dict()
    tpr = dict()
    roc_auc = dict()

    # True/False Positive Rates.
    fpr, tpr, _ = roc_curve(labels, scores)
    roc_auc = auc(fpr, tpr)

    return roc_auc


class Ganomaly:
    def __init__(self, opt, dataloader):
        self.opt = opt
        self.dataloader = dataloader
        self.device = torch.device("cuda:0" if self.opt.device != 'cpu' else "cpu")
        self.netg = nn.Sequential(nn.Linear(16, 4), nn.Linear(4, 16)).to(self.device)
        self.encoder = nn.Linear(16, 4).to(self.device)

    def test(self):
        with torch.no_grad():
            self.an_scores = torch.zeros(size=(len(self.dataloader['test'].dataset),), dtype=torch.float32, device=self.device)
            self.gt_labels = torch.zeros(size=(len(self.dataloader['test'].dataset),), dtype=torch.long, device=self.device)

            for i, data in enumerate(self.dataloader['test'], 0):
                self.input = data[0].to(self.device)
                self.gt = data[1].to(self.device)
                self.fake = self.netg(self.input)
                latent_i = self.encoder(self.input)
                latent_o = self.encoder(self.fake)
                error = torch.mean(torch.pow((latent_i - latent_o), 2), dim=1)

                self.an_scores[i*self.opt.batchsize: i*self.opt.batchsize + error.size(0)] = error.reshape(error.size(0))
                self.gt_labels[i*self.opt.batchsize: i*self.opt.batchsize + error.size(0)] = self.gt.reshape(error.size(0))

            self.an_scores = (self.an_scores - torch.min(self.an_scores)) / (torch.max(self.an_scores) - torch.min(self.an_scores))
            auc = evaluate(self.gt_labels, self.an_scores, metric=self.opt.metric)
            return auc


class TestSet(list):
    @property
    def dataset(self):
        return [x for batch in self for x in batch[0]]


class Options:
    device = 'gpu' if torch.cuda.is_available() else 'cpu'
    batchsize = 4
    metric = 'roc'


if __name__ == '__main__':
    test_set = TestSet([(torch.randn(4, 16), torch.tensor([0, 1, 0, 1])) for _ in range(2)])
    model = Ganomaly(Options(), {'test': test_set})
    print(model.test())
