import numpy as np
import torch
import torch.nn as nn


class RetinaHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.cls = nn.Conv2d(3, 2, 3, padding=1)
        self.reg = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, img):
        scores = torch.sigmoid(self.cls(img)).amax(dim=(1, 2, 3))
        boxes = self.reg(img).mean(dim=(2, 3))
        return scores, torch.zeros_like(scores), boxes


def detect(model, image):
    model.eval()
    with torch.no_grad():
        img = torch.from_numpy(image).permute(2, 0, 1).unsqueeze(0).float()
        if torch.cuda.is_available():
            img = img.cuda()
        scores, classification, transformed_anchors = model(img)
        scores = scores.cpu().numpy()
        idxs = np.where(scores > 0.5)
        return transformed_anchors[idxs[0], :]


model = RetinaHead()
if torch.cuda.is_available():
    model = model.cuda()
print(detect(model, np.random.rand(16, 16, 3)).shape)
