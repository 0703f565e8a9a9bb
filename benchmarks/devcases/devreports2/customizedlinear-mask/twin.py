# CustomizedLinear pull request 1 ("Registered mask as a parameter without grad in
# CustomizedLinear": "it won't require the user to move it manually to the GPU"):
# CustomizedLinear.py (CustomizedLinearFunction, CustomizedLinear) with how_to_use_this.py's
# training loop (with the repository's later `if param.requires_grad:` guard), minimised;
# the model is moved to the GPU as a user of the layer does.
import math

import numpy as np
import torch
import torch.nn as nn


class CustomizedLinearFunction(torch.autograd.Function):
    """autograd function which masks it's weights by 'mask'."""

    @staticmethod
    def forward(ctx, input, weight, bias=None, mask=None):
        if mask is not None:
            # change weight to 0 where mask == 0
            weight = weight * mask
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        ctx.save_for_backward(input, weight, bias, mask)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias, mask = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = grad_mask = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
            if mask is not None:
                grad_weight = grad_weight * mask
        if ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0).squeeze(0)
        return grad_input, grad_weight, grad_bias, grad_mask


class CustomizedLinear(nn.Module):
    def __init__(self, mask, bias=True):
        super(CustomizedLinear, self).__init__()
        self.input_features = mask.shape[0]
        self.output_features = mask.shape[1]
        if isinstance(mask, torch.Tensor):
            self.mask = mask.type(torch.float).t()
        else:
            self.mask = torch.tensor(mask, dtype=torch.float).t()

        self.mask = nn.Parameter(self.mask, requires_grad=False)

        self.weight = nn.Parameter(torch.Tensor(self.output_features, self.input_features))
        if bias:
            self.bias = nn.Parameter(torch.Tensor(self.output_features))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

        # mask weight
        self.weight.data = self.weight.data * self.mask

    def reset_parameters(self):
        stdv = 1. / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        if self.bias is not None:
            self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input):
        return CustomizedLinearFunction.apply(input, self.weight, self.bias, self.mask)


if __name__ == '__main__':
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    Dim_INPUT, Dim_HIDDEN, Dim_OUTPUT = 2, 5, 1
    get_bin_matrix = lambda Dim0, Dim1: np.random.choice([0, 1], size=(Dim0, Dim1))
    mask = torch.tensor(get_bin_matrix(Dim_INPUT, Dim_HIDDEN))

    x = torch.randn(1, Dim_INPUT).to(device)
    y = torch.randn(1, Dim_OUTPUT).to(device)
    model = torch.nn.Sequential(
        CustomizedLinear(mask, bias=None),
        torch.nn.Linear(Dim_HIDDEN, Dim_OUTPUT, bias=None),
    ).to(device)

    learning_rate = 0.1
    for t in range(2):
        y_pred = model(x)
        loss = (y_pred - y).abs().mean()
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for param in model.parameters():
                # mask is also saved in param, but mask.requires_grad=False
                if param.requires_grad:
                    param -= learning_rate * param.grad
        print(t, loss.item())
