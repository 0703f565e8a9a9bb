# ultralytics-YOLOv3-Cluster-NMS issue 6: utils/utils.py build_targets and models.py's
# YOLOLayer grids, minimised.
import torch
import torch.nn as nn


def create_grids(self, img_size=416, ng=(13, 13), device='cpu', type=torch.float32):
    nx, ny = ng  # x and y grid size
    self.img_size = img_size
    self.stride = img_size / max(ng)

    # build offsets
    yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing='ij')
    self.grid_xy = torch.stack((xv, yv), 2).to(device).type(type).view((1, 1, ny, nx, 2))

    # build wh gains
    self.anchor_vec = self.anchors.to(device) / self.stride
    self.anchor_wh = self.anchor_vec.view(1, self.na, 1, 1, 2).to(device).type(type)
    self.ng = torch.Tensor(ng).to(device)
    self.nx = nx
    self.ny = ny


class YOLOLayer(nn.Module):
    def __init__(self, anchors, nc, img_size):
        super(YOLOLayer, self).__init__()
        self.anchors = torch.Tensor(anchors)
        self.na = len(anchors)  # number of anchors (3)
        self.nc = nc  # number of classes (80)
        self.no = nc + 5  # number of outputs (85)
        self.nx = 0  # initialize number of x gridpoints
        self.ny = 0  # initialize number of y gridpoints
        create_grids(self, img_size, (img_size // 32, img_size // 32))

    def forward(self, p, img_size):
        bs, _, ny, nx = p.shape  # bs, 255, 13, 13
        if (self.nx, self.ny) != (nx, ny):
            create_grids(self, img_size, (nx, ny), p.device, p.dtype)
        return p.view(bs, self.na, self.no, self.ny, self.nx).permute(0, 1, 3, 4, 2).contiguous()


class Darknet(nn.Module):
    def __init__(self, img_size=64):
        super(Darknet, self).__init__()
        self.module_list = nn.ModuleList([nn.Conv2d(3, 3 * 7, 32, 32), YOLOLayer([[10, 13], [16, 30], [33, 23]], 2, img_size)])
        self.yolo_layers = [1]

    def forward(self, x):
        img_size = x.shape[-1]
        return [self.module_list[1](self.module_list[0](x), img_size)]


def build_targets(model, targets):
    # targets = [image, class, x, y, w, h]

    nt = len(targets)
    tcls, tbox, indices, av = [], [], [], []
    multi_gpu = type(model) in (nn.parallel.DataParallel, nn.parallel.DistributedDataParallel)
    for i in model.yolo_layers:
        # get number of grid points and anchor vec for this yolo layer
        if multi_gpu:
            ng, anchor_vec = model.module.module_list[i].ng, model.module.module_list[i].anchor_vec
        else:
            ng, anchor_vec = model.module_list[i].ng, model.module_list[i].anchor_vec

        # iou of targets-anchors
        t, a = targets, []
        gwh = t[:, 4:6] * ng
        tbox.append(gwh)
        av.append(anchor_vec)

    return tcls, tbox, indices, av


if __name__ == '__main__':
    device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
    model = Darknet().to(device)
    imgs = torch.rand(2, 3, 64, 64).to(device)
    targets = torch.tensor([[0, 1, 0.5, 0.5, 0.2, 0.3]]).to(device)
    # the loss is computed before the first forward: the grids are those of __init__
    tcls, tbox, indices, anchor_vec = build_targets(model, targets)
    pred = model(imgs)
    print(tbox[0], pred[0].shape)
