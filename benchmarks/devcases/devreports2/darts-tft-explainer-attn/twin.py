# darts issue 1944 ("TypeError in explain function for TFT": "can't convert cuda:0 device type
# tensor to numpy" in tft_explainer.py, "can be fixed with attention_heads =
# self.model.model._attn_out_weights.detach().cpu().numpy().sum(axis=-2)"; pull request 1949
# "move tensor to cpu before numpy"): darts/models/forecasting/tft_model.py's _TFTModule
# keeping its attention weights and darts/explainability/tft_explainer.py's
# TFTExplainer.explain, minimised: one attention block stands in for the TFT network, numpy
# arrays for TimeSeries, and TFTModel keeps only fit/predict on the trainer's device.
import numpy as np
import torch
import torch.nn as nn


class _TFTModule(nn.Module):
    def __init__(self, input_chunk_length, output_chunk_length, hidden_size=8, num_attention_heads=2):
        super().__init__()
        self.input_chunk_length = input_chunk_length
        self.output_chunk_length = output_chunk_length
        self.input_embedding = nn.Linear(1, hidden_size)
        self.multihead_attn = nn.MultiheadAttention(hidden_size, num_attention_heads, batch_first=True)
        self.output_layer = nn.Linear(hidden_size, 1)

    def forward(self, x_past, x_future):
        attn_input = self.input_embedding(torch.cat([x_past, x_future], dim=1))
        attn_out, attn_out_weights = self.multihead_attn(
            attn_input[:, self.input_chunk_length:], attn_input, attn_input,
            average_attn_weights=False,
        )
        out = self.output_layer(attn_out)
        self._attn_out_weights = attn_out_weights
        return out


class TFTModel:
    def __init__(self, input_chunk_length, output_chunk_length, pl_trainer_kwargs=None):
        self.input_chunk_length = input_chunk_length
        self.output_chunk_length = output_chunk_length
        accelerator = (pl_trainer_kwargs or {}).get("accelerator", "cpu")
        self.device = torch.device("cuda" if accelerator == "gpu" and torch.cuda.is_available() else "cpu")
        self.model = None

    def fit(self, series):
        self.model = _TFTModule(self.input_chunk_length, self.output_chunk_length).to(self.device)
        return self

    def predict(self, n, series):
        past = torch.tensor(np.stack([s[-self.input_chunk_length:] for s in series]), dtype=torch.float32)
        future = torch.zeros(len(series), n, 1)
        self.model.eval()
        with torch.no_grad():
            out = self.model(past.to(self.device), future.to(self.device))
        return list(out.cpu().numpy())


class TFTExplainer:
    def __init__(self, model, background_series=None):
        self.model = model
        self.n = model.output_chunk_length
        self.background_series = background_series

    def explain(self, foreground_series=None, horizons=None):
        foreground_series = foreground_series or self.background_series
        horizons = horizons or list(range(1, self.n + 1))
        preds = self.model.predict(n=self.n, series=foreground_series)
        # get the weights and the attention head from the trained model for the prediction
        # aggregate over attention heads
        attention_heads = (
            self.model.model._attn_out_weights.detach().cpu().numpy().sum(axis=-2)
        )
        index = [h - 1 for h in horizons]
        results = []
        for idx, (series, pred_series) in enumerate(zip(foreground_series, preds)):
            results.append({"attention_heads": np.take(attention_heads[idx], index, axis=0).T})
        return results


if __name__ == "__main__":
    series = [np.random.rand(12, 1).astype(np.float32) for _ in range(2)]
    model = TFTModel(input_chunk_length=6, output_chunk_length=2, pl_trainer_kwargs={"accelerator": "gpu"})
    model.fit(series)
    explainer = TFTExplainer(model, background_series=series)
    explainability_result = explainer.explain()
    print(explainability_result[0]["attention_heads"].shape)
