"""Issue 28 (the devnp development cases): TDL008 reads scikit-learn's metrics and pyplot's
plots as NumPy conversions, and the placement facts behind TDL008 and TDL011 follow
``self.device`` of a plain object, ``self.NAME`` state within a method, lists filled item by
item, and ``torch.mm(a, b)``. The fixtures carry the runtime proofs (TDL008
evaluator_device, scores_on_self, preallocated_outputs); these tests hold what a fixture
cannot: scikit-learn, matplotlib and pandas (no test
dependencies) and the twins that must stay silent. (TDL011's in-place operations:
tests/runtime/test_inplace_mixed_devices.py.)"""
from __future__ import annotations

import textwrap

from torchdevlint.engine import lint_source
from torchdevlint.fixes.model import FixOptions
from torchdevlint.applier import fix_source
from torchdevlint.rules.registry import classes_by_code


def found(source: str, code: str) -> list:
    rules = [classes_by_code()[code]]
    return [(f.line, f.column) for f in
            lint_source(textwrap.dedent(source).lstrip("\n"), "snippet.py", rules).findings
            if f.code == code]


READERS = """
    import matplotlib.pyplot as plt
    import torch
    from sklearn import metrics
    from sklearn.metrics import roc_auc_score as auc


    def report(model, x, labels, device):
        model.to(device)
        scores = model(x.to(device))
        plt.imshow(scores)
        return auc(labels, scores), metrics.f1_score(labels, scores.argmax(1))
"""


def test_metrics_and_plots_read_device_tensors_as_numpy_arrays():
    # ganomaly's roc_curve(labels, scores) of GPU tensors (samet-akcay/ganomaly#26)
    assert found(READERS, "TDL008") == [(10, 5), (11, 12), (11, 33)]
    fixed = fix_source(textwrap.dedent(READERS).lstrip("\n"), "snippet.py", [classes_by_code()["TDL008"]],
                       FixOptions(unsafe=True)).fixed
    assert "plt.imshow(scores.detach().cpu())" in fixed
    assert "auc(labels, scores.detach().cpu())" in fixed
    assert "metrics.f1_score(labels, scores.argmax(1).detach().cpu())" in fixed


def test_pandas_containers_read_device_tensors_as_numpy_arrays():
    # pd.DataFrame(t) / pd.Series(t) of a GPU tensor: "can't convert cuda:0 device type tensor
    # to numpy" (checked under the pretend accelerator with pandas installed; pandas is no
    # test dependency, so this test holds the linter's side)
    source = """
        import pandas as pd
        import torch
        from pandas import Series


        def table(model, x, device):
            model.to(device)
            emb = model(x.to(device))
            frame = pd.DataFrame(emb.detach().cpu())
            return pd.DataFrame(emb), Series(emb[:, 0]), frame
    """
    assert found(source, "TDL008") == [(10, 12), (10, 31)]
    fixed = fix_source(textwrap.dedent(source).lstrip("\n"), "snippet.py",
                       [classes_by_code()["TDL008"]], FixOptions(unsafe=True)).fixed
    assert "pd.DataFrame(emb.detach().cpu()), Series(emb[:, 0].detach().cpu())" in fixed


def test_host_copies_and_unknown_receivers_are_silent():
    assert found("""
        import matplotlib.pyplot as plt
        import torch
        from sklearn.metrics import roc_auc_score


        def report(model, x, labels, device, ax):
            model.to(device)
            scores = model(x.to(device))
            ax.plot(scores)  # (an Axes: its receiver is unknown)
            plt.plot(scores.cpu())
            return roc_auc_score(labels, scores.detach().cpu())
    """, "TDL008") == []


def test_self_device_of_a_plain_object_is_its_device_but_not_a_modules():
    source = """
        import numpy as np
        import torch
        import torch.nn as nn


        class Scorer:
            def __init__(self, device):
                self.device = device

            def score(self, x):
                return x.to(self.device).numpy()


        class CPUScorer:
            def __init__(self):
                self.device = torch.device("cpu")

            def score(self, x):
                return x.to(self.device).numpy()


        class Net(nn.Module):
            def score(self, x):
                return np.asarray(x.to(self.device))


        def follow(x, y):
            return np.asarray(y.to(x.device))
    """
    assert found(source, "TDL008") == [(11, 34)]


def test_state_on_self_and_filled_lists_keep_where_their_tensors_are():
    source = """
        import torch


        class Tester:
            def run(self, model, batches, device):
                model.to(device)
                self.scores = torch.zeros(len(batches), device=device)
                outputs = [None] * len(batches)
                for i, batch in enumerate(batches):
                    outputs[i] = model(batch.to(device))
                first = self.scores.numpy()
                self.scores = self.scores.cpu()
                return first, self.scores.numpy(), outputs[0].numpy()
    """
    assert found(source, "TDL008") == [(11, 29), (13, 55)]


def test_a_torch_function_named_like_a_tensor_method_follows_its_arguments():
    # ``torch.mm(a, b)`` is no method of ``torch``: its result is where its tensors are
    assert found("""
        import torch


        def similarity(a, b, device):
            scores = torch.mm(a.to(device), b.to(device).t())
            return scores.numpy()
    """, "TDL008") == [(6, 19)]
