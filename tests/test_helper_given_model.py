"""A helper handed a moved model gives what the model gave (``Placement``'s "the output of
`f`, which was given `model`" evidence), unless what the file shows says otherwise (issue 28):
its every ``return`` is a CPU tensor (stylegan2's ``extract_feature_from_samples``). A helper
that returns a tuple is not judged that way: its parts may be anywhere, and the model's
predictions among them still index a CPU tensor (the shape of dgl's point-transformer
``train``, whose TRUE TDL011 finding the precision corpus keeps)."""
from torchdevlint.engine import lint_source
from torchdevlint.rules.registry import classes_by_code

RULES = tuple(classes_by_code()[code] for code in ("TDL008", "TDL011"))

HEADER = '''
import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
'''

CPU_RETURN = HEADER + '''

def features(model, n):
    out = []
    for _ in range(n):
        out.append(model(torch.randn(2, 4, device=device)).to("cpu"))
    return torch.cat(out, 0)


net = nn.Linear(4, 3).to(device)
values = features(net, 2).numpy()
'''

DEVICE_RETURN = HEADER + '''

def features(model, n):
    out = []
    for _ in range(n):
        out.append(model(torch.randn(2, 4, device=device)))
    return torch.cat(out, 0)


net = nn.Linear(4, 3).to(device)
values = features(net, 2).numpy()
'''

TUPLE_RETURN = HEADER + '''
colors = torch.tensor([[0, 0, 0], [255, 255, 255], [0, 0, 255]])


def train(model, n):
    x = torch.randn(2, 4).to(device)
    _, preds = model(x).max(1)
    return x, preds, float(n)


def paint(points):
    return colors[points]


net = nn.Linear(4, 3).to(device)
data, preds, took = train(net, 2)
painted = paint(preds)
'''


def codes(source):
    return sorted((f.line, f.code) for f in lint_source(source, "snippet.py", RULES).findings
                  if f.code in ("TDL008", "TDL011"))


def test_a_helper_that_returns_a_cpu_tensor_gives_no_device_evidence():
    assert codes(CPU_RETURN) == []


def test_a_helper_that_returns_the_models_output_does():
    assert codes(DEVICE_RETURN) == [(17, "TDL008")]


def test_a_tuple_returning_helper_is_not_judged_by_its_parts():
    assert codes(TUPLE_RETURN) == [(18, "TDL011")]
