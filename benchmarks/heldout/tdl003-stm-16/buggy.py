import argparse
import torch
import torch.nn as nn


def get_arguments():
    parser = argparse.ArgumentParser(description="SST")
    parser.add_argument("-g", type=str, help="0; 0,1; 0,3; etc", default='0')
    parser.add_argument("-s", type=str, help="set", default='val')
    return parser.parse_args()


class STM(nn.Module):
    def __init__(self):
        super(STM, self).__init__()
        self.key = nn.Conv2d(4, 8, 3, padding=1)

    def forward(self, frame):
        return self.key(frame)


args = get_arguments()
model = nn.DataParallel(STM())
if torch.cuda.is_available():
    model.cuda()
model.eval()

pth_path = 'STM_weights.pth'
print('Loading weights:', pth_path)
model.load_state_dict(torch.load(pth_path))

with torch.no_grad():
    frame = torch.rand(1, 4, 16, 16)
    if torch.cuda.is_available():
        frame = frame.cuda()
    print(model(frame).shape)
