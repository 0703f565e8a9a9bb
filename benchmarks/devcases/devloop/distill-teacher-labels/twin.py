# -*- coding: utf-8 -*-
"""HoyTta0/KnowledgeDistillation teacher.py before the fix, minimised (the BERT teacher is a
small stand-in, sklearn's metrics are numpy)."""
import time
import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np
from torch.utils.data import DataLoader, TensorDataset


class Config(object):
    def __init__(self):
        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
        self.teacher_num_epochs = 1
        self.learning_rate = 5e-4
        self.require_improvement = 1000
        self.num_classes = 3
        self.hidden_size = 16


class Model(nn.Module):
    def __init__(self, config):
        super(Model, self).__init__()
        self.embedding = nn.Embedding(100, config.hidden_size)
        self.fc = nn.Linear(config.hidden_size, config.num_classes)

    def forward(self, ids, mask):
        out = self.embedding(ids) * mask.unsqueeze(-1)
        return self.fc(out.mean(1))


def teacher_train(model, config, train_loader, test_loader):
    start_time = time.time()
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    total_batch = 0  # 记录进行到多少batch
    dev_best_loss = float('inf')
    last_improve = 0
    flag = False
    model.train()
    for epoch in range(config.teacher_num_epochs):
        print('Epoch [{}/{}]'.format(epoch + 1, config.teacher_num_epochs))
        for i, (ids, mask , labels) in enumerate(train_loader):
            ids = ids.to(config.device)
            mask = mask.to(config.device)
            labels = labels.to(config.device)
            outputs = model(ids, mask)
            model.zero_grad()
            loss = F.cross_entropy(outputs, labels)
            loss.backward()
            optimizer.step()
            if total_batch % 10 == 0:
                true = labels.data.cpu()
                predic = torch.max(outputs.data, 1)[1].cpu()
                train_acc = (true == predic).float().mean().item()
                dev_acc, dev_loss = teacher_evaluate(model, config, test_loader)
                if dev_loss < dev_best_loss:
                    dev_best_loss = dev_loss
                    last_improve = total_batch
                print('Iter: {0:>6},  Train Loss: {1:>5.2},  Train Acc: {2:>6.2%},  Val Loss: {3:>5.2},  Val Acc: {4:>6.2%}'.format(
                    total_batch, loss.item(), train_acc, dev_loss, dev_acc))
                model.train()
            total_batch += 1
            if total_batch - last_improve > config.require_improvement:
                print("No optimization for a long time, auto-stopping...")
                flag = True
                break
        if flag:
            break


def teacher_evaluate(model, config, test_loader, test=False):
    model.eval()
    loss_total = 0
    predict_all = np.array([], dtype=int)
    labels_all = np.array([], dtype=int)
    with torch.no_grad():
        for ids, mask , labels in test_loader:
            ids = ids.to(config.device)
            mask = mask.to(config.device)
            labels = labels.to(config.device)
            outputs = model(ids, mask)
            loss = F.cross_entropy(outputs, labels)
            loss_total += loss
            labels = labels.data.cpu().numpy()
            predic = torch.max(outputs.data, 1)[1].cpu().numpy()
            labels_all = np.append(labels_all, labels)
            predict_all = np.append(predict_all, predic)
    acc = float((labels_all == predict_all).mean())
    return acc, loss_total / len(test_loader)


if __name__ == '__main__':
    config = Config()
    data = TensorDataset(torch.randint(0, 100, (24, 8)), torch.ones(24, 8),
                         torch.randint(0, 3, (24,)))
    train_loader = DataLoader(data, batch_size=8)
    test_loader = DataLoader(data, batch_size=8)
    model = Model(config).to(config.device)
    teacher_train(model, config, train_loader, test_loader)
