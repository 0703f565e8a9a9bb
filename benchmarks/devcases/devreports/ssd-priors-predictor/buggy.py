# pytorch-ssd issue 183 (run_ssd_live_demo.py with mb2-ssd-lite on a GPU machine):
# vision/ssd/ssd.py SSD (priors moved to the default device in __init__ as a plain attribute),
# vision/ssd/predictor.py Predictor (moves the net to its device, the CPU by default as in
# create_mobilenetv2_ssd_lite_predictor) and vision/utils/box_utils.py, minimised: a toy
# base net and headers, random priors, the image given as a tensor, no NMS.
from collections import namedtuple
from typing import List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

GraphPath = namedtuple("GraphPath", ['s0', 'name', 's1'])


def convert_locations_to_boxes(locations, priors, center_variance,
                               size_variance):
    # priors can have one dimension less.
    if priors.dim() + 1 == locations.dim():
        priors = priors.unsqueeze(0)
    return torch.cat([
        locations[..., :2] * center_variance * priors[..., 2:] + priors[..., :2],
        torch.exp(locations[..., 2:] * size_variance) * priors[..., 2:]
    ], dim=locations.dim() - 1)


def center_form_to_corner_form(locations):
    return torch.cat([locations[..., :2] - locations[..., 2:]/2,
                     locations[..., :2] + locations[..., 2:]/2], locations.dim() - 1)


class SSD(nn.Module):
    def __init__(self, num_classes: int, base_net: nn.ModuleList, source_layer_indexes: List[int],
                 extras: nn.ModuleList, classification_headers: nn.ModuleList,
                 regression_headers: nn.ModuleList, is_test=False, config=None, device=None):
        """Compose a SSD model using the given components.
        """
        super(SSD, self).__init__()

        self.num_classes = num_classes
        self.base_net = base_net
        self.source_layer_indexes = source_layer_indexes
        self.extras = extras
        self.classification_headers = classification_headers
        self.regression_headers = regression_headers
        self.is_test = is_test
        self.config = config

        # register layers in source_layer_indexes by adding them to a module list
        self.source_layer_add_ons = nn.ModuleList([t[1] for t in source_layer_indexes
                                                   if isinstance(t, tuple) and not isinstance(t, GraphPath)])
        if device:
            self.device = device
        else:
            self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        if is_test:
            self.config = config
            self.priors = config.priors.to(self.device)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        confidences = []
        locations = []
        start_layer_index = 0
        header_index = 0
        for end_layer_index in self.source_layer_indexes:
            if isinstance(end_layer_index, GraphPath):
                path = end_layer_index
                end_layer_index = end_layer_index.s0
                added_layer = None
            elif isinstance(end_layer_index, tuple):
                added_layer = end_layer_index[1]
                end_layer_index = end_layer_index[0]
                path = None
            else:
                added_layer = None
                path = None
            for layer in self.base_net[start_layer_index: end_layer_index]:
                x = layer(x)
            if added_layer:
                y = added_layer(x)
            else:
                y = x
            if path:
                sub = getattr(self.base_net[end_layer_index], path.name)
                for layer in sub[:path.s1]:
                    x = layer(x)
                y = x
                for layer in sub[path.s1:]:
                    x = layer(x)
                end_layer_index += 1
            start_layer_index = end_layer_index
            confidence, location = self.compute_header(header_index, y)
            header_index += 1
            confidences.append(confidence)
            locations.append(location)

        for layer in self.base_net[end_layer_index:]:
            x = layer(x)

        for layer in self.extras:
            x = layer(x)
            confidence, location = self.compute_header(header_index, x)
            header_index += 1
            confidences.append(confidence)
            locations.append(location)

        confidences = torch.cat(confidences, 1)
        locations = torch.cat(locations, 1)

        if self.is_test:
            confidences = F.softmax(confidences, dim=2)
            boxes = convert_locations_to_boxes(
                locations, self.priors, self.config.center_variance, self.config.size_variance
            )
            boxes = center_form_to_corner_form(boxes)
            return confidences, boxes
        else:
            return confidences, locations

    def compute_header(self, i, x):
        confidence = self.classification_headers[i](x)
        confidence = confidence.permute(0, 2, 3, 1).contiguous()
        confidence = confidence.view(confidence.size(0), -1, self.num_classes)

        location = self.regression_headers[i](x)
        location = location.permute(0, 2, 3, 1).contiguous()
        location = location.view(location.size(0), -1, 4)

        return confidence, location


class Predictor:
    def __init__(self, net, size, nms_method=None, iou_threshold=0.45, filter_threshold=0.01,
                 candidate_size=200, sigma=0.5, device=None):
        self.net = net
        self.size = size
        self.iou_threshold = iou_threshold
        self.filter_threshold = filter_threshold
        self.candidate_size = candidate_size
        self.nms_method = nms_method

        self.sigma = sigma
        if device:
            self.device = device
        else:
            self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

        self.net.to(self.device)
        self.net.eval()

    def predict(self, image, top_k=-1, prob_threshold=None):
        cpu_device = torch.device("cpu")
        images = image.unsqueeze(0)
        images = images.to(self.device)
        with torch.no_grad():
            scores, boxes = self.net.forward(images)
        boxes = boxes[0]
        scores = scores[0]
        # this version of nms is slower on GPU, so we move data to CPU.
        boxes = boxes.to(cpu_device)
        scores = scores.to(cpu_device)
        return boxes, scores


Config = namedtuple("Config", ["image_size", "priors", "center_variance", "size_variance"])
config = Config(image_size=32, priors=torch.rand(544, 4), center_variance=0.1, size_variance=0.2)


def create_mobilenetv2_ssd_lite(num_classes, is_test=False):
    base_net = nn.ModuleList([nn.Conv2d(3, 8, 3, 2, 1), nn.Conv2d(8, 16, 3, 2, 1)])
    extras = nn.ModuleList([nn.Conv2d(16, 16, 3, 2, 1)])
    regression_headers = nn.ModuleList([nn.Conv2d(8, 2 * 4, 3, padding=1), nn.Conv2d(16, 2 * 4, 1)])
    classification_headers = nn.ModuleList([nn.Conv2d(8, 2 * num_classes, 3, padding=1),
                                            nn.Conv2d(16, 2 * num_classes, 1)])
    return SSD(num_classes, base_net, [1], extras, classification_headers, regression_headers,
               is_test=is_test, config=config)


def create_mobilenetv2_ssd_lite_predictor(net, candidate_size=200, nms_method=None, sigma=0.5, device=torch.device('cpu')):
    predictor = Predictor(net, config.image_size, nms_method=nms_method, candidate_size=candidate_size,
                          sigma=sigma, device=device)
    return predictor


if __name__ == '__main__':
    net = create_mobilenetv2_ssd_lite(21, is_test=True)
    predictor = create_mobilenetv2_ssd_lite_predictor(net, candidate_size=200)
    image = torch.rand(3, 32, 32)
    boxes, probs = predictor.predict(image, 10, 0.4)
    print(boxes.shape, probs.shape)
