import torch
import torch.nn as nn


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, embeding_size, n_categories, n_layers, output_size, p):
        super().__init__()
        self.criterion = nn.CrossEntropyLoss()
        self.n_layers = n_layers
        self.hidden_size = hidden_size
        self.embeding = nn.Embedding(input_size + n_categories, embeding_size)
        self.lstm = nn.LSTM(embeding_size + n_categories, hidden_size, n_layers, dropout=p)
        self.out_fc = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(p)

    def forward(self, batch_of_category, batch_of_letter, hidden, cell):
        embeding = self.dropout(self.embeding(batch_of_letter))
        category_plus_letter = torch.cat((batch_of_category, embeding), 1)
        out, (hidden, cell) = self.lstm(category_plus_letter.unsqueeze(0), (hidden, cell))
        out = self.out_fc(out)
        return out, (hidden, cell)

    def training_step(self, batch, batch_num):
        loss = 0
        x, y = batch
        hidden = torch.zeros(self.n_layers, 1, self.hidden_size)
        cell = torch.zeros(self.n_layers, 1, self.hidden_size)
        for i in range(len(x)):
            output, (hidden, cell) = self(x[i][0], x[i][1], hidden, cell)
            loss += self.criterion(output.squeeze(0), y[i])
        return loss


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = RNN(30, 16, 8, 4, 2, 30, 0.1).to(device)
x = [(torch.zeros(1, 4, device=device), torch.randint(0, 30, (1,), device=device)) for _ in range(3)]
y = torch.randint(0, 30, (3, 1), device=device)
loss = model.training_step((x, y), 0)
loss.backward()
