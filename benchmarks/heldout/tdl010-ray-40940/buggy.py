import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class CausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.head = nn.Linear(16, 50)

    def forward(self, input_ids, labels):
        logits = self.head(self.emb(input_ids))
        loss = nn.functional.cross_entropy(logits.view(-1, 50), labels.view(-1))
        return type("Output", (), {"loss": loss, "logits": logits})


def training_function(kwargs: dict):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = CausalLM().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=kwargs["lr"])
    data = [{"input_ids": torch.randint(0, 50, (6,)), "labels": torch.randint(0, 50, (6,))} for _ in range(8)]
    train_dataloader = DataLoader(data, batch_size=2)
    for epoch in range(kwargs["num_epochs"]):
        loss_sum = torch.tensor(0.0).to(device)
        for step, batch in enumerate(train_dataloader):
            batch = {k: v.to(device) for k, v in batch.items()}
            outputs = model(**batch)
            loss = outputs.loss
            loss_sum += loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        print("epoch", epoch, "avg loss", loss_sum / len(train_dataloader))


training_function({"lr": 1e-3, "num_epochs": 1})
