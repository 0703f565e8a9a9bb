# yolor issue 113: utils/plots.py output_to_target, called from test.py, minimised.
import numpy as np
import torch
import torch.nn as nn


def select_device(device=''):
    return torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')


def non_max_suppression(prediction, conf_thres=0.1):
    output = [None] * prediction.shape[0]
    for xi, x in enumerate(prediction):
        x = x[x[:, 4] > conf_thres]
        conf, j = x[:, 5:].max(1, keepdim=True)
        output[xi] = torch.cat((x[:, :4], conf, j.float()), 1)
    return output


def output_to_target(output, width, height):
    # Convert model output to target format [batch_id, class_id, x, y, w, h, conf]
    if isinstance(output, torch.Tensor):
        output = output.cpu().numpy()

    targets = []
    for i, o in enumerate(output):
        if o is not None:
            for pred in o:
                box = pred[:4]
                w = (box[2] - box[0]) / width
                h = (box[3] - box[1]) / height
                x = box[0] / width + w / 2
                y = box[1] / height + h / 2
                conf = pred[4]
                cls = int(pred[5])

                targets.append([i, cls, x, y, w, h, conf])

    return np.array(targets)


def test(model, dataloader, device):
    model.eval()
    for batch_i, (img, targets) in enumerate(dataloader):
        img = img.to(device, non_blocking=True)
        nb, _, height, width = img.shape
        with torch.no_grad():
            inf_out = model(img).view(nb, -1, 7)
            output = non_max_suppression(inf_out, conf_thres=0.001)
        if batch_i < 3:
            plot_targets = output_to_target(output, width, height)
            print(plot_targets.shape)


if __name__ == '__main__':
    device = select_device()
    model = nn.Sequential(nn.Conv2d(3, 7, 4, 4), nn.Sigmoid()).to(device)
    dataloader = [(torch.rand(2, 3, 8, 8), torch.zeros(0, 6)) for _ in range(2)]
    test(model, dataloader, device)
