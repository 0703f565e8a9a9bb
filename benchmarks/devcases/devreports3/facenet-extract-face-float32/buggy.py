# timesler/facenet-pytorch pull request 228 ("TypeError: can't convert cuda:0 device type tensor to
# numpy. Use Tensor.cpu() to copy the tensor to host memory first.", isolated to
# models/utils/detect_face.py line 376, face = F.to_tensor(np.float32(face)), "When `face` is
# already a gpu tensor"; the fix, 787da06: a tensor face is only cast with face.float()):
# models/mtcnn.py (MTCNN.__init__, forward, detect, extract, fixed_image_standardization) and
# models/utils/detect_face.py (detect_face, imresample, crop_resize, get_size, extract_face) at
# 8ee5326, with a caller that hands MTCNN video frames already on the GPU, minimised: a one-conv
# PNet proposes a single box from its score map (no RNet/ONet stages, NMS or landmarks), a local
# to_tensor stands in for torchvision's F.to_tensor, no PIL or cv2 branches, no save_path.
import numpy as np
import torch
import torch.nn as nn
from torch.nn.functional import interpolate


def to_tensor(pic):
    # torchvision.transforms.functional.to_tensor of a float HxWxC ndarray
    return torch.from_numpy(pic.transpose((2, 0, 1))).contiguous()


def detect_face(imgs, minsize, pnet, threshold, device):
    if isinstance(imgs, (np.ndarray, torch.Tensor)):
        if isinstance(imgs, np.ndarray):
            imgs = torch.as_tensor(imgs.copy(), device=device)

        if isinstance(imgs, torch.Tensor):
            imgs = torch.as_tensor(imgs, device=device)

        if len(imgs.shape) == 3:
            imgs = imgs.unsqueeze(0)

    model_dtype = next(pnet.parameters()).dtype
    imgs = imgs.permute(0, 3, 1, 2).type(model_dtype)

    h, w = imgs.shape[2:4]
    reg, probs = pnet((imgs - 127.5) * 0.0078125)
    batch_boxes = []
    for b in range(len(imgs)):
        score = probs[b, 1]
        idx = score.flatten().argmax()
        y, x = idx // score.shape[1], idx % score.shape[1]
        box = torch.stack([x * 2.0, y * 2.0, x * 2.0 + minsize, y * 2.0 + minsize, score.flatten()[idx]])
        box[0:4:2] = box[0:4:2].clamp(0, w)
        box[1:4:2] = box[1:4:2].clamp(0, h)
        batch_boxes.append(box[None].cpu().numpy())
    return batch_boxes


def imresample(img, sz):
    im_data = interpolate(img, size=sz, mode="area")
    return im_data


def crop_resize(img, box, image_size):
    if isinstance(img, np.ndarray):
        raise NotImplementedError("cv2 branch left out")
    elif isinstance(img, torch.Tensor):
        img = img[box[1]:box[3], box[0]:box[2]]
        out = imresample(
            img.permute(2, 0, 1).unsqueeze(0).float(),
            (image_size, image_size)
        ).byte().squeeze(0).permute(1, 2, 0)
    return out


def get_size(img):
    if isinstance(img, (np.ndarray, torch.Tensor)):
        return img.shape[1::-1]
    else:
        return img.size


def extract_face(img, box, image_size=160, margin=0, save_path=None):
    """Extract face + margin from PIL Image given bounding box."""
    margin = [
        margin * (box[2] - box[0]) / (image_size - margin),
        margin * (box[3] - box[1]) / (image_size - margin),
    ]
    raw_image_size = get_size(img)
    box = [
        int(max(box[0] - margin[0] / 2, 0)),
        int(max(box[1] - margin[1] / 2, 0)),
        int(min(box[2] + margin[0] / 2, raw_image_size[0])),
        int(min(box[3] + margin[1] / 2, raw_image_size[1])),
    ]

    face = crop_resize(img, box, image_size)

    face = to_tensor(np.float32(face))

    return face


class PNet(nn.Module):
    def __init__(self, pretrained=True):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 10, kernel_size=3, stride=2)
        self.conv4_1 = nn.Conv2d(10, 2, kernel_size=1)
        self.softmax4_1 = nn.Softmax(dim=1)
        self.conv4_2 = nn.Conv2d(10, 4, kernel_size=1)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        a = self.softmax4_1(self.conv4_1(x))
        b = self.conv4_2(x)
        return b, a


def fixed_image_standardization(image_tensor):
    processed_tensor = (image_tensor - 127.5) / 128.0
    return processed_tensor


class MTCNN(nn.Module):
    def __init__(self, image_size=160, margin=0, min_face_size=20, thresholds=[0.6, 0.7, 0.7],
                 post_process=True, keep_all=False, device=None):
        super().__init__()
        self.image_size = image_size
        self.margin = margin
        self.min_face_size = min_face_size
        self.thresholds = thresholds
        self.post_process = post_process
        self.keep_all = keep_all
        self.pnet = PNet()
        self.device = torch.device('cpu')
        if device is not None:
            self.device = device
            self.to(device)

    def forward(self, img, save_path=None, return_prob=False):
        # Detect faces
        batch_boxes, batch_probs = self.detect(img)
        # Extract faces
        faces = self.extract(img, batch_boxes, save_path)
        if return_prob:
            return faces, batch_probs
        else:
            return faces

    def detect(self, img):
        with torch.no_grad():
            batch_boxes = detect_face(img, self.min_face_size, self.pnet, self.thresholds, self.device)

        boxes, probs = [], []
        for box in batch_boxes:
            box = np.array(box)
            if len(box) == 0:
                boxes.append(None)
                probs.append([None])
            else:
                boxes.append(box[:, :4])
                probs.append(box[:, 4])
        boxes = np.array(boxes, dtype=object)
        probs = np.array(probs, dtype=object)
        if not (isinstance(img, torch.Tensor) and len(img.shape) == 4):
            boxes = boxes[0]
            probs = probs[0]
        return boxes, probs

    def extract(self, img, batch_boxes, save_path):
        # Determine if a batch or single image was passed
        batch_mode = True
        if not (isinstance(img, torch.Tensor) and len(img.shape) == 4):
            img = [img]
            batch_boxes = [batch_boxes]
            batch_mode = False

        save_path = [None for _ in range(len(img))]

        # Process all bounding boxes
        faces = []
        for im, box_im, path_im in zip(img, batch_boxes, save_path):
            if box_im is None:
                faces.append(None)
                continue

            if not self.keep_all:
                box_im = box_im[[0]]

            faces_im = []
            for i, box in enumerate(box_im):
                face = extract_face(im, box, self.image_size, self.margin, path_im)
                if self.post_process:
                    face = fixed_image_standardization(face)
                faces_im.append(face)

            if self.keep_all:
                faces_im = torch.stack(faces_im)
            else:
                faces_im = faces_im[0]

            faces.append(faces_im)

        if not batch_mode:
            faces = faces[0]

        return faces


if __name__ == '__main__':
    device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
    mtcnn = MTCNN(image_size=32, device=device)

    # video frames decoded straight onto the GPU (uint8, N x H x W x 3)
    frames = torch.randint(0, 256, (2, 48, 64, 3), dtype=torch.uint8).to(device)
    faces = mtcnn(frames)
    print([None if f is None else tuple(f.shape) for f in faces])
