# gluonts pull request 1230 ("Fixed pytorch's predict to numpy helper": "currently this does
# not work when the tensors are on the gpu"): src/gluonts/torch/model/predictor.py's
# predict_to_numpy registration and PyTorchPredictor.predict, with
# model/forecast_generator.py's SampleForecastGenerator and torch/batchify.py, minimised: a
# plain list of series replaces the Dataset and its transformation, a tuple stands in for
# SampleForecast, and a small sampling network for a trained one.
from functools import singledispatch
from typing import Callable, Iterator, List, Optional

import numpy as np
import torch
import torch.nn as nn


@singledispatch
def predict_to_numpy(prediction_net, tensor) -> np.ndarray:
    raise NotImplementedError


def stack(data, device: Optional[torch.device] = None):
    if isinstance(data[0], np.ndarray):
        data = torch.tensor(np.stack(data), device=device)
    return data


def batchify(data: List[dict], device: Optional[torch.device] = None) -> dict:
    return {key: stack(data=[item[key] for item in data], device=device) for key in data[0].keys()}


def InferenceDataLoader(dataset, batch_size, stack_fn):
    for start in range(0, len(dataset), batch_size):
        yield stack_fn(dataset[start:start + batch_size])


class SampleForecastGenerator:
    def __call__(self, inference_data_loader, prediction_net, input_names: List[str],
                 output_transform: Optional[Callable], num_samples: Optional[int], **kwargs):
        for batch in inference_data_loader:
            inputs = [batch[k] for k in input_names]
            outputs = predict_to_numpy(prediction_net, inputs)
            if output_transform is not None:
                outputs = output_transform(batch, outputs)
            for i, output in enumerate(outputs):
                yield (output, batch["forecast_start"][i])


@predict_to_numpy.register(nn.Module)
def _(prediction_net: nn.Module, inputs: torch.Tensor) -> np.ndarray:
    return prediction_net(*inputs).cpu().numpy()


class PyTorchPredictor:
    def __init__(self, input_names: List[str], prediction_net: nn.Module, batch_size: int,
                 prediction_length: int, device: torch.device,
                 forecast_generator: SampleForecastGenerator = SampleForecastGenerator(),
                 output_transform: Optional[Callable] = None) -> None:
        self.prediction_length = prediction_length
        self.input_names = input_names
        self.prediction_net = prediction_net
        self.batch_size = batch_size
        self.forecast_generator = forecast_generator
        self.output_transform = output_transform
        self.device = device

    def predict(self, dataset, num_samples: Optional[int] = None) -> Iterator:
        inference_data_loader = InferenceDataLoader(
            dataset,
            batch_size=self.batch_size,
            stack_fn=lambda data: batchify(data, self.device),
        )
        self.prediction_net.eval()
        with torch.no_grad():
            yield from self.forecast_generator(
                inference_data_loader=inference_data_loader,
                prediction_net=self.prediction_net,
                input_names=self.input_names,
                output_transform=self.output_transform,
                num_samples=num_samples,
            )


class SamplingNetwork(nn.Module):
    def __init__(self, context_length, prediction_length, num_parallel_samples=4):
        super().__init__()
        self.num_parallel_samples = num_parallel_samples
        self.mean = nn.Linear(context_length, prediction_length)

    def forward(self, past_target):
        mean = self.mean(past_target).unsqueeze(1)
        return mean + torch.randn(mean.shape[0], self.num_parallel_samples, mean.shape[2],
                                  device=mean.device)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = SamplingNetwork(context_length=8, prediction_length=3).to(device)
    predictor = PyTorchPredictor(input_names=["past_target"], prediction_net=net, batch_size=2,
                                 prediction_length=3, device=device)
    dataset = [{"past_target": np.random.rand(8).astype(np.float32),
                "forecast_start": "2020-01-0%d" % (i + 1)} for i in range(3)]
    for samples, start in predictor.predict(dataset):
        print(start, samples.shape)
