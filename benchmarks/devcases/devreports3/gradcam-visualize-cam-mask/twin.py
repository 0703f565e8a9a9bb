# 1Konny/gradcam_plus_plus-pytorch issues 5 and 10 ("TypeError: can't convert CUDA tensor to
# numpy. Use Tensor.cpu() to copy the tensor to host memory first" / "can't convert cuda:0 device
# type tensor to numpy" in utils.py visualize_cam at heatmap = cv2.applyColorMap(np.uint8(255 *
# mask.squeeze()), cv2.COLORMAP_JET), the mask being GradCAM's saliency map of a model on the GPU;
# the fix given in issue 10: np.uint8(255 * mask.cpu().squeeze())): gradcam.py's GradCAM, utils.py
# (visualize_cam, find_alexnet_layer, normalize, Normalize) and the example notebook, minimised: a
# small AlexNet-like features/classifier network stands in for torchvision's alexnet, a numpy jet
# colormap (apply_color_map_jet) for cv2.applyColorMap, a random image for water-bird.JPEG, and
# GradCAMpp is left out; register_full_backward_hook and F.interpolate replace the deprecated
# register_backward_hook and F.upsample.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def apply_color_map_jet(gray):
    # stands in for cv2.applyColorMap(gray, cv2.COLORMAP_JET): uint8 HxW -> uint8 HxWx3 (BGR)
    x = gray.astype(np.float32) / 255.0
    r = np.clip(1.5 - np.abs(4 * x - 3), 0, 1)
    g = np.clip(1.5 - np.abs(4 * x - 2), 0, 1)
    b = np.clip(1.5 - np.abs(4 * x - 1), 0, 1)
    return np.uint8(255 * np.stack([b, g, r], axis=-1))


def visualize_cam(mask, img):
    """Make heatmap from mask and synthesize GradCAM result image using heatmap and img."""
    heatmap = apply_color_map_jet(np.uint8(255 * mask.cpu().squeeze()))
    heatmap = torch.from_numpy(heatmap).permute(2, 0, 1).float().div(255)
    b, g, r = heatmap.split(1)
    heatmap = torch.cat([r, g, b])

    result = heatmap+img.cpu()
    result = result.div(result.max()).squeeze()

    return heatmap, result


def find_alexnet_layer(arch, target_layer_name):
    hierarchy = target_layer_name.split('_')

    if len(hierarchy) >= 1:
        target_layer = arch.features

    if len(hierarchy) == 2:
        target_layer = target_layer[int(hierarchy[1])]

    return target_layer


def normalize(tensor, mean, std):
    if not tensor.ndimension() == 4:
        raise TypeError('tensor should be 4D')

    mean = torch.FloatTensor(mean).view(1, 3, 1, 1).expand_as(tensor).to(tensor.device)
    std = torch.FloatTensor(std).view(1, 3, 1, 1).expand_as(tensor).to(tensor.device)

    return tensor.sub(mean).div(std)


class Normalize(object):
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, tensor):
        return self.do(tensor)

    def do(self, tensor):
        return normalize(tensor, self.mean, self.std)


class GradCAM(object):
    """Calculate GradCAM salinecy map."""
    def __init__(self, model_dict, verbose=False):
        model_type = model_dict['type']
        layer_name = model_dict['layer_name']
        self.model_arch = model_dict['arch']

        self.gradients = dict()
        self.activations = dict()
        def backward_hook(module, grad_input, grad_output):
            self.gradients['value'] = grad_output[0]
            return None
        def forward_hook(module, input, output):
            self.activations['value'] = output
            return None

        if 'alexnet' in model_type.lower():
            target_layer = find_alexnet_layer(self.model_arch, layer_name)

        target_layer.register_forward_hook(forward_hook)
        target_layer.register_full_backward_hook(backward_hook)

        if verbose:
            try:
                input_size = model_dict['input_size']
            except KeyError:
                print("please specify size of input image in model_dict. e.g. {'input_size':(224, 224)}")
                pass
            else:
                device = 'cuda' if next(self.model_arch.parameters()).is_cuda else 'cpu'
                self.model_arch(torch.zeros(1, 3, *(input_size), device=device))
                print('saliency_map size :', self.activations['value'].shape[2:])

    def forward(self, input, class_idx=None, retain_graph=False):
        b, c, h, w = input.size()

        logit = self.model_arch(input)
        if class_idx is None:
            score = logit[:, logit.max(1)[-1]].squeeze()
        else:
            score = logit[:, class_idx].squeeze()

        self.model_arch.zero_grad()
        score.backward(retain_graph=retain_graph)
        gradients = self.gradients['value']
        activations = self.activations['value']
        b, k, u, v = gradients.size()

        alpha = gradients.view(b, k, -1).mean(2)
        weights = alpha.view(b, k, 1, 1)

        saliency_map = (weights*activations).sum(1, keepdim=True)
        saliency_map = F.relu(saliency_map)
        saliency_map = F.interpolate(saliency_map, size=(h, w), mode='bilinear', align_corners=False)
        saliency_map_min, saliency_map_max = saliency_map.min(), saliency_map.max()
        saliency_map = (saliency_map - saliency_map_min).div(saliency_map_max - saliency_map_min).data

        return saliency_map, logit

    def __call__(self, input, class_idx=None, retain_graph=False):
        return self.forward(input, class_idx, retain_graph)


class AlexNet(nn.Module):
    def __init__(self, num_classes=10):
        super(AlexNet, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, padding=1), nn.ReLU(inplace=False), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.ReLU(inplace=False),
        )
        self.classifier = nn.Linear(16 * 8 * 8, num_classes)

    def forward(self, x):
        x = self.features(x)
        return self.classifier(torch.flatten(x, 1))


# --- example.ipynb --------------------------------------------------------------------------

pil_img = np.random.RandomState(0).randint(0, 256, (20, 24, 3), dtype=np.uint8)
normalizer = Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
torch_img = torch.from_numpy(np.asarray(pil_img)).permute(2, 0, 1).unsqueeze(0).float().div(255).cuda()
torch_img = F.interpolate(torch_img, size=(16, 16), mode='bilinear', align_corners=False)
normed_torch_img = normalizer(torch_img)

alexnet = AlexNet()
alexnet.eval(), alexnet.cuda();

cam_dict = dict()

alexnet_model_dict = dict(type='alexnet', arch=alexnet, layer_name='features_4', input_size=(16, 16))
alexnet_gradcam = GradCAM(alexnet_model_dict, True)
cam_dict['alexnet'] = [alexnet_gradcam]

images = []
for (gradcam,) in cam_dict.values():
    mask, _ = gradcam(normed_torch_img)
    heatmap, result = visualize_cam(mask, torch_img)

    images.append(torch.stack([torch_img.squeeze().cpu(), heatmap, result], 0))

print(torch.cat(images, 0).shape)
