import torch
import torch.nn as nn


class CPC(nn.Module):
    def __init__(self, options):
        super(CPC, self).__init__()
        self.batch_size = options["batch_size"]
        self.timestep = options["timestep"]
        self.encoder = nn.Sequential(nn.Conv1d(1, 16, 4, stride=2, padding=1), nn.ReLU())
        self.gru = nn.GRU(16, 8, num_layers=1, bidirectional=False, batch_first=True)
        self.Wk = nn.ModuleList([nn.Linear(8, 16) for _ in range(self.timestep)])

    def init_hidden(self, batch_size):
        return torch.zeros(1, batch_size, 8)

    def forward(self, x, hidden):
        z = self.encoder(x).transpose(1, 2)
        prior_sequence = z[:, :-self.timestep, :]
        output, hidden = self.gru(prior_sequence, hidden)
        c_t = output[:, -1, :]
        predictions = torch.stack([w(c_t) for w in self.Wk])
        return z[:, -self.timestep:, :], predictions, hidden


class Model:
    def __init__(self, options):
        self.options = options
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.cpc = CPC(options).to(self.device)

    def fit(self, data_loader):
        for Xbatch in data_loader:
            Xbatch = Xbatch.to(self.device)
            hidden = self.cpc.init_hidden(Xbatch.size(0))
            encoder_samples, predictions, hidden = self.cpc(Xbatch, hidden)
            print(predictions.shape)


encoder = Model({"batch_size": 2, "timestep": 3})
encoder.fit([torch.randn(2, 1, 32)])
