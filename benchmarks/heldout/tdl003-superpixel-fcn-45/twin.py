import argparse
import torch
import torch.nn as nn

parser = argparse.ArgumentParser(description='PyTorch SPixelNet inference on a folder of imgs')
parser.add_argument('--pretrained', metavar='PTH', default='SpixelNet_bsd_ckpt.tar')
parser.add_argument('--downsize', default=16, type=float)
args = parser.parse_args()


class SpixelNet(nn.Module):
    def __init__(self, data=None):
        super(SpixelNet, self).__init__()
        self.conv0 = nn.Conv2d(3, 9, 3, padding=1)
        if data is not None:
            self.load_state_dict(data['state_dict'])

    def forward(self, x):
        return torch.softmax(self.conv0(x), dim=1)


@torch.no_grad()
def main():
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    network_data = torch.load(args.pretrained, map_location=device)
    print("=> using pre-trained model '{}'".format(network_data['arch']))
    model = SpixelNet(data=network_data).to(device)
    model.eval()
    img = torch.rand(1, 3, 32, 32).to(device)
    print(model(img).shape)


if __name__ == '__main__':
    main()
