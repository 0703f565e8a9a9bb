import torch
import torch.nn as nn


class BertNerModel(nn.Module):
    def __init__(self, hidden_size=16, lstm_hidden=8, num_layers=1, num_tags=5):
        super(BertNerModel, self).__init__()
        self.bert = nn.Embedding(100, hidden_size)
        self.lstm_hidden = lstm_hidden
        self.num_layers = num_layers
        self.lstm = nn.LSTM(hidden_size, lstm_hidden, num_layers, bidirectional=True, batch_first=True)
        self.linear = nn.Linear(lstm_hidden * 2, num_tags)

    def init_hidden(self, batch_size, device):
        h0 = torch.randn(2 * self.num_layers, batch_size, self.lstm_hidden, requires_grad=True, device=device)
        c0 = torch.randn(2 * self.num_layers, batch_size, self.lstm_hidden, requires_grad=True, device=device)
        return h0, c0

    def forward(self, token_ids, attention_masks, token_type_ids, labels):
        seq_out = self.bert(token_ids)
        batch_size = seq_out.size(0)
        hidden = self.init_hidden(batch_size, seq_out.device)
        seq_out, (hn, _) = self.lstm(seq_out, hidden)
        return self.linear(seq_out)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = BertNerModel().to(device)
token_ids = torch.randint(0, 100, (2, 6))
attention_masks = torch.ones(2, 6)
token_type_ids = torch.zeros(2, 6, dtype=torch.long)
logits = model(token_ids.to(device), attention_masks.to(device), token_type_ids.to(device), None)
print(logits.shape)
