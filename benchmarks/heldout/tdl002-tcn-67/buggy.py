import argparse
import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser(description='Sequence Modeling - The Adding Problem')
parser.add_argument('--batch_size', type=int, default=4, metavar='N')
parser.add_argument('--cuda', action='store_false',
                    help='use CUDA (default: True)')
parser.add_argument('--seq_len', type=int, default=20)
args = parser.parse_args()


class TCN(nn.Module):
    def __init__(self, input_size, output_size, num_channels):
        super(TCN, self).__init__()
        self.conv = nn.Conv1d(input_size, num_channels, 3, padding=1)
        self.linear = nn.Linear(num_channels, output_size)

    def forward(self, x):
        y1 = self.conv(x)
        return self.linear(y1[:, :, -1])


def data_generator(N, seq_length):
    X = torch.rand(N, 2, seq_length)
    Y = X[:, 0, :].sum(dim=1, keepdim=True)
    return X, Y


X_train, Y_train = data_generator(8, args.seq_len)
model = TCN(2, 1, 8)
if args.cuda:
    model.cuda()
    X_train = X_train.cuda()
    Y_train = Y_train.cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=4e-3)
output = model(X_train[:args.batch_size])
loss = F.mse_loss(output, Y_train[:args.batch_size])
loss.backward()
optimizer.step()
