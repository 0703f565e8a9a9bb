import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class QAModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 16)
        self.score = nn.Linear(16, 1)

    def forward(self, question, choices, label=None):
        q = self.embed(question).mean(1, keepdim=True)
        c = self.embed(choices).mean(2)
        logits = self.score(q * c).squeeze(-1)
        out = {"label_logits": logits}
        if label is not None:
            out["loss"] = nn.functional.cross_entropy(logits, label)
        return out


def collate(instances):
    return {"question": torch.stack([i[0] for i in instances]),
            "choices": torch.stack([i[1] for i in instances]),
            "label": torch.stack([i[2] for i in instances])}


def evaluate(model, instances, iterator, cuda_device):
    model.eval()
    correct = 0
    with torch.no_grad():
        for batch in iterator(instances):
            if cuda_device >= 0:
                batch = {k: v.cuda(cuda_device) for k, v in batch.items()}
            output_dict = model(**batch)
            correct += (output_dict["label_logits"].argmax(-1) == batch["label"]).sum().item()
    return correct / len(instances)


def evaluate_from_args(cuda_device):
    model = QAModel()
    if cuda_device >= 0:
        model.cuda(cuda_device)
    dataset = [(torch.randint(0, 100, (6,)), torch.randint(0, 100, (4, 5)), torch.tensor(1)) for _ in range(8)]
    iterator = lambda data: DataLoader(data, batch_size=4, collate_fn=collate)
    return evaluate(model, dataset, iterator, cuda_device)


print(evaluate_from_args(0 if torch.cuda.is_available() else -1))
