import os
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        self.conv = nn.Conv1d(24, 24, 5, padding=2)

    def forward(self, x):
        return self.conv(x)


class CycleGANTraining(object):
    def __init__(self, restart_training_at=None):
        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
        self.generator_A2B = Generator().to(self.device)
        self.generator_B2A = Generator().to(self.device)
        self.generator_optimizer = torch.optim.Adam(
            list(self.generator_A2B.parameters()) + list(self.generator_B2A.parameters()), lr=2e-4)
        if restart_training_at is not None:
            self.start_epoch = self.loadModel(restart_training_at)
        else:
            self.start_epoch = 0

    def loadModel(self, PATH):
        checkPoint = torch.load(PATH, map_location=self.device)
        self.generator_A2B.load_state_dict(state_dict=checkPoint['model_genA2B_state_dict'])
        self.generator_B2A.load_state_dict(state_dict=checkPoint['model_genB2A_state_dict'])
        self.generator_optimizer.load_state_dict(checkPoint['generator_optimizer'])
        epoch = int(checkPoint['epoch']) + 1
        return epoch


if __name__ == '__main__':
    cycleGAN = CycleGANTraining(restart_training_at=os.path.join('model_checkpoint', '_CycleGAN_CheckPoint'))
    print(cycleGAN.start_epoch)
