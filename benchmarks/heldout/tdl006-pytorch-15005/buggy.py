import numpy as np
import torch
import torch.nn as nn

num_classes = [5, 2, 10, 3]


class test(nn.Module):
    def __init__(self, input_features):
        super(test, self).__init__()
        self.softmaxes = []
        for i in range(4):
            self.softmaxes.append(nn.Linear(input_features, num_classes[i]))

    def forward(self, batch_in):
        batch_in = torch.FloatTensor(batch_in).to(self.device)
        classify = []
        for i in range(4):
            classify.append(self.softmaxes[i](batch_in))
        return classify


if __name__ == "__main__":
    input_features = 100
    X_train = np.random.rand(32, input_features)
    model = test(input_features)
    model.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model.to(model.device)
    outputs = model(X_train)
    print([o.shape for o in outputs])
