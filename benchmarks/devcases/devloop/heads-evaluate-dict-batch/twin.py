"""
transformer-heads transformer_heads/util/evaluate.py before 7a1b562, minimised: the HeadedModel
(a quantized LLM with heads, loaded onto the GPU) is a small stand-in, the dataset is a list of
dicts (with_format("torch") in the original), tqdm is left out.
"""

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


@dataclass
class HeadedModelOutput:
    loss: torch.Tensor
    loss_by_head: dict


class HeadedModel(nn.Module):
    def __init__(self, vocab_size=50, hidden_size=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden_size)
        self.sentiment_head = nn.Linear(hidden_size, 2)

    @property
    def device(self):
        return self.embed.weight.device

    def forward(self, input_ids, attention_mask, sentiment_head):
        hidden = (self.embed(input_ids) * attention_mask.unsqueeze(-1)).mean(1)
        loss = F.cross_entropy(self.sentiment_head(hidden), sentiment_head)
        return HeadedModelOutput(loss=loss, loss_by_head={"sentiment_head": loss})


@torch.inference_mode()
def evaluate_head_wise(
    model: HeadedModel, ds, collator=None, batch_size=8, epochs=1
) -> tuple[int, dict[str, int]]:
    """
    Compute the model loss for each of its heads.
    """
    loader = DataLoader(ds, batch_size=batch_size, collate_fn=collator)
    losses_by_head = defaultdict(list)
    losses = []
    for i, batch in enumerate(loader):
        outputs: HeadedModelOutput = model(
            **{key: value.to(model.device) for key, value in batch.items()}
        )
        for key in outputs.loss_by_head:
            losses_by_head[key].append(float(outputs.loss_by_head[key].item()))
        losses.append(float(outputs.loss.item()))
        if i >= len(loader) * epochs:
            break
    losses = float(np.mean(losses))
    losses_by_head = {
        key: float(np.mean(losses_by_head[key])) for key in losses_by_head
    }
    return losses, losses_by_head


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = HeadedModel().to(device)
    ds = [{"input_ids": torch.randint(0, 50, (6,)), "attention_mask": torch.ones(6),
           "sentiment_head": torch.tensor(i % 2)} for i in range(16)]
    print(evaluate_head_wise(model, ds))
