"""TreB1eN/InsightFace_Pytorch Learner.py, config.py and face_verify.py, minimised (the backbone
and the head are small stand-ins; the inference path, as face_verify.py runs it)."""
from pathlib import Path

import torch
import torch.nn as nn


class edict(dict):  # easydict.EasyDict
    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__


def get_config(training=True):
    conf = edict()
    conf.work_path = Path('work_space/')
    conf.model_path = conf.work_path/'models'
    conf.save_path = conf.work_path/'save'
    conf.embedding_size = 16
    conf.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    conf.threshold = 1.5
    return conf


class face_learner(object):
    def __init__(self, conf, inference=False):
        print(conf)
        self.model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, conf.embedding_size)).to(conf.device)
        print('model generated')
        if inference:
            self.threshold = conf.threshold

    def load_state(self, conf, fixed_str, from_save_folder=False, model_only=False):
        if from_save_folder:
            save_path = conf.save_path
        else:
            save_path = conf.model_path
        self.model.load_state_dict(torch.load(save_path/'model_{}'.format(fixed_str), map_location=conf.device))
        if not model_only:
            self.head.load_state_dict(torch.load(save_path/'head_{}'.format(fixed_str), map_location=conf.device))
            self.optimizer.load_state_dict(torch.load(save_path/'optimizer_{}'.format(fixed_str), map_location=conf.device))


if __name__ == '__main__':
    conf = get_config(False)
    learner = face_learner(conf, True)
    learner.threshold = 1.54
    learner.load_state(conf, 'cpu_final.pth', True, True)
    learner.model.eval()
    print('learner loaded')
    with torch.no_grad():
        print(learner.model(torch.rand(2, 3, 8, 8).to(conf.device)).shape)
