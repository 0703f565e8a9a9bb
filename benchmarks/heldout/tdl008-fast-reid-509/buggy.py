import numpy as np
import torch
import torch.nn.functional as F


class FeatureExtractionDemo(object):
    def __init__(self, device):
        self.device = device
        self.model = torch.nn.Linear(12, 6).to(device).eval()

    def run_on_loader(self, data_loader):
        for batch in data_loader:
            with torch.no_grad():
                feats = self.model(batch["images"].to(self.device))
            yield feats, batch["targets"].numpy(), batch["camids"].numpy()


def build_dist(feat_1, feat_2):
    return 1 - torch.mm(feat_1, feat_2.t())


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
demo = FeatureExtractionDemo(device)
test_loader = [{"images": torch.randn(4, 12), "targets": torch.arange(4), "camids": torch.zeros(4)}]
feats, pids, camids = [], [], []
for feat, pid, camid in demo.run_on_loader(test_loader):
    feats.append(feat)
    pids.extend(pid)
    camids.extend(camid)
feats = torch.cat(feats, dim=0)
q_feat = feats[:2]
g_feat = feats[2:]
q_feat = F.normalize(q_feat, p=2, dim=1)
g_feat = F.normalize(g_feat, p=2, dim=1)
distmat = build_dist(q_feat, g_feat)
distmat = distmat.numpy()
print(np.argsort(distmat, axis=1))
