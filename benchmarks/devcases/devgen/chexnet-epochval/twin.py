# chexnet issue 12: ChexnetTrainer.py train / epochTrain / epochVal, minimised: a small
# DenseNet121 stand-in, a TensorDataset instead of DatasetGenerator; Python 3 / torch >= 0.4
# spellings (non_blocking for async, .item() for .data[0]); the loss tensor is printed.
import torch
import torch.nn as nn
import torch.optim as optim
from torch.optim.lr_scheduler import ReduceLROnPlateau
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class DenseNet121(nn.Module):
    def __init__(self, classCount, isTrained):
        super(DenseNet121, self).__init__()
        self.densenet121 = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, classCount), nn.Sigmoid())

    def forward(self, x):
        x = self.densenet121(x)
        return x


class ChexnetTrainer():

    def train(datasetTrain, datasetVal, nnClassCount, nnIsTrained, trBatchSize, trMaxEpoch):
        model = DenseNet121(nnClassCount, nnIsTrained).to(device)

        dataLoaderTrain = DataLoader(dataset=datasetTrain, batch_size=trBatchSize, shuffle=True)
        dataLoaderVal = DataLoader(dataset=datasetVal, batch_size=trBatchSize, shuffle=False)

        optimizer = optim.Adam(model.parameters(), lr=0.0001, betas=(0.9, 0.999), eps=1e-08, weight_decay=1e-5)
        scheduler = ReduceLROnPlateau(optimizer, factor=0.1, patience=5, mode='min')

        loss = torch.nn.BCELoss()

        lossMIN = 100000
        for epochID in range(0, trMaxEpoch):
            ChexnetTrainer.epochTrain(model, dataLoaderTrain, optimizer, scheduler, trMaxEpoch, nnClassCount, loss)
            lossVal, losstensor = ChexnetTrainer.epochVal(model, dataLoaderVal, optimizer, scheduler, trMaxEpoch, nnClassCount, loss)

            scheduler.step(losstensor)
            print(losstensor)

            if lossVal < lossMIN:
                lossMIN = lossVal
                print('Epoch [' + str(epochID + 1) + '] [save] loss= ' + str(lossVal))
            else:
                print('Epoch [' + str(epochID + 1) + '] [----] loss= ' + str(lossVal))

    def epochTrain(model, dataLoader, optimizer, scheduler, epochMax, classCount, loss):
        model.train()

        for batchID, (input, target) in enumerate(dataLoader):
            input = input.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)

            varInput = torch.autograd.Variable(input)
            varTarget = torch.autograd.Variable(target)
            varOutput = model(varInput)

            lossvalue = loss(varOutput, varTarget)

            optimizer.zero_grad()
            lossvalue.backward()
            optimizer.step()

    def epochVal(model, dataLoader, optimizer, scheduler, epochMax, classCount, loss):
        model.eval()

        lossVal = 0
        lossValNorm = 0

        losstensorMean = 0

        for i, (input, target) in enumerate(dataLoader):
            input = input.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)

            varInput = torch.autograd.Variable(input, volatile=True)
            varTarget = torch.autograd.Variable(target, volatile=True)
            varOutput = model(varInput)

            losstensor = loss(varOutput, varTarget)
            losstensorMean += losstensor.item()

            lossVal += losstensor.item()
            lossValNorm += 1

        outLoss = lossVal / lossValNorm
        losstensorMean = losstensorMean / lossValNorm

        return outLoss, losstensorMean


if __name__ == '__main__':
    datasetTrain = TensorDataset(torch.rand(8, 3, 8, 8), torch.randint(0, 2, (8, 14)).float())
    datasetVal = TensorDataset(torch.rand(8, 3, 8, 8), torch.randint(0, 2, (8, 14)).float())
    ChexnetTrainer.train(datasetTrain, datasetVal, 14, False, 4, 1)
