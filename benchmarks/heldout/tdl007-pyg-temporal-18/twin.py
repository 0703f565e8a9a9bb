import torch


class DCRNN(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super(DCRNN, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.conv_x_z = torch.nn.Linear(in_channels + out_channels, out_channels)
        self.conv_x_h = torch.nn.Linear(in_channels + out_channels, out_channels)

    def _set_hidden_state(self, X, H):
        if H is None:
            H = torch.zeros(X.shape[0], self.out_channels).to(X.device)
        return H

    def _calculate_update_gate(self, X, H):
        Z = torch.cat([X, H], dim=-1)
        return torch.sigmoid(self.conv_x_z(Z))

    def _calculate_candidate_state(self, X, H):
        H_tilde = torch.cat([X, H], dim=-1)
        return torch.tanh(self.conv_x_h(H_tilde))

    def forward(self, X, edge_index, edge_weight=None, H=None):
        H = self._set_hidden_state(X, H)
        Z = self._calculate_update_gate(X, H)
        H_tilde = self._calculate_candidate_state(X, H)
        H = Z * H + (1 - Z) * H_tilde
        return H


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = DCRNN(4, 8).to(device)
x = torch.randn(5, 4, device=device)
edge_index = torch.tensor([[0, 1, 2], [1, 2, 3]], device=device)
print(model(x, edge_index).shape)
