# l2race issue 2 ("RuntimeError while Training on GPU": `self.rnn_cell[0](...)` in
# initialize_sequence, "Tensor for argument #3 'input_bias' is on CPU, but expected it to be on
# GPU"; fixed in commit d54024d, "Corrected saving of RNN layers as nn.ModuleList"):
# modeling/RNN0/utilis.py's get_device and Sequence (its __init__, reset and
# initialize_sequence) with Train.py's training step, minimised: the input/output name checks
# are left out and random sequences replace the recorded car data.
import torch
import torch.nn as nn

def get_device():
    if torch.cuda.is_available():
        device = torch.device('cuda:0')
    else:
        device = torch.device('cpu')
    return device

class Sequence(nn.Module):
    def __init__(self, rnn_name, inputs_list, outputs_list):
        super(Sequence, self).__init__()
        self.device = get_device()
        names = rnn_name.split('-')
        layers = ['H1', 'H2', 'H3', 'H4', 'H5']
        self.h_size = []  # Hidden layers sizes
        for name in names:
            for index, layer in enumerate(layers):
                if layer in name:
                    self.h_size.append(int(name[:-2]))
        if 'GRU' in names:
            self.rnn_type = 'GRU'
        elif 'LSTM' in names:
            self.rnn_type = 'LSTM'
        else:
            self.rnn_type = 'RNN-Basic'

        # Construct network
        if self.rnn_type == 'GRU':
            self.rnn_cell = [nn.GRUCell(len(inputs_list), self.h_size[0])]
            for i in range(len(self.h_size)-1):
                self.rnn_cell.append(nn.GRUCell(self.h_size[i], self.h_size[i+1]))
        elif self.rnn_type == 'LSTM':
            self.rnn_cell = [nn.LSTMCell(len(inputs_list), self.h_size[0])]
            for i in range(len(self.h_size)-1):
                self.rnn_cell.append(nn.LSTMCell(self.h_size[i], self.h_size[i+1]))
        else:
            self.rnn_cell = [nn.RNNCell(len(inputs_list), self.h_size[0])]
            for i in range(len(self.h_size)-1):
                self.rnn_cell.append(nn.RNNCell(self.h_size[i], self.h_size[i+1]))

        self.linear = nn.Linear(self.h_size[-1], len(outputs_list))  # RNN out

        self.sample_counter = 0
        self.h = [None]*len(self.h_size)
        self.c = [None]*len(self.h_size) # Internal state cell - only matters for LSTM
        self.output = None
        self.outputs = []

        # Send the whole RNN to GPU if available, otherwise send it to CPU
        self.to(self.device)
    def reset(self):
        self.sample_counter = 0
        self.h = [None]*len(self.h_size)
        self.c = [None] * len(self.h_size)
        self.output = None
        self.outputs = []
    def initialize_sequence(self, rnn_input, warm_up_len=256, stack_output=True, all_input=False):
        if not all_input:
            starting_input = rnn_input[:warm_up_len, :, :]
        else:
            starting_input = rnn_input

        # Initialize hidden layers - this change at every call as the batch size may vary
        for i in range(len(self.h_size)):
            self.h[i] = torch.zeros(starting_input.size(1), self.h_size[i], dtype=torch.float).to(self.device)
            self.c[i] = torch.zeros(starting_input.size(1), self.h_size[i], dtype=torch.float).to(self.device)

        for iteration, input_t in enumerate(starting_input.chunk(starting_input.size(0), dim=0)):
            if self.rnn_type == 'LSTM':
                self.h[0], self.c[0] = self.rnn_cell[0](input_t.squeeze(0), (self.h[0], self.c[0]))
                for i in range(len(self.h_size) - 1):
                    self.h[i + 1], self.c[i + 1] = self.rnn_cell[i + 1](self.h[i], (self.h[i + 1], self.c[i + 1]))
            else:
                self.h[0] = self.rnn_cell[0](input_t.squeeze(0), self.h[0])
                for i in range(len(self.h_size) - 1):
                    self.h[i+1] = self.rnn_cell[i+1](self.h[i], self.h[i + 1])
            self.output = self.linear(self.h[-1])
            self.outputs += [self.output]
            self.sample_counter = self.sample_counter + 1

        if stack_output:
            return torch.stack(self.outputs, 1)
        else:
            return self.output

if __name__ == '__main__':
    warm_up_len = 4
    net = Sequence(rnn_name='GRU-16H1-8H2', inputs_list=['dt', 'cmd.steering', 'speed'],
                   outputs_list=['pos.x', 'pos.y'])
    optimizer = torch.optim.Adam(net.parameters(), amsgrad=True, lr=1e-3)
    criterion = nn.MSELoss()
    train_generator = [(torch.randn(2, 3 * warm_up_len, 3), torch.randn(2, 3 * warm_up_len, 2))]
    for batch, labels in train_generator:
        net.reset()
        if torch.cuda.is_available():
            batch = batch.float().cuda().transpose(0, 1)
            labels = labels.float().cuda()
        else:
            batch = batch.float().transpose(0, 1)
            labels = labels.float()
        net.initialize_sequence(rnn_input=batch, warm_up_len=warm_up_len, all_input=False,
                                stack_output=False)
        optimizer.zero_grad()
        out = net.initialize_sequence(rnn_input=batch[:warm_up_len, :, :], warm_up_len=warm_up_len,
                                      all_input=False, stack_output=True)
        loss = criterion(out[:, warm_up_len: 2 * warm_up_len],
                         labels[:, warm_up_len: 2 * warm_up_len])
        loss.backward()
        optimizer.step()
        print(loss.item())
