"""An RNN's state kept as a tuple attribute of the module, made on the CPU while the module is
built: `self.hidden = self.init_hidden()` (the PyTorch tutorial's `LSTMTagger`, and the many
"Input and hidden tensors are not at the same device" reports built on it) or a tuple display.
`.to(device)` moves parameters and buffers, not a plain tuple, so the first `forward` hands
the LSTM a CPU state. (No buffer holds a tuple, so TDL005 offers no fix here; positive
fixtures are fixed whole, so this program lives here: tests/runtime/test_module_state.py.)"""
import torch
import torch.nn as nn
from torch.autograd import Variable


class LSTMTagger(nn.Module):
    def __init__(self, embedding_dim=3, hidden_dim=4):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.lstm = nn.LSTM(embedding_dim, hidden_dim)
        self.hidden = self.init_hidden()  # expect: TDL005@9

    def init_hidden(self):
        return (Variable(torch.zeros(1, 1, self.hidden_dim)),
                Variable(torch.zeros(1, 1, self.hidden_dim)))

    def forward(self, sentence):
        out, self.hidden = self.lstm(sentence.view(len(sentence), 1, -1), self.hidden)
        return out


class Encoder(nn.Module):
    def __init__(self, hidden_dim=4):
        super().__init__()
        self.rnn = nn.LSTM(3, hidden_dim)
        self.state = (torch.zeros(1, 1, hidden_dim), torch.zeros(1, 1, hidden_dim))  # expect: TDL005@9

    def forward(self, x):
        out, _ = self.rnn(x, self.state)
        return out


def build():
    return LSTMTagger()


def main(device):
    tagger = build().to(device)
    encoder = Encoder().to(device)
    x = torch.randn(5, 3, device=device)
    return tagger(x), encoder(x.view(5, 1, 3))


if __name__ == "__main__":
    main(torch.device("cuda" if torch.cuda.is_available() else "cpu"))
