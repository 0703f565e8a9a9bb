# packnet-sfm issue 47 (fixed by pull request 51, which detaches output['loss'] before appending):
# trainers/horovod_trainer.py's train loop, which keeps every step's output dict for
# training_epoch_end, with models/model_wrapper.py's training_step/training_epoch_end and
# utils/reduce.py's averaging, minimised: no horovod (a plain optimizer, no allreduce), a toy
# depth model with one metric, random samples; the epoch-end average is printed before .item().
from collections import OrderedDict

import torch
import torch.nn as nn


def sample_to_cuda(data, dtype=None):
    if isinstance(data, str):
        return data
    elif isinstance(data, dict):
        return {key: sample_to_cuda(data[key], dtype) for key in data.keys()}
    elif isinstance(data, list):
        return [sample_to_cuda(val, dtype) for val in data]
    else:
        # only convert floats (e.g., to half), otherwise preserve (e.g, ints)
        dtype = dtype if torch.is_floating_point(data) else None
        return data.to('cuda', dtype=dtype)


def average_key(batch_list, key):
    values = [batch[key] for batch in batch_list]
    return sum(values) / len(values)


def average_sub_key(batch_list, key, sub_key):
    values = [batch[key][sub_key] for batch in batch_list]
    return sum(values) / len(values)


def average_loss_and_metrics(batch_list, prefix):
    values = OrderedDict()
    key = 'loss'
    values['{}-{}'.format(prefix, key)] = \
        average_key(batch_list, key)
    key = 'metrics'
    for sub_key in batch_list[0][key].keys():
        values['{}-{}'.format(prefix, sub_key)] = \
            average_sub_key(batch_list, key, sub_key)
    return values


def reduce_dict(data, to_item=False):
    for key, val in data.items():
        if to_item:
            data[key] = data[key].item()
    return data


class AvgMeter:
    def __init__(self, n_max=100):
        self.n_max = n_max
        self.values = []

    def __call__(self, value):
        self.values.append(value)
        if len(self.values) > self.n_max:
            self.values.pop(0)
        return sum(self.values) / len(self.values)


class SelfSupModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.depth_net = nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, batch):
        inv_depth = torch.sigmoid(self.depth_net(batch['rgb']))
        loss = ((inv_depth - batch['depth']) ** 2).mean()
        # losses keep their metrics detached (LossBase.add_metric)
        return {'loss': loss, 'metrics': {'abs_rel': (inv_depth - batch['depth']).abs().mean().detach()}}


class ModelWrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = SelfSupModel()
        self.current_epoch = 0

    def training_step(self, batch, *args):
        """Processes a training batch."""
        output = self.model(batch)
        return {
            'loss': output['loss'],
            'metrics': output['metrics']
        }

    def training_epoch_end(self, output_batch):
        """Finishes a training epoch."""

        # Calculate and reduce average loss and metrics per GPU
        loss_and_metrics = average_loss_and_metrics(output_batch, 'avg_train')
        print(loss_and_metrics)
        loss_and_metrics = reduce_dict(loss_and_metrics, to_item=True)

        return {
            **loss_and_metrics
        }


class HorovodTrainer:
    def __init__(self, max_epochs=1):
        self.max_epochs = max_epochs
        self.avg_loss = AvgMeter(50)

    def train_progress_bar(self, dataloader):
        return enumerate(dataloader)

    def fit(self, module, dataloader):
        # Send module to GPU
        module = module.to('cuda')
        optimizer = torch.optim.Adam(module.parameters(), lr=1e-3)
        for epoch in range(module.current_epoch, self.max_epochs):
            # Train
            print(self.train(dataloader, module, optimizer))
            module.current_epoch += 1

    def train(self, dataloader, module, optimizer):
        # Set module to train
        module.train()
        # Prepare progress bar
        progress_bar = self.train_progress_bar(dataloader)
        # Start training loop
        outputs = []
        # For all batches
        for i, batch in progress_bar:
            # Reset optimizer
            optimizer.zero_grad()
            # Send samples to GPU and take a training step
            batch = sample_to_cuda(batch)
            output = module.training_step(batch, i)
            # Backprop through loss and take an optimizer step
            output['loss'].backward()
            optimizer.step()
            # Append output to list of outputs
            outputs.append(output)
            print('Epoch {} | Avg.Loss {:.4f}'.format(module.current_epoch,
                  self.avg_loss(output['loss'].item())))
        # Return outputs for epoch end
        return module.training_epoch_end(outputs)


if __name__ == '__main__':
    dataloader = torch.utils.data.DataLoader(
        [{'rgb': torch.rand(3, 8, 8), 'depth': torch.rand(1, 8, 8)} for _ in range(6)], batch_size=2)
    HorovodTrainer(max_epochs=1).fit(ModelWrapper(), dataloader)
