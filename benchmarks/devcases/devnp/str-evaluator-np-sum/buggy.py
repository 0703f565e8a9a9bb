# Scene-Text-Recognition-Recommendations issue 2: Framework/lib/evaluators.py, minimised.
import time

import numpy as np
import torch
import torch.nn as nn


class AttentionRecognizer(nn.Module):
    def __init__(self):
        super(AttentionRecognizer, self).__init__()
        self.encoder = nn.Linear(16, 8)
        self.criterion = nn.CrossEntropyLoss()

    def forward(self, input_dict):
        logits = self.encoder(input_dict['images'].flatten(1))
        loss = self.criterion(logits, input_dict['rec_targets'])
        return {'loss': {'loss_rec': loss}, 'output': {'pred_rec': logits.argmax(1)}}


class BaseEvaluator(object):
  def __init__(self, model, metric, use_cuda=True, loss_weights={}):
    super(BaseEvaluator, self).__init__()
    self.model = model
    self.metric = metric
    self.use_cuda = use_cuda
    self.device = torch.device("cuda" if use_cuda else "cpu")
    self.loss_weights = loss_weights

  def evaluate(self, data_loader, step=1, print_freq=1):
    self.model.eval()
    with torch.no_grad():
      # forward the network
      _, rec_output, targets, losses = [], [], [], []

      end = time.time()
      for i, inputs in enumerate(data_loader):
        input_dict = self._parse_data(inputs)
        output_dict = self._forward(input_dict)

        batch_size = input_dict['images'].size(0)

        total_loss_batch = 0.
        for k, loss in output_dict['loss'].items():
          total_loss_batch += self.loss_weights[k] * loss

        targets += inputs[1]
        losses.append(total_loss_batch)
        rec_output.append(output_dict['output']['pred_rec'].cpu())
        end = time.time()

      losses = np.sum(losses) / (1.0 * (len(data_loader)-1)*batch_size)
      rec_output = torch.cat(rec_output)
      print('loss: {0:.5f}'.format(losses))
      return rec_output, targets


class Evaluator(BaseEvaluator):
  def _parse_data(self, inputs):
    input_dict = {}
    imgs, label_encs = inputs
    images = imgs.to(self.device)
    input_dict['images'] = images
    input_dict['rec_targets'] = label_encs.to(self.device)
    return input_dict

  def _forward(self, input_dict):
    self.model.eval()
    with torch.no_grad():
      output_dict = self.model(input_dict)
    return output_dict


if __name__ == '__main__':
  use_cuda = torch.cuda.is_available()
  model = AttentionRecognizer()
  if use_cuda:
    model = model.cuda()
  test_loader = [(torch.randn(4, 1, 4, 4), torch.randint(0, 8, (4,))) for _ in range(3)]
  evaluator = Evaluator(model, 'accuracy', use_cuda, loss_weights={'loss_rec': 1.0})
  evaluator.evaluate(test_loader)
