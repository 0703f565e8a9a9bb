# SANet issue 4 (the reporter's fix: mse = mse.cpu().numpy() before np.sqrt): train.py's validate,
# which sums squared count errors of GPU tensors over the patches of each test image, minimised:
# random patches and density maps replace dataset.listDataset, a one-layer SANet, validation only,
# print instead of log_print/tensorboard.
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable


class SANet(nn.Module):
    def __init__(self):
        super(SANet, self).__init__()
        self.density = nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.density(x))


class listDataset(torch.utils.data.Dataset):
    """Each test image is cut into patches: an item is the list of patches and their maps."""

    def __init__(self, n_images, patch_num=4):
        self.n_images = n_images
        self.patch_num = patch_num

    def __len__(self):
        return self.n_images

    def __getitem__(self, index):
        img_list = [torch.rand(3, 16, 16) for _ in range(self.patch_num)]
        target_list = [torch.rand(16, 16) for _ in range(self.patch_num)]
        return img_list, target_list


def validate(val_list, model, criterion, epoch):
    print('begin val')
    test_loader = torch.utils.data.DataLoader(listDataset(val_list), batch_size=1)

    model.eval()

    mae = 0
    mse = 0

    for i, (img_list, target_list) in enumerate(test_loader):

        patch_num = len(img_list)

        for j, patch in enumerate(img_list):

            img = img_list[j]
            target = target_list[j]

            img = img.cuda()
            img = Variable(img)
            with torch.no_grad():
                output = model(img)
            gt_count = target.sum().type(torch.FloatTensor).cuda()
            et_count = output.data.sum()

            mae += abs(gt_count-et_count)
            mse += ((gt_count-et_count)*(gt_count-et_count))

    mae = mae/(len(test_loader)*patch_num)
    mse = mse.cpu().numpy()
    mse = np.sqrt(mse/(len(test_loader)*patch_num))

    if epoch%2==0:
        log_text = ' * MAE {mae:.3f}--MSE {mse:.3f} '.format(mae=mae,mse=mse)
        print(log_text)

    return mae


def main():
    model = SANet()
    model = model.cuda()
    criterion = nn.MSELoss(reduction='sum').cuda()
    prec1 = validate(3, model, criterion, 0)
    print(prec1)


if __name__ == '__main__':
    main()
