# botorch pull request 1035 ("Store tensor attributes of input transforms as buffers": "If we
# store the tensor attributes as `self.attr = tensor_attr`, the `Module.to(...)` calls don't
# affect these attributes ... particularly if the `module` is a sub-module of a `Model`"):
# botorch/models/transforms/input.py's InputTransform and AppendFeatures, minimised: a linear
# mean stands in for the GP model that holds the transform, and fantasize is left out.
from abc import ABC, abstractmethod

import torch
from torch import Tensor
from torch.nn import Linear, Module


class InputTransform(ABC):
    def forward(self, X: Tensor) -> Tensor:
        if self.training:
            if self.transform_on_train:
                return self.transform(X)
        elif self.transform_on_eval:
            return self.transform(X)
        return X

    @abstractmethod
    def transform(self, X: Tensor) -> Tensor:
        pass  # pragma: no cover


class AppendFeatures(InputTransform, Module):
    def __init__(
        self,
        feature_set: Tensor,
        transform_on_train: bool = False,
        transform_on_eval: bool = True,
    ) -> None:
        super().__init__()
        if feature_set.dim() != 2:
            raise ValueError("`feature_set` must be an `n_f x d_f`-dim tensor!")
        self.feature_set = feature_set
        self.transform_on_train = transform_on_train
        self.transform_on_eval = transform_on_eval

    def transform(self, X: Tensor) -> Tensor:
        expanded_X = X.unsqueeze(dim=-2).expand(
            *X.shape[:-1], self.feature_set.shape[0], -1
        )
        expanded_features = self.feature_set.expand(*expanded_X.shape[:-1], -1)
        appended_X = torch.cat([expanded_X, expanded_features], dim=-1)
        return appended_X.view(*X.shape[:-2], -1, appended_X.shape[-1])


class MeanModel(Module):
    def __init__(self, d: int, input_transform: InputTransform) -> None:
        super().__init__()
        self.input_transform = input_transform
        self.mean = Linear(d, 1)

    def posterior_mean(self, X: Tensor) -> Tensor:
        return self.mean(self.input_transform(X))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    feature_set = torch.rand(4, 1)  # environmental variable samples
    model = MeanModel(d=3, input_transform=AppendFeatures(feature_set=feature_set)).to(device)
    model.eval()
    X = torch.rand(5, 2, 2, device=device)
    print(model.posterior_mean(X).shape)
