import torch
import torch.nn as nn
from torch.nn import functional as F

# -----------------------------------------------------------------------------
# default config values
batch_size = 4
block_size = 8
learning_rate = 6e-4
max_iters = 2
device = 'cuda' if torch.cuda.is_available() else 'cpu'  # examples: 'cpu', 'cuda', 'cuda:0', 'cuda:1' etc., or try 'mps' on macbooks
# -----------------------------------------------------------------------------

torch.manual_seed(1337)
train_data = torch.randint(0, 65, (1000,))


def get_batch(split):
    data = train_data
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    x, y = x.to(device), y.to(device)
    return x, y


class TinyLM(nn.Module):
    def __init__(self, vocab_size=65, n_embd=32):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx, targets=None):
        logits = self.lm_head(self.wte(idx))
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


model = TinyLM()
model.to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
for iter_num in range(max_iters):
    X, Y = get_batch('train')
    logits, loss = model(X, Y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
