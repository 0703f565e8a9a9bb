# FFDNet_pytorch issue 4: ffdnet.py train() (train and validation loops), with the model and
# utils.add_batch_noise as small stand-ins; image loading and patching are left out.
import argparse
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable
from torch.utils.data import DataLoader


class FFDNet(nn.Module):
    def __init__(self, is_gray):
        super(FFDNet, self).__init__()
        c = 1 if is_gray else 3
        self.conv = nn.Conv2d(c + 1, c, 3, padding=1)

    def forward(self, x, noise_sigma):
        noise_map = noise_sigma.view(x.shape[0], 1, 1, 1).repeat(1, 1, x.shape[2], x.shape[3])
        return self.conv(torch.cat((x, noise_map), 1))


def add_batch_noise(images, noise_sigma):
    new_images = images + torch.randn_like(images) * noise_sigma
    return new_images


def train(args, train_dataset, val_dataset):
    train_dataloader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True)
    val_dataloader = DataLoader(val_dataset, batch_size=args.batch_size, shuffle=False)

    train_noises = args.train_noise_interval
    val_noises = args.val_noise_interval
    train_noises = list(range(train_noises[0], train_noises[1], train_noises[2]))
    val_noises = list(range(val_noises[0], val_noises[1], val_noises[2]))

    model = FFDNet(is_gray=args.is_gray)
    if args.cuda:
        model = model.cuda()
    loss_fn = nn.MSELoss(reduction='sum')
    optimizer = optim.Adam(model.parameters(), lr=args.learning_rate)

    for epoch_idx in range(args.epoches):
        # Train
        loss_idx = 0
        train_losses = 0
        model.train()

        start_time = time.time()
        for batch_idx, batch_data in enumerate(train_dataloader):
            for int_noise_sigma in train_noises:
                noise_sigma = int_noise_sigma / 255
                new_images = add_batch_noise(batch_data, noise_sigma)
                noise_sigma = torch.FloatTensor(np.array([noise_sigma for idx in range(new_images.shape[0])]))
                new_images = Variable(new_images)
                noise_sigma = Variable(noise_sigma)
                if args.cuda:
                    new_images = new_images.cuda()
                    noise_sigma = noise_sigma.cuda()

                images_pred = model(new_images, noise_sigma)
                train_loss = loss_fn(images_pred, batch_data.to(images_pred.device))
                train_losses += float(train_loss)
                loss_idx += 1

                optimizer.zero_grad()
                train_loss.backward()
                optimizer.step()
                stop_time = time.time()

        train_losses /= loss_idx
        print(f', Avg_Train_Loss: {train_losses!r}, All: {int(stop_time - start_time)}s')

        # Evaluate
        loss_idx = 0
        val_losses = 0
        if (epoch_idx + 1) % args.val_epoch != 0:
            continue
        model.eval()

        start_time = time.time()
        for batch_idx, batch_data in enumerate(val_dataloader):
            for int_noise_sigma in val_noises:
                noise_sigma = int_noise_sigma / 255
                new_images = add_batch_noise(batch_data, noise_sigma)
                noise_sigma = torch.FloatTensor(np.array([noise_sigma for idx in range(new_images.shape[0])]))
                new_images = Variable(new_images)
                noise_sigma = Variable(noise_sigma)
                if args.cuda:
                    new_images = new_images.cuda()
                    noise_sigma = noise_sigma.cuda()

                images_pred = model(new_images, noise_sigma)
                val_loss = loss_fn(images_pred, batch_data.to(images_pred.device))
                val_losses += float(val_loss)
                loss_idx += 1
                stop_time = time.time()

        val_losses /= loss_idx
        print(f', Avg_Val_Loss: {val_losses!r}, All: {int(stop_time - start_time)}s')


if __name__ == "__main__":
    args = argparse.Namespace(batch_size=4, train_noise_interval=[0, 75, 15], val_noise_interval=[0, 60, 30],
                              is_gray=True, cuda=torch.cuda.is_available(), learning_rate=1e-3,
                              epoches=1, val_epoch=1)
    train_dataset = np.random.rand(8, 1, 8, 8).astype(np.float32)
    val_dataset = np.random.rand(8, 1, 8, 8).astype(np.float32)
    train(args, train_dataset, val_dataset)
