# qdtrack issue 29: qdtrack/models/trackers/quasi_dense_embed_tracker.py match(), minimised
# (the reporter's detector gives its labels on the CPU).
import torch
import torch.nn.functional as F


class QuasiDenseEmbedTracker(object):
    def __init__(self, match_score_thr=0.5, memo_momentum=0.8, with_cats=True,
                 match_metric='bisoftmax'):
        self.match_score_thr = match_score_thr
        self.memo_momentum = memo_momentum
        self.with_cats = with_cats
        self.match_metric = match_metric
        self.num_tracklets = 0
        self.tracklets = dict()

    @property
    def empty(self):
        return False if self.tracklets else True

    def update_memo(self, ids, bboxes, embeds, labels, frame_id):
        for id, bbox, embed, label in zip(ids, bboxes, embeds, labels):
            id = int(id)
            self.tracklets[id] = dict(bbox=bbox, embed=embed, label=label, last_frame=frame_id)

    @property
    def memo(self):
        memo_embeds = []
        memo_ids = []
        memo_labels = []
        for k, v in self.tracklets.items():
            memo_embeds.append(v['embed'][None, :])
            memo_ids.append(k)
            memo_labels.append(v['label'].view(1, 1))
        memo_ids = torch.tensor(memo_ids, dtype=torch.long).view(1, -1)
        memo_embeds = torch.cat(memo_embeds, dim=0)
        memo_labels = torch.cat(memo_labels, dim=0).squeeze(1)
        return memo_labels, memo_embeds, memo_ids.squeeze(0)

    def match(self, bboxes, labels, track_feats, frame_id):
        _, inds = bboxes[:, -1].sort(descending=True)
        bboxes = bboxes[inds, :]
        labels = labels[inds.cpu()]
        embeds = track_feats[inds, :]

        ids = torch.full((bboxes.size(0), ), -1, dtype=torch.long)

        if bboxes.size(0) > 0 and not self.empty:
            memo_labels, memo_embeds, memo_ids = self.memo

            if self.match_metric == 'bisoftmax':
                feats = torch.mm(embeds, memo_embeds.t())
                d2t_scores = feats.softmax(dim=1)
                t2d_scores = feats.softmax(dim=0)
                scores = (d2t_scores + t2d_scores) / 2
            else:
                raise NotImplementedError

            if self.with_cats:
                cat_same = labels.view(-1, 1) == memo_labels.view(1, -1)
                scores *= cat_same.float()

            for i in range(bboxes.size(0)):
                conf, memo_ind = torch.max(scores[i, :], dim=0)
                id = memo_ids[memo_ind]
                if conf > self.match_score_thr:
                    ids[i] = id
        new_inds = ids == -1
        num_news = int(new_inds.sum())
        ids[new_inds] = torch.arange(self.num_tracklets, self.num_tracklets + num_news, dtype=torch.long)
        self.num_tracklets += num_news

        self.update_memo(ids, bboxes, embeds, labels, frame_id)
        return bboxes, labels, ids


if __name__ == '__main__':
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    tracker = QuasiDenseEmbedTracker()
    embed_head = torch.nn.Linear(8, 4).to(device)
    for frame_id in range(2):
        bboxes = torch.rand(3, 5).to(device)
        track_feats = embed_head(torch.randn(3, 8).to(device))
        labels = torch.tensor([0, 1, 0])
        print(tracker.match(bboxes, labels, track_feats, frame_id)[2])
