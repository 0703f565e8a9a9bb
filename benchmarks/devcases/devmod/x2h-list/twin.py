import torch
import torch.nn as nn


class GRUModel(nn.Module):
    def __init__(self, input_size, hidden_size, layn, bias=True):
        super(GRUModel, self).__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.layn = layn
        self.bias = bias
        self.x2h = nn.ModuleList()
        self.h2h = nn.ModuleList()
        for x in range(layn):
            temp1 = nn.Linear(input_size, 3 * hidden_size, bias=self.bias)
            temp2 = nn.Linear(hidden_size, 3 * hidden_size, bias=self.bias)
            self.x2h.append(temp1)
            self.h2h.append(temp2)
            input_size = hidden_size

    def forward(self, x, hidden):
        out = x
        for i in range(self.layn):
            gate_x = self.x2h[i](out)
            gate_h = self.h2h[i](hidden)
            i_r, i_i, i_n = gate_x.chunk(3, 1)
            h_r, h_i, h_n = gate_h.chunk(3, 1)
            resetgate = torch.sigmoid(i_r + h_r)
            inputgate = torch.sigmoid(i_i + h_i)
            newgate = torch.tanh(i_n + (resetgate * h_n))
            hidden = newgate + inputgate * (hidden - newgate)
            out = hidden
        return out


if __name__ == "__main__":
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model = GRUModel(input_size=4, hidden_size=8, layn=2).to(device)
    x = torch.randn(3, 4, device=device)
    h = torch.zeros(3, 8, device=device)
    print(model(x, h).shape)
