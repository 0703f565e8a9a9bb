# NetDissect-Lite pull request 5 ("fix issue when run in GPU environment"): feature_operation.py's
# FeatureOperator.feature_extraction with loader/model_loader.py's loadmodel and main.py's call,
# minimised: settings inlined, a toy CNN with one hooked layer replaces the torchvision model,
# random image batches replace the Broden prefetcher, no memmap files.
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable as V


class settings:
    GPU = True                                  # running on GPU is highly suggested
    FEATURE_NAMES = ['layer4']
    BATCH_SIZE = 4


features_blobs = []
def hook_feature(module, input, output):
    features_blobs.append(output.data.cpu().numpy())


class ToyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer4 = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = torch.relu(self.layer4(x))
        return self.fc(x.mean(dim=(2, 3)))


def loadmodel(hook_fn):
    model = ToyNet()
    for name in settings.FEATURE_NAMES:
        model._modules.get(name).register_forward_hook(hook_fn)
    if settings.GPU:
        model.cuda()
    model.eval()
    return model


class FeatureOperator:

    def __init__(self):
        self.batches = [np.random.rand(settings.BATCH_SIZE, 3, 8, 8).astype(np.float32) for _ in range(2)]
        self.mean = [109.5388,118.6897,124.6901]

    def feature_extraction(self, model=None):
        # extract the max value activaiton for each image
        maxfeatures = [None] * len(settings.FEATURE_NAMES)
        num_batches = len(self.batches)
        for batch_idx, input in enumerate(self.batches):
            del features_blobs[:]
            print('extracting feature from batch %d / %d' % (batch_idx+1, num_batches))
            input = torch.from_numpy(input[:, ::-1, :, :].copy())
            input.div_(255.0 * 0.224)
            if settings.GPU:
                input = input.cuda()
            input_var = V(input)
            logit = model.forward(input_var)
            while np.isnan(logit.data.max()):
                print("nan") #which I have no idea why it will happen
                del features_blobs[:]
                logit = model.forward(input_var)
            if maxfeatures[0] is None:
                # initialize the feature variable
                for i, feat_batch in enumerate(features_blobs):
                    size_features = (num_batches * settings.BATCH_SIZE, feat_batch.shape[1])
                    maxfeatures[i] = np.zeros(size_features)
            start_idx = batch_idx*settings.BATCH_SIZE
            end_idx = (batch_idx+1)*settings.BATCH_SIZE
            for i, feat_batch in enumerate(features_blobs):
                maxfeatures[i][start_idx:end_idx] = np.max(np.max(feat_batch,3),2)
        return maxfeatures


fo = FeatureOperator()
model = loadmodel(hook_feature)

############ STEP 1: feature extraction ###############
maxfeature = fo.feature_extraction(model=model)
print(maxfeature[0].shape)
