# SSGC pull request 7 ("fix the different device": "add .item() on validation acc and loss",
# solving "RuntimeError: Expected all tensors to be on the same device, but found at least two
# devices, cuda:0 and cpu!" at `if best_acc_val < acc_val:` with `best_acc_val =
# torch.zeros((1))`): citation_cora.py's train_regression and test_regression with
# metrics.py's accuracy and models.py's SGC / get_model, minimised: random features and labels
# (moved as load_citation(..., cuda) moves them) replace Cora and the SSGC precomputation.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from time import perf_counter


def accuracy(output, labels):
    preds = output.max(1)[1].type_as(labels)
    correct = preds.eq(labels).double()
    correct = correct.sum()
    return correct / len(labels)


class SGC(nn.Module):
    def __init__(self, nfeat, nclass):
        super(SGC, self).__init__()
        self.W = nn.Linear(nfeat, nclass)

    def forward(self, x):
        return self.W(x)


def get_model(model_opt, nfeat, nclass, cuda=True):
    model = SGC(nfeat=nfeat, nclass=nclass)
    if cuda: model.cuda()
    return model


def train_regression(model, train_features, train_labels, val_features, val_labels,
                     epochs=3, weight_decay=5e-6, lr=0.2):
    optimizer = optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    t = perf_counter()
    best_acc_val = torch.zeros((1))
    best_loss_val = 100.
    best_model = None
    for epoch in range(epochs):
        model.train()
        optimizer.zero_grad()
        output = model(train_features)
        loss_train = F.cross_entropy(output, train_labels)
        loss_train.backward()
        optimizer.step()
        with torch.no_grad():
            model.eval()
            output = model(val_features)
            acc_val = accuracy(output, val_labels)
            loss_val = F.cross_entropy(output, val_labels)
            if best_acc_val < acc_val:
                 best_acc_val = acc_val
            if best_loss_val > loss_val:
                best_loss_val = loss_val
                best_model = model
    train_time = perf_counter()-t
    return best_model, best_acc_val, train_time


def test_regression(model, test_features, test_labels):
    model.eval()
    return accuracy(model(test_features), test_labels)


if __name__ == "__main__":
    cuda = torch.cuda.is_available()
    features = torch.randn(30, 8)
    labels = torch.randint(0, 3, (30,))
    idx_train, idx_val, idx_test = torch.arange(0, 10), torch.arange(10, 20), torch.arange(20, 30)
    if cuda:
        features, labels = features.cuda(), labels.cuda()
        idx_train, idx_val, idx_test = idx_train.cuda(), idx_val.cuda(), idx_test.cuda()
    model = get_model("SGC", features.size(1), labels.max().item()+1, cuda)
    model, acc_val, train_time = train_regression(model, features[idx_train], labels[idx_train],
                                                  features[idx_val], labels[idx_val])
    acc_test = test_regression(model, features[idx_test], labels[idx_test])
    print("Validation Accuracy: {:.4f} Test Accuracy: {:.4f}".format(float(acc_val), acc_test))
