# SO-Net issue 41: util/visualizer.py plot_current_errors (visdom call replaced by the
# print the report's traceback shows), with the model's get_current_errors, minimised.
import time
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn


class Model():
    def __init__(self, opt):
        self.opt = opt
        self.encoder = nn.Linear(6, 4).to(opt.device)
        self.softmax_criteria = nn.CrossEntropyLoss().to(opt.device)
        self.optimizer = torch.optim.Adam(self.encoder.parameters(), lr=1e-3)
        self.loss = None
        self.train_accuracy = None

    def set_input(self, input_pc, input_label):
        self.input_pc = input_pc.to(self.opt.device)
        self.input_label = input_label.to(self.opt.device)

    def optimize(self):
        self.score_segmenter = self.encoder(self.input_pc)
        self.loss = self.softmax_criteria(self.score_segmenter, self.input_label)
        self.optimizer.zero_grad()
        self.loss.backward()
        self.optimizer.step()
        _, predicted_seg = torch.max(self.score_segmenter.data, dim=1, keepdim=False)
        correct_mask = torch.eq(predicted_seg, self.input_label).float()
        self.train_accuracy = torch.mean(correct_mask)

    def get_current_errors(self):
        return OrderedDict([
            ('train_loss', self.loss.data),
            ('train_accuracy', self.train_accuracy),
        ])


class Visualizer():
    def __init__(self, opt):
        self.name = opt.name

    # errors: dictionary of error labels and values
    def plot_current_errors(self, epoch, counter_ratio, opt, errors):
        if not hasattr(self, 'plot_data'):
            self.plot_data = {'X':[],'Y':[], 'legend':list(errors.keys())}
        self.plot_data['X'].append(epoch + counter_ratio)
        self.plot_data['Y'].append([errors[k] for k in self.plot_data['legend']])
        print(np.array(self.plot_data['Y']))


class Options():
    name = 'train'
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


if __name__ == '__main__':
    opt = Options()
    model = Model(opt)
    visualizer = Visualizer(opt)
    dataset = [(torch.randn(8, 6), torch.randint(0, 4, (8,))) for _ in range(3)]
    dataset_size = len(dataset)
    for epoch in range(2):
        epoch_iter = 0
        for i, data in enumerate(dataset):
            epoch_iter += 1
            input_pc, input_label = data
            model.set_input(input_pc, input_label)
            model.optimize()
            errors = model.get_current_errors()
            visualizer.plot_current_errors(epoch, float(epoch_iter) / dataset_size, opt, errors)
