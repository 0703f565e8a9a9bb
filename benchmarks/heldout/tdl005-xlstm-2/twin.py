import torch
import torch.nn as nn


class sLSTMblock(nn.Module):
    def __init__(self, x_example, depth, dropout=0.2):
        super().__init__()
        self.input_size = x_example.shape[2]
        self.ln = nn.LayerNorm(self.input_size)
        self.z_gate = nn.Linear(self.input_size, self.input_size)
        self.i_gate = nn.Linear(self.input_size, self.input_size)
        self.f_gate = nn.Linear(self.input_size, self.input_size)
        self.o_gate = nn.Linear(self.input_size, self.input_size)
        self.init_states(x_example)

    def init_states(self, x):
        self.register_buffer('nt_1', torch.zeros(1, 1, x.shape[2], device=x.device))
        self.register_buffer('ct_1', torch.zeros(1, 1, x.shape[2], device=x.device))
        self.register_buffer('ht_1', torch.zeros(1, 1, x.shape[2], device=x.device))
        self.register_buffer('mt_1', torch.zeros(1, 1, x.shape[2], device=x.device))

    def forward(self, x):
        x = self.ln(x)
        zt = torch.tanh(self.z_gate(x))
        it = self.i_gate(x)
        ft = self.f_gate(x)
        ot = torch.sigmoid(self.o_gate(x))
        mt = torch.max(ft + self.mt_1, it)
        it = torch.exp(it - mt)
        ft = torch.exp(ft - mt + self.mt_1)
        ct = ft * self.ct_1 + it * zt
        nt = ft * self.nt_1 + it
        ht = ot * (ct / nt)
        return ht


x_example = torch.zeros(4, 8, 16)
model = sLSTMblock(x_example, depth=4)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model.to(device)
print(model(torch.randn(4, 8, 16, device=device)).shape)
