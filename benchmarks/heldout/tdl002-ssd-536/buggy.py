import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiBoxLoss(nn.Module):
    def __init__(self, num_classes, overlap_thresh, neg_pos, use_gpu=True):
        super(MultiBoxLoss, self).__init__()
        self.use_gpu = use_gpu
        self.num_classes = num_classes
        self.threshold = overlap_thresh
        self.negpos_ratio = neg_pos

    def forward(self, predictions, targets):
        loc_data, conf_data = predictions
        num = loc_data.size(0)
        num_priors = loc_data.size(1)
        loc_t = torch.Tensor(num, num_priors, 4)
        conf_t = torch.LongTensor(num, num_priors)
        for idx in range(num):
            loc_t[idx] = targets[idx][:, :4].mean(0)
            conf_t[idx] = targets[idx][:, -1].long().max()
        if self.use_gpu:
            loc_t = loc_t.cuda()
            conf_t = conf_t.cuda()
        loss_l = F.smooth_l1_loss(loc_data, loc_t, reduction='sum')
        loss_c = F.cross_entropy(conf_data.view(-1, self.num_classes), conf_t.view(-1), reduction='sum')
        return loss_l / num, loss_c / num


criterion = MultiBoxLoss(num_classes=3, overlap_thresh=0.5, neg_pos=3)
loc = torch.randn(2, 6, 4)
conf = torch.randn(2, 6, 3)
targets = [torch.tensor([[0.1, 0.1, 0.4, 0.4, 1.0]]), torch.tensor([[0.2, 0.2, 0.5, 0.5, 2.0]])]
print(criterion((loc, conf), targets))
