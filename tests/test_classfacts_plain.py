"""TDL005's ast prefilter skips attributes that are plainly no created tensor (a constant, a
``Parameter(...)``, a parameter of ``__init__`` and arithmetic of those): torch's own
``nn.Linear``/``nn.PReLU`` shape (a factory inside ``Parameter(torch.empty(...))``,
``self.in_features = in_features`` read in ``extra_repr``) reached LibCST for nothing."""
import ast

from torchdevlint.rules.classfacts import tensor_attribute_in

LINEAR = '''
import torch
from torch.nn import Module, Parameter

class Linear(Module):
    def __init__(self, in_features, out_features, scale=0.5):
        super().__init__()
        self.in_features = in_features
        self.half = in_features // 2
        self.shape = tuple(out_features)
        self.scale = -1
        self.weight = Parameter(torch.empty((out_features, in_features)))

    def forward(self, x):
        return x @ self.weight.T * self.scale

    def extra_repr(self):
        return f"{self.in_features}, {self.half}, {self.shape}"
'''

STATE = LINEAR.replace("self.scale = -1", "self.scale = torch.ones(1)")
GIVEN_A_TENSOR_DEFAULT = LINEAR.replace("scale=0.5", "scale=torch.ones(1)").replace(
    "self.scale = -1", "self.scale = scale")


def _passes(source: str) -> bool:
    return tensor_attribute_in(ast.parse(source), source)


def test_plain_attributes_do_not_reach_the_analysis():
    assert not _passes(LINEAR)


def test_a_factory_made_attribute_still_does():
    assert _passes(STATE)


def test_a_parameter_whose_default_is_a_call_is_not_plain():
    assert _passes(GIVEN_A_TENSOR_DEFAULT)
