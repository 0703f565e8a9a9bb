# yolov7 issue 1224 ("indices should be either on cpu or on the same device as the indexed
# tensor (cpu)" at `from_which_layer = from_which_layer[fg_mask_inboxes]` in utils/loss.py;
# accepted answer: create `from_which_layer`'s pieces on cuda, `(torch.ones(size=(len(b),)) *
# i).to('cuda')`, and move `fg_mask_inboxes` there): utils/loss.py's ComputeLossOTA.build_targets,
# minimised: the candidate indices and anchors of find_3_positive are given, the cost keeps only
# the IoU term, and the predictions come from random heads on the device.
import torch


def box_iou(box1, box2):
    def box_area(box):
        return (box[2] - box[0]) * (box[3] - box[1])
    area1, area2 = box_area(box1.T), box_area(box2.T)
    inter = (torch.min(box1[:, None, 2:], box2[:, 2:]) - torch.max(box1[:, None, :2], box2[:, :2])).clamp(0).prod(2)
    return inter / (area1[:, None] + area2 - inter)


def xywh2xyxy(x):
    y = x.clone()
    y[:, 0], y[:, 1] = x[:, 0] - x[:, 2] / 2, x[:, 1] - x[:, 3] / 2
    y[:, 2], y[:, 3] = x[:, 0] + x[:, 2] / 2, x[:, 1] + x[:, 3] / 2
    return y


class ComputeLossOTA:
    def __init__(self, stride, indices, anch):
        self.stride, self.indices, self.anch = stride, indices, anch

    def build_targets(self, p, targets, imgs):
        indices, anch = self.indices, self.anch
        nl = len(p)
        matching_bs = [[] for pp in p]
        for batch_idx in range(p[0].shape[0]):
            b_idx = targets[:, 0]==batch_idx
            this_target = targets[b_idx]
            if this_target.shape[0] == 0:
                continue
            txywh = this_target[:, 2:6] * imgs[batch_idx].shape[1]
            txyxy = xywh2xyxy(txywh)
            pxyxys = []
            from_which_layer = []
            all_b = []
            for i, pi in enumerate(p):
                b, a, gj, gi = indices[i]
                idx = (b == batch_idx)
                b, a, gj, gi = b[idx], a[idx], gj[idx], gi[idx]
                all_b.append(b)
                from_which_layer.append((torch.ones(size=(len(b),)) * i).to('cuda'))
                fg_pred = pi[b, a, gj, gi]
                grid = torch.stack([gi, gj], dim=1)
                pxy = (fg_pred[:, :2].sigmoid() * 2. - 0.5 + grid) * self.stride[i]
                pwh = (fg_pred[:, 2:4].sigmoid() * 2) ** 2 * anch[i][idx] * self.stride[i]
                pxyxys.append(xywh2xyxy(torch.cat([pxy, pwh], dim=-1)))
            pxyxys = torch.cat(pxyxys, dim=0)
            if pxyxys.shape[0] == 0:
                continue
            from_which_layer = torch.cat(from_which_layer, dim=0)
            all_b = torch.cat(all_b, dim=0)
            pair_wise_iou = box_iou(txyxy, pxyxys)
            top_k, _ = torch.topk(pair_wise_iou, min(10, pair_wise_iou.shape[1]), dim=1)
            dynamic_ks = torch.clamp(top_k.sum(1).int(), min=1)
            cost = -torch.log(pair_wise_iou + 1e-8)
            matching_matrix = torch.zeros_like(cost)
            for gt_idx in range(this_target.shape[0]):
                _, pos_idx = torch.topk(cost[gt_idx], k=dynamic_ks[gt_idx].item(), largest=False)
                matching_matrix[gt_idx][pos_idx] = 1.0
            fg_mask_inboxes = matching_matrix.sum(0) > 0.0
            fg_mask_inboxes = fg_mask_inboxes.to(torch.device('cuda'))
            from_which_layer = from_which_layer[fg_mask_inboxes]
            all_b = all_b[fg_mask_inboxes]
            for i in range(nl):
                layer_idx = from_which_layer == i
                matching_bs[i].append(all_b[layer_idx])
        return [torch.cat(bs, dim=0) for bs in matching_bs]


if __name__ == '__main__':
    torch.manual_seed(0)
    device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
    p = [torch.randn(2, 3, 8, 8, 6, device=device), torch.randn(2, 3, 4, 4, 6, device=device)]
    indices = [tuple(torch.randint(0, n, (12,), device=device) for n in (2, 3, s, s)) for s in (8, 4)]
    anch = [torch.rand(12, 2, device=device) * 4 for _ in range(2)]
    targets = torch.tensor([[0, 1, 0.5, 0.5, 0.2, 0.3], [1, 0, 0.3, 0.6, 0.1, 0.1]]).to(device)
    imgs = torch.zeros(2, 3, 64, 64, device=device)
    compute_loss_ota = ComputeLossOTA(stride=[8., 16.], indices=indices, anch=anch)
    print([b.shape for b in compute_loss_ota.build_targets(p, targets, imgs)])
