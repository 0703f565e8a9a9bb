"""main.py on a machine with CUDA: trains, then saves the whole model as it is, on the GPU."""
import torch

import model

net = model.RNNModel('GRU', 50, 8, 8, 1).to(torch.device("cuda"))
with open('model.pt', 'wb') as f:
    torch.save(net, f)
