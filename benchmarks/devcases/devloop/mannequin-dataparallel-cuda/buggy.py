"""google/mannequinchallenge models/pix2pix_model.py and test script 2dtodepth.py, minimised (the
hourglass network is a small stand-in, its weights are not loaded)."""
import argparse
import sys

import torch
import torch.nn as nn


class HourglassModel(nn.Module):
    def __init__(self, num_input):
        super(HourglassModel, self).__init__()
        self.seq = nn.Sequential(nn.Conv2d(num_input, 8, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(8, 1, 3, padding=1))

    def forward(self, input_):
        return self.seq(input_)


class BaseModel():
    def name(self):
        return 'BaseModel'

    def initialize(self, opt):
        self.opt = opt
        self.isTrain = opt.isTrain


class Pix2PixModel(BaseModel):

    def name(self):
        return 'Pix2PixModel'

    def __init__(self, opt, _isTrain=False):
        self.initialize(opt)

        self.mode = opt.mode
        self.num_input = opt.input_nc

        if self.mode == 'Ours_Bilinear':
            print(
                '======================================  DIW NETWORK TRAIN FROM %s======================='
                % self.mode)

            new_model = HourglassModel(self.num_input)

            new_model = torch.nn.parallel.DataParallel(
                new_model.cuda(), device_ids=range(torch.cuda.device_count()))

            self.netG = new_model

        else:
            print('ONLY SUPPORT Ours_Bilinear')
            sys.exit()

        self.old_lr = opt.lr
        self.netG.train()

        self.optimizer_G = torch.optim.Adam(
            self.netG.parameters(), lr=opt.lr, betas=(0.9, 0.999))
        print('---------- Networks initialized -------------')


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--mode', default='Ours_Bilinear')
    parser.add_argument('--input_nc', type=int, default=3)
    parser.add_argument('--lr', type=float, default=0.0004)
    opt = parser.parse_args()
    opt.isTrain = False
    model = Pix2PixModel(opt)
    print(model.name())
