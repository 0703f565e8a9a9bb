"""Recurrent cells and layers with one part left off the GPU: how each call ends.

RNN cells take another path on CUDA than on the CPU (RNN.cpp: the fused LSTM/GRU kernels after
two matmuls), so a mixed-device cell fails in another op, with another message, than the CPU
path the pretend accelerator runs would say. This records each case's outcome on a real GPU or
on the pretend one, so that the two can be compared (test_pretend_matches_gpu.py):

    python tests/runtime/rnn_cells.py record data/gpu/rnn-cells-h200.json      # on a GPU
    python tests/runtime/rnn_cells.py record --pretend OUT.json
"""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path


def cases():
    """(name, call) of every case: a module and its inputs, one of them left on the CPU."""
    import torch
    from torch import nn
    d = "cuda"

    def on(*shape):
        return torch.zeros(*shape, device=d)

    def cpu(*shape):
        return torch.zeros(*shape)

    def lstm_backward():
        out, _ = nn.LSTMCell(4, 3).to(d)(torch.randn(2, 4, device=d), (on(2, 3), on(2, 3)))
        out.sum().backward()

    return [
        ("gru_hx_cpu", lambda: nn.GRUCell(4, 3).to(d)(torch.randn(2, 4, device=d), cpu(2, 3))),
        ("gru_unbatched_hx_cpu", lambda: nn.GRUCell(4, 3).to(d)(torch.randn(4, device=d), cpu(3))),
        ("gru_input_cpu", lambda: nn.GRUCell(4, 3).to(d)(torch.randn(2, 4), on(2, 3))),
        ("gru_model_cpu", lambda: nn.GRUCell(4, 3)(torch.randn(2, 4, device=d), on(2, 3))),
        ("gru_ok", lambda: nn.GRUCell(4, 3).to(d)(torch.randn(2, 4, device=d), on(2, 3))),
        ("gru_nobias_hx_cpu",
         lambda: nn.GRUCell(4, 3, bias=False).to(d)(torch.randn(2, 4, device=d), cpu(2, 3))),
        ("lstm_both_cpu",
         lambda: nn.LSTMCell(4, 3).to(d)(torch.randn(2, 4, device=d), (cpu(2, 3), cpu(2, 3)))),
        ("lstm_c_cpu",
         lambda: nn.LSTMCell(4, 3).to(d)(torch.randn(2, 4, device=d), (on(2, 3), cpu(2, 3)))),
        ("lstm_h_cpu",
         lambda: nn.LSTMCell(4, 3).to(d)(torch.randn(2, 4, device=d), (cpu(2, 3), on(2, 3)))),
        ("lstm_nobias_c_cpu", lambda: nn.LSTMCell(4, 3, bias=False).to(d)(
            torch.randn(2, 4, device=d), (on(2, 3), cpu(2, 3)))),
        ("lstm_input_cpu",
         lambda: nn.LSTMCell(4, 3).to(d)(torch.randn(2, 4), (on(2, 3), on(2, 3)))),
        ("lstm_model_cpu",
         lambda: nn.LSTMCell(4, 3)(torch.randn(2, 4, device=d), (on(2, 3), on(2, 3)))),
        ("lstm_ok_backward", lstm_backward),
        ("rnn_hx_cpu", lambda: nn.RNNCell(4, 3).to(d)(torch.randn(2, 4, device=d), cpu(2, 3))),
        ("rnn_relu_hx_cpu", lambda: nn.RNNCell(4, 3, nonlinearity="relu").to(d)(
            torch.randn(2, 4, device=d), cpu(2, 3))),
        ("rnn_input_cpu", lambda: nn.RNNCell(4, 3).to(d)(torch.randn(2, 4), on(2, 3))),
        ("gru_full_hx_cpu", lambda: nn.GRU(4, 3).to(d)(torch.randn(5, 2, 4, device=d), cpu(1, 2, 3))),
        ("lstm_full_c_cpu", lambda: nn.LSTM(4, 3).to(d)(
            torch.randn(5, 2, 4, device=d), (on(1, 2, 3), cpu(1, 2, 3)))),
    ]


def record(pretend: bool) -> dict:
    """{name: "ran" or "ErrorType: first line of the message"} for every case."""
    import torch
    context = contextlib.nullcontext()
    if pretend:
        from torchdevlint.runtime import fake_accelerator
        context = fake_accelerator("cuda")
    elif not torch.cuda.is_available():
        raise SystemExit("no CUDA device is visible: record --pretend, or run this on a GPU")
    outcomes = {}
    with context:
        for name, call in cases():
            try:
                call()
                outcomes[name] = "ran"
            except Exception as error:  # every outcome is data here
                outcomes[name] = f"{type(error).__name__}: {str(error).splitlines()[0]}"
        accelerator = ("pretend cuda (torchdevlint.runtime)" if pretend
                       else torch.cuda.get_device_name(0))
    return {"environment": {"torch": torch.__version__, "python": sys.version.split()[0],
                            "accelerator": accelerator},
            "outcomes": outcomes}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record")
    rec.add_argument("--pretend", action="store_true")
    rec.add_argument("output", type=Path)
    args = parser.parse_args(argv)
    result = record(args.pretend)
    args.output.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(result['outcomes'])} cases on {result['environment']['accelerator']}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    sys.exit(main())
