import torch as th


class config:
    WORD_VEC_SIZE = 16


class Net(th.nn.Module):
    def __init__(self):
        super(Net, self).__init__()

        self.conv1d = [
            th.nn.Conv1d(config.WORD_VEC_SIZE, 1, 3),
            th.nn.Conv1d(config.WORD_VEC_SIZE, 1, 4),
            th.nn.Conv1d(config.WORD_VEC_SIZE, 1, 5),
        ]
        self.out = th.nn.Linear(3, 2)

    def forward(self, x):
        feats = [conv(x).max(dim=2)[0] for conv in self.conv1d]
        return self.out(th.cat(feats, dim=1))


a = Net()
if th.cuda.is_available():
    a.cuda()
    x = th.randn(2, config.WORD_VEC_SIZE, 12).cuda()
else:
    x = th.randn(2, config.WORD_VEC_SIZE, 12)
print(a(x).shape)
