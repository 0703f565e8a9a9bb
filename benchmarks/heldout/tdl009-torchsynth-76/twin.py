import torch
import torch.nn as nn


class Noise(nn.Module):
    def __init__(self, batch_size, buffer_size, device):
        super().__init__()
        self.batch_size = batch_size
        self.buffer_size = buffer_size
        self.device = device

    def output(self):
        noise = torch.rand(self.batch_size, self.buffer_size, device=self.device)
        return noise.mul(2.0).sub(1.0)


class ADSR(nn.Module):
    def __init__(self, batch_size, buffer_size, device):
        super().__init__()
        self.batch_size = batch_size
        self.buffer_size = buffer_size
        self.device = device

    def output(self, note_on_duration):
        ramp = torch.linspace(0.0, 1.0, self.buffer_size, device=self.device)
        return ramp.unsqueeze(0).expand(self.batch_size, -1) * note_on_duration


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
noise = Noise(2, 64, device)
env = ADSR(2, 64, device)
print((noise.output() * env.output(0.5)).shape)
