import math
import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def EvalTestset(test_x, test_y, model, test_batch_size, test_x_opt=None):
    test_len = test_x.shape[0]
    test_num_batch = math.ceil(test_len / test_batch_size)
    sum_loss = 0.0
    y_preds = []
    model.eval()
    with torch.no_grad():
        for jdx in range(test_num_batch):
            tst_st = jdx * test_batch_size
            tst_ed = min(test_len, tst_st + test_batch_size)
            inputs = torch.from_numpy(test_x[tst_st:tst_ed].astype(np.float32)).to(device)
            targets = torch.from_numpy(test_y[tst_st:tst_ed]).to(device)
            outputs = model(inputs)
            y_preds.append(outputs.data.cpu().numpy())
            sum_loss += nn.functional.mse_loss(outputs, targets).item() * (tst_ed - tst_st)
    return sum_loss / test_len, np.concatenate(y_preds, 0)


model = nn.Linear(6, 1).to(device)
test_x = np.random.rand(10, 6)
test_y = np.random.rand(10, 1).astype(np.float32)
test_loss, pred_y = EvalTestset(test_x, test_y, model, 4)
print(test_loss, pred_y.shape)
