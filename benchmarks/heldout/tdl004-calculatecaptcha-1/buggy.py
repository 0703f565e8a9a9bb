import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')


def calculat_acc(output, target):
    output, target = output.view(-1, 10), target.view(-1, 10)
    output = nn.functional.softmax(output, dim=1)
    output = torch.argmax(output, dim=1)
    target = torch.argmax(target, dim=1)
    output, target = output.view(-1, 4), target.view(-1, 4)
    correct_list = []
    for i, j in zip(target, output):
        if torch.equal(i, j):
            correct_list.append(1)
        else:
            correct_list.append(0)
    acc = sum(correct_list) / len(correct_list)
    return acc


def train():
    net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 16 * 16, 40)).to(device)
    criterion = nn.MultiLabelSoftMarginLoss()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    target = nn.functional.one_hot(torch.randint(0, 10, (8, 4)), 10).float().view(8, 40)
    train_dataloader = DataLoader(TensorDataset(torch.rand(8, 3, 16, 16), target), batch_size=4)
    for epoch in range(1):
        for img, target in train_dataloader:
            img = img.to(device)
            output = net(img)
            loss = criterion(output, target.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            acc = calculat_acc(output, target)
            print('epoch: {}, loss: {:.4f}, acc: {:.2f}'.format(epoch, loss.item(), acc))


train()
