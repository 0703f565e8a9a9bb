# BLIP issue 158 ("Error 'RuntimeError: indices should be either on cpu or on the same device as
# the indexed tensor (cpu)' in line 147 of train_retrieval.py"; answer: "topk_idx ->
# topk_idx.cpu()"): train_retrieval.py's evaluation, minimised: a tiny image/text model with a
# character tokenizer stands in for blip_retrieval (no download), a list of (image, id) pairs
# for the retrieval data loader, single process, no MetricLogger.
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyRetrieval(nn.Module):
    def __init__(self, dim=8, vocab=32):
        super().__init__()
        self.visual_encoder = nn.Linear(12, 3 * dim)
        self.vision_proj = nn.Linear(dim, dim)
        self.embed = nn.Embedding(vocab, dim)
        self.text_proj = nn.Linear(dim, dim)
        self.itm_head = nn.Linear(dim, 2)
        self.dim = dim

    def tokenizer(self, texts):
        ids = torch.tensor([[ord(c) % 32 for c in t[:6].ljust(6)] for t in texts])
        return SimpleNamespace(input_ids=ids, attention_mask=torch.ones_like(ids))

    def encode_image(self, image):
        return self.visual_encoder(image).view(image.size(0), 3, self.dim)

    def text_encoder(self, ids, encoder_hidden_states=None):
        h = self.embed(ids)
        if encoder_hidden_states is not None:
            h = h + encoder_hidden_states.mean(1, keepdim=True)
        return SimpleNamespace(last_hidden_state=h)


@torch.no_grad()
def evaluation(model, data_loader, texts, device, config):
    model.eval()
    text_input = model.tokenizer(texts)
    text_ids = text_input.input_ids.to(device)
    text_output = model.text_encoder(text_ids)
    text_embeds = F.normalize(model.text_proj(text_output.last_hidden_state[:, 0, :]))

    image_feats = []
    image_embeds = []
    for image, img_id in data_loader:
        image = image.to(device)
        image_feat = model.encode_image(image)
        image_embed = F.normalize(model.vision_proj(image_feat[:, 0, :]), dim=-1)
        image_feats.append(image_feat.cpu())
        image_embeds.append(image_embed)
    image_feats = torch.cat(image_feats, dim=0)
    image_embeds = torch.cat(image_embeds, dim=0)

    sims_matrix = image_embeds @ text_embeds.t()
    sims_matrix = sims_matrix.t()
    score_matrix_t2i = torch.full((len(texts), image_feats.size(0)), -100.0).to(device)
    for i, sims in enumerate(sims_matrix):
        topk_sim, topk_idx = sims.topk(k=config['k_test'], dim=0)
        encoder_output = image_feats[topk_idx].to(device)
        output = model.text_encoder(text_ids[i].repeat(config['k_test'], 1),
                                    encoder_hidden_states=encoder_output)
        score = model.itm_head(output.last_hidden_state[:, 0, :])[:, 1]
        score_matrix_t2i[i, topk_idx] = score + topk_sim
    return score_matrix_t2i.cpu().numpy()


if __name__ == '__main__':
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    model = TinyRetrieval().to(device)
    data_loader = [(torch.randn(2, 12), torch.tensor([2 * b, 2 * b + 1])) for b in range(2)]
    texts = ['a dog', 'a cat on a mat', 'two birds']
    print(evaluation(model, data_loader, texts, device, {'k_test': 2}))
