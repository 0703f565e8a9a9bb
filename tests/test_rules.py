"""Rule behaviour on small snippets: what each rule must report and where it must stay silent."""
from __future__ import annotations

import ast
import textwrap

import pytest


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# --- TDL001 ------------------------------------------------------------------------------

TDL001_FLAGGED = {
    "cpu of model output": """
        import torch.nn as nn
        model = nn.Linear(2, 2)
        out = model(x)
        out.cpu()
    """,
    "cuda of factory tensor": """
        import torch
        t = torch.zeros(3)
        t.cuda()
    """,
    "tensor method chain": """
        import torch
        t = torch.tensor([1.0]).unsqueeze(0).float().detach()
        t.to("cpu")
    """,
    "arithmetic": """
        import torch
        a = torch.ones(2)
        b = a * 2 + 1
        b.to("cpu")
    """,
    "loss": """
        import torch.nn as nn
        criterion = nn.MSELoss()
        loss = criterion(a, b)
        loss.cpu()
    """,
    "loader item": """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds)
        for x, y in loader:
            y.to("cpu")
    """,
    "next(iter(loader))": """
        images, labels = next(iter(train_loader))
        images.to("cpu")
    """,
    "closure": """
        import torch
        def outer(device):
            buf = torch.empty(4)
            def inner():
                buf.to(device)
            return inner
    """,
    "optional annotation": """
        from typing import Optional
        import torch
        def f(x: Optional[torch.Tensor], device):
            x.to(device)
    """,
    "pep604 annotation": """
        from torch import Tensor
        def f(x: Tensor | None, device):
            x.to(device)
    """,
    "string annotation": """
        def f(x: "torch.Tensor", device):
            x.to(device)
    """,
    "from_numpy": """
        import torch
        t = torch.from_numpy(arr)
        t.to("cpu")
    """,
    "nn.functional via alias": """
        import torch.nn.functional as F
        h = F.relu(z)
        h.to("cpu")
    """,
    "parameter attribute": """
        import torch.nn as nn
        layer = nn.Linear(2, 2)
        layer.weight.to("cpu")
    """,
    "register_buffer": """
        import torch, torch.nn as nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("mask", torch.ones(2))
            def forward(self, x):
                self.mask.to(x.device)
                return x
    """,
    "rebinding keeps kind": """
        import torch
        x = torch.zeros(2)
        x = x.view(2, 1)
        x = x + 1
        x.to("cpu")
    """,
    "forward return kind": """
        import torch, torch.nn as nn
        class Net(nn.Module):
            def forward(self, x):
                return torch.relu(x), x
        net = Net()
        a, b = net(x)
        a.cpu()
    """,
}


@pytest.mark.parametrize("code", TDL001_FLAGGED.values(), ids=TDL001_FLAGGED.keys())
def test_tdl001_flags(lint, code):
    findings = lint(src(code), ["TDL001"])
    assert len(findings) == 1 and findings[0][2] == "TDL001", findings


TDL001_SILENT = {
    "module": "import torch.nn as nn\nm = nn.Linear(1, 1)\nm.to('cpu')\n",
    "unknown param": "def f(x, d):\n    x.to(d)\n",
    "reassigned to module": "import torch, torch.nn as nn\nx = torch.zeros(1)\nx = nn.Linear(1, 1)\nx.to('cpu')\n",
    "whole loader item": "for batch in train_loader:\n    batch.to('cpu')\n",
    "tokenizer output": "from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('x')\nenc = tok('a', return_tensors='pt')\nenc.to('cpu')\n",
    "pretrained model": "from transformers import AutoModel\nm = AutoModel.from_pretrained('x')\nm.to('cpu')\n",
    "module output of unknown class base": "from lib import Base\nclass Net(Base):\n    pass\nnet = Net()\nnet.to('cpu')\n",
    "plain class with to": "class A:\n    def to(self, d):\n        return self\na = A()\na.to('cpu')\n",
    "sequential item": "import torch.nn as nn\nseq = nn.Sequential(nn.Linear(1, 1))\nseq[0].to('cpu')\n",
    "torchvision model": "import torchvision\nm = torchvision.models.resnet18()\nm.to('cpu')\n",
    "timm model": "import timm\nm = timm.create_model('resnet18')\nm.to('cpu')\n",
    "state dict from load": "import torch\nsd = torch.load('x', map_location='cpu')\nsd.to('cpu')\n",
    # the module's move is a statement, so that the file reaches the check (could_report_in)
    "not a statement": "import torch\nx = torch.zeros(1)\ny = x.to('cpu')\nf(x.cuda() if c else x)\n"
                       "m = torch.nn.Linear(1, 1)\nm.to('cpu')\n",
}


@pytest.mark.parametrize("code", TDL001_SILENT.values(), ids=TDL001_SILENT.keys())
def test_tdl001_silent(lint, code):
    assert lint(code, ["TDL001"]) == []


def test_tdl001_position_is_call_start(lint):
    assert lint("import torch\nx = torch.ones(1)\nif True:\n    x.to('cpu')\n", ["TDL001"]) == [(4, 5, "TDL001")]


# --- TDL002 ------------------------------------------------------------------------------

TDL002_FLAGGED = {
    "cuda tensor type": ("import torch\nt = torch.cuda.FloatTensor(3)\n", (2, 5)),
    "set_default_device": ("import torch\ntorch.set_default_device('cuda')\n", (2, 26)),
    "map_location keyword": ("import torch\nsd = torch.load('x', map_location='cuda:0')\n", (2, 35)),
    "map_location positional": ("import torch\nsd = torch.load('x', 'cuda')\n", (2, 22)),
    "to keyword": ("import torch\nx = torch.ones(1).to(device='cuda')\n", (2, 29)),
    "device type keyword": ("import torch\nd = torch.device(type='cuda')\nx.to(d)\n", (2, 23)),
    "unguarded conditional": ("import torch\nd = torch.device('cuda' if flag else 'cpu')\nx.to(d)\n",
                              (2, 18)),
    "device-named torch.device": ("import torch\ndevice = torch.device('cuda')\n", (2, 23)),
    "default device of a with block": ("import torch\nwith torch.device('cuda'):\n    m = f()\n",
                                       (2, 19)),
    "returned device": ("import torch\ndef pick():\n    return torch.device('cuda:0')\n", (3, 25)),
    "device default": ("import torch\ndef f(x, device=torch.device('cuda')):\n    return x.to(device)\n",
                       (2, 30)),
    "attribute then used as a device": (
        "class C:\n    def __init__(self):\n        self.device = 'cuda'\n"
        "    def run(self, x):\n        return x.to(self.device)\n", (3, 23)),
    "cuda with index": ("x = model.cuda(0)\n", (1, 11)),
}


@pytest.mark.parametrize("code,position", TDL002_FLAGGED.values(), ids=TDL002_FLAGGED.keys())
def test_tdl002_flags(lint, code, position):
    assert lint(code, ["TDL002"]) == [(*position, "TDL002")]


TDL002_SILENT = {
    "guard variable from availability": "import torch\navailable = torch.cuda.is_available()\nif available:\n    model.cuda()\n",
    "device_count guard": "import torch\nif torch.cuda.device_count() > 1:\n    model.cuda()\n",
    "boolean guard": "import torch\nok = torch.cuda.is_available() and model.cuda()\n",
    "early raise": "import torch\ndef f():\n    if not torch.cuda.is_available():\n        raise RuntimeError('no gpu')\n    return torch.zeros(1, device='cuda')\n",
    "gpu flag": "if args.gpu is not None:\n    model.cuda(args.gpu)\n",
    "cuda-named class": "class CudaTests:\n    def test(self):\n        x.cuda()\n",
    "isinstance type": "import torch\nok = isinstance(t, (torch.cuda.FloatTensor, torch.FloatTensor))\n",
    "f-string device index": "rank = 0\nx = y.to(f'cuda:{rank}')\n",
    "dict key remap": "import torch\nsd = torch.load('x', map_location={'cuda:0': 'cpu'})\n",
    "pytestmark skip": "import pytest, torch\npytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason='gpu')\ndef test():\n    torch.zeros(1).cuda()\n",
    "attribute only used as autocast device_type": "class A:\n    def __init__(self):\n        self.device = 'cuda'\n",
    "tensor type only referenced": "import torch\nTYPES = (torch.cuda.FloatTensor, torch.cuda.HalfTensor)\n",
    "device built only to compare": "import torch\nok = torch.device('cuda') in devices\n",
    "device only a cache key": "import torch\nd0 = torch.device('cuda:0')\nm = cache.get(size, d0)\n",
    "device built only for its type": "import torch\nt = (current() or torch.device('cuda')).type\n",
    "expected failure": "import pytest\nwith pytest.raises(RuntimeError):\n    model.cuda()\n",
    "try cuda first": "import torch\ntry:\n    b = pg.get(torch.device('cuda'))\nexcept RuntimeError:\n    b = None\n",
    "provider string guard": "import torch\nif provider in ('CUDAExecutionProvider',):\n    d = torch.device('cuda', 0)\n",
    "param only compared": "def check(t, device='cuda'):\n    return t.device.type == device\nok = check(x, device='cuda')\n",
    "param used via getattr": "import torch\ndef mod(device='cuda'):\n    return getattr(torch, device)\n",
    "skip decorator factory": "import functools\nskipCUDAIf = functools.partial(skipDeviceIf, device='cuda')\n",
    "custom cuda helper with device": "q.cuda(t, meta=m, device=x.device)\n",
    "startswith guard": "if device.startswith('cuda'):\n    x = torch.zeros(1, device='cuda')\n",
    "device built to test membership": "import torch\nif torch.device('cuda') in devices:\n    b = pg.get(torch.device('cuda'))\n",
}


@pytest.mark.parametrize("code", TDL002_SILENT.values(), ids=TDL002_SILENT.keys())
def test_tdl002_silent(lint, code):
    assert lint(code, ["TDL002"]) == []


# Files that mention no CUDA at all: the prefilter drops them by design (nothing there can be
# a hard-coded CUDA device), so they are linted with prefilter=False for the check to run.
TDL002_SILENT_WITHOUT_CUDA = {
    "mps or cpu": "import torch\nx = torch.zeros(1, device='mps' if torch.backends.mps.is_available() else 'cpu')\n",
}


@pytest.mark.parametrize("code", TDL002_SILENT_WITHOUT_CUDA.values(), ids=TDL002_SILENT_WITHOUT_CUDA.keys())
def test_tdl002_silent_without_the_prefilter(code):
    from torchdevlint.config import select_rules
    from torchdevlint.engine import candidate_rules, lint_source
    rules = select_rules(["TDL002"])
    assert candidate_rules(code, rules, ast.parse(code)) == []  # unreachable by design
    result = lint_source(code, "snippet.py", rules, prefilter=False)
    assert result.error is None and result.findings == []


def test_tdl002_name_bound_then_used_reports_the_literal_once(lint):
    code = "import torch\ndev = 'cuda'\na = torch.zeros(1).to(dev)\nb = torch.ones(1, device=dev)\n"
    assert lint(code, ["TDL002"]) == [(2, 7, "TDL002")]


def test_tdl002_tensor_type_instantiated_or_set(lint):
    code = "import torch\na = torch.cuda.LongTensor([1])\nb = x.type(torch.cuda.FloatTensor)\n"
    assert lint(code, ["TDL002"]) == [(2, 5, "TDL002"), (3, 12, "TDL002")]


def test_tdl002_param_passed_on_is_a_device_use(lint):
    code = "import torch\ndef make(n, device='cuda'):\n    return torch.zeros(n, device=device)\n"
    assert lint(code, ["TDL002"]) == [(2, 20, "TDL002")]


def test_tdl002_long_try_is_not_a_guard(lint):
    body = "".join(f"    step{i}()\n" for i in range(6))
    code = f"try:\n{body}    model.cuda()\nexcept Exception:\n    pass\n"
    assert lint(code, ["TDL002"]) == [(8, 11, "TDL002")]


def test_tdl002_name_bound_but_never_used_as_device_is_silent(lint):
    assert lint("backend = 'cuda'\nprint(backend)\n", ["TDL002"]) == []


# --- TDL003 ------------------------------------------------------------------------------

TDL003_FLAGGED = {
    "plain": "import torch\nsd = torch.load('m.pt')\n",
    "from import": "from torch import load\nsd = load('m.pt')\n",
    "jit": "import torch\nm = torch.jit.load('m.ts')\n",
    "hub url": "import torch\nsd = torch.hub.load_state_dict_from_url('https://x/w.pt', progress=False)\n",
    "model_zoo": "from torch.utils import model_zoo\nsd = model_zoo.load_url('https://x/w.pt')\n",
    "module alias": "import torch.serialization as ser\nsd = ser.load('m.pt')\n",
    "weights_only": "import torch\nsd = torch.load('m.pt', weights_only=True)\n",
    "file object": "import torch\nwith open('m.pt', 'rb') as f:\n    sd = torch.load(f)\n",
    "save elsewhere": "import torch\ndef save(x):\n    torch.save(x, 'm.pt')\ndef load():\n    return torch.load('m.pt')\n",
}


@pytest.mark.parametrize("code", TDL003_FLAGGED.values(), ids=TDL003_FLAGGED.keys())
def test_tdl003_flags(lint, code):
    findings = lint(code, ["TDL003"])
    assert [f[2] for f in findings] == ["TDL003"], findings


def test_tdl003_position(lint):
    assert lint("import torch\nstate = torch.load('m.pt')\n", ["TDL003"]) == [(2, 9, "TDL003")]


TDL003_SILENT = {
    "star args": "import torch\ndef f(*a):\n    return torch.load(*a)\n",
    "hub positional map_location": "import torch\nsd = torch.hub.load_state_dict_from_url('u', 'dir', 'cpu')\n",
    # each imports torch: without it the prefilter drops the file before the check
    "method named load": "import torch\nckpt = checkpointer.load('m.pt')\n",
    "np load": "import numpy as np\nimport torch\na = np.load('a.npy')\n",
    "local function load": "import torch\ndef load(p):\n    return p\nload('x')\n",
    "round trip through another buffer": "import io, torch\ndef f(m):\n    buf = io.BytesIO()\n    torch.jit.save(m, buf)\n    copy = io.BytesIO(buf.getvalue())\n    return torch.jit.load(copy)\n",
    "torch rebound": "import torch\ntorch = Wrapper()\ntorch.load('x')\n",
}


@pytest.mark.parametrize("code", TDL003_SILENT.values(), ids=TDL003_SILENT.keys())
def test_tdl003_silent(lint, code):
    assert lint(code, ["TDL003"]) == []


# --- TDL004 ------------------------------------------------------------------------------

def test_tdl004_zip_and_tqdm_wrappers(lint):
    code = src("""
        import torch.nn as nn
        from tqdm import tqdm
        model = nn.Linear(2, 2).to(device)
        for (x, y), (u, v) in zip(tqdm(loader_a), loader_b):
            model(x)
            model(u.to(device))
    """)
    assert lint(code, ["TDL004"]) == [(5, 11, "TDL004")]


def test_tdl004_self_model_moved_in_init(lint):
    code = src("""
        import torch.nn as nn
        class Trainer:
            def __init__(self, device):
                self.model = nn.Linear(2, 2)
                self.model.to(device)
            def fit(self):
                for x, y in self.train_loader:
                    self.model(x)
    """)
    assert lint(code, ["TDL004"]) == [(8, 24, "TDL004")]


def test_tdl004_reports_each_value_once(lint):
    code = src("""
        import torch.nn as nn
        model = nn.Linear(2, 2).cuda()
        for x, y in loader:
            model(x)
            model(x)
    """)
    assert lint(code, ["TDL004"]) == [(4, 11, "TDL004")]


def test_tdl004_loss_alone_on_cpu_is_silent(lint):
    code = src("""
        import torch.nn as nn
        model = nn.Linear(2, 2).to(device)
        for x, y in loader:
            criterion(x, y)
    """)
    assert lint(code, ["TDL004"]) == []


def test_tdl004_lightning_step_is_silent(lint):
    code = src("""
        import torch.nn as nn
        model = nn.Linear(2, 2).to(device)
        def training_step(batch):
            for x, y in loader:
                model(x)
    """)
    assert lint(code, ["TDL004"]) == []


# --- noqa --------------------------------------------------------------------------------

NOQA_CASES = {
    "blanket": ("x.to('cpu')  # noqa\n", []),
    "specific": ("x.to('cpu')  # noqa: TDL001\n", []),
    "other code": ("x.to('cpu')  # noqa: TDL002\n", [(3, 1, "TDL001")]),
    # flake8's regex needs digits in a code, so "# noqa:TDL" is a blanket noqa there too.
    "prefix without digits is blanket": ("x.to('cpu')  # noqa:TDL\n", []),
    "code prefix": ("x.to('cpu')  # noqa: TDL0\n", []),
    "case and spacing": ("x.to('cpu')  # NOQA:TDL001,E501\n", []),
}


@pytest.mark.parametrize("line,expected", NOQA_CASES.values(), ids=NOQA_CASES.keys())
def test_noqa(lint, line, expected):
    assert lint("import torch\nx = torch.ones(1)\n" + line, ["TDL001"]) == expected


def test_noqa_follows_flake8_line_mapping(lint):
    # flake8 joins the lines of a multi-line string token, not of a bracketed statement.
    bracketed = "import torch\nx = torch.ones(1)\nx.to(\n    'cpu',\n)  # noqa: TDL001\n"
    assert lint(bracketed, ["TDL001"]) == [(3, 1, "TDL001")]
    string = "s = \'\'\'\nabc\'\'\'.cuda()  # noqa\n"
    assert lint(string, ["TDL002"]) == []


def test_file_level_flake8_noqa(lint):
    assert lint("# flake8: noqa\nimport torch\nx = torch.ones(1)\nx.cpu()\n") == []


def test_tdl004_model_rebound_after_the_move_is_judged_by_its_last_assignment(lint):
    code = src("""
        import torch.nn as nn
        def run(setup, device):
            model, loader = setup["cpu"]
            model.to(device)
            for batch in loader:
                model(**batch)
            model, loader = setup["prepared"]
            for batch in loader:
                model(**batch)
    """)
    assert lint(code, ["TDL004"]) == [(6, 17, "TDL004")]


def test_tdl004_move_after_the_loop_does_not_count_in_the_same_scope(lint):
    code = src("""
        import torch.nn as nn
        def run(device):
            model = nn.Linear(2, 2)
            for x, y in train_loader:
                model(x)
            model.to(device)
    """)
    assert lint(code, ["TDL004"]) == []


def test_tdl004_values_left_on_cpu_next_to_moved_ones_are_intentional(lint):
    # pytorch-tutorial's image captioning: lengths stay on the CPU for pack_padded_sequence.
    code = src("""
        import torch.nn as nn
        decoder = nn.LSTM(4, 4).to(device)
        for images, captions, lengths in data_loader:
            captions = captions.to(device)
            outputs = decoder(captions, lengths)
            loss = criterion(outputs, lengths)
    """)
    assert lint(code, ["TDL004"]) == [(6, 31, "TDL004")]  # a loss still needs it on the device


def test_tdl004_name_only_loaders_are_not_trusted_where_accelerate_prepares(lint):
    code = src("""
        import torch
        from accelerate import Accelerator
        from torch.utils.data import DataLoader
        def train(model, device, make):
            model.to(device)
            train_dataloader = make()
            for batch in train_dataloader:
                model(**batch)
            local = DataLoader(ds)
            for batch in local:
                model(**batch)
    """)
    assert lint(code, ["TDL004"]) == [(11, 17, "TDL004")]


def test_tdl004_model_parameter_moved_by_every_caller(lint):
    code = src("""
        import torch, torch.nn as nn
        def train(args, model, device, train_loader, optimizer):
            for data, target in train_loader:
                output = model(data)
        def evaluate(model, loader):
            for data, target in loader:
                model(data)
        def main():
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model = nn.Linear(2, 2).to(device)
            train(None, model, device, train_loader=None, optimizer=None)
            evaluate(nn.Linear(2, 2), None)
    """)
    # train's only caller passes a moved model; evaluate's passes one that never moved.
    assert lint(code, ["TDL004"]) == [(4, 24, "TDL004")]


TDL003_STILL_FLAGGED = {
    # a save() method beside a load() one: the object may hold what a user put on a GPU
    "save and load methods": src("""
        import torch
        class Retriever:
            def save(self, path):
                torch.save(self.embedded_docs, path)
            def load(self, path):
                self.embedded_docs = torch.load(path)
    """),
    # the scheduler's entry of a checkpoint that also holds the model's state
    "scheduler entry of a checkpoint": src("""
        import torch
        def resume(model, scheduler, path):
            checkpoint = torch.load(path)
            model.load_state_dict(checkpoint["model"])
            scheduler.load_state_dict(checkpoint["scheduler"])
    """),
    # a helper's caller passes a path nothing in the file wrote
    "helper called with an outside path": src("""
        import sys, torch
        def load_checkpoint(filepath):
            return torch.load(filepath)
        torch.save({}, "checkpoint.pth")
        state = load_checkpoint(sys.argv[1])
    """),
    # metadata is arbitrary state, not a dataset artifact
    "metadata": src("""
        import torch
        def resume(path):
            metadata = torch.load(path / "meta.pt")
            return metadata
    """),
    # a function named test_ outside a test module is a script's code
    "test-named function of a script": src("""
        import sys, torch
        def test_on_image(path):
            return torch.load(path)
        test_on_image(sys.argv[1])
    """),
    # resuming: the save comes after the load, so the load reads an earlier run's file
    "resume then save": src("""
        import os, torch
        def train(model, path):
            if os.path.exists(path):
                model.load_state_dict(torch.load(path))
            torch.save(model.state_dict(), path)
    """),
}


@pytest.mark.parametrize("code", TDL003_STILL_FLAGGED.values(), ids=TDL003_STILL_FLAGGED.keys())
def test_tdl003_evidence_that_does_not_count(lint, code):
    assert [c for _, _, c in lint(code, ["TDL003"])] == ["TDL003"]


TDL004_LOOP_EVIDENCE = {
    # imagenet: the criterion is moved like a model, yet it is the loss that meets the target
    "criterion moved to the device": (src("""
        import torch.nn as nn
        criterion = nn.CrossEntropyLoss().to(device)
        def train(loader, model, criterion, device):
            for images, target in loader:
                images = images.to(device, non_blocking=True)
                loss = criterion(model(images), target)
        train(None, None, criterion, device)
    """), [(6, 41)]),
    # mnist_hogwild: the input stays on the CPU while the target the output meets is moved
    "output of an unmoved input meets a moved target": (src("""
        import torch.nn.functional as F
        def train(model, device, loader):
            for data, target in loader:
                output = model(data)
                loss = F.nll_loss(output, target.to(device))
    """), [(4, 24)]),
    # PyG: the node features beside a moved graph
    "feature beside a moved graph": (src("""
        import torch
        model = Net().to(device)
        for batch in train_loader:
            out = model(batch.x, batch.edge_index.to(device))
    """), [(4, 17)]),
    # DDP moves its inputs, not the targets that meet its output
    "DistributedDataParallel output meets an unmoved target": (src("""
        import torch.nn.functional as F
        from torch.nn.parallel import DistributedDataParallel
        def run(rank, loader):
            model = DistributedDataParallel(Net().to(rank), device_ids=[rank])
            for batch in loader:
                out = model(batch.x, batch.edge_index)
                loss = F.cross_entropy(out, batch.y)
    """), [(7, 37)]),
}


@pytest.mark.parametrize("code,expected", TDL004_LOOP_EVIDENCE.values(), ids=TDL004_LOOP_EVIDENCE.keys())
def test_tdl004_loop_evidence(lint, code, expected):
    assert [(line, column) for line, column, _ in lint(code, ["TDL004"])] == expected


TDL004_STILL_SILENT = {
    "a length beside a moved value": src("""
        import torch.nn as nn
        decoder = nn.LSTM(4, 4).to(device)
        for images, captions, lengths in data_loader:
            outputs = decoder(captions.to(device), lengths)
    """),
    "a target moved to follow the output": src("""
        import torch.nn.functional as F
        for data, target in train_loader:
            model_output = net(data)
            target = target.to(model_output.device)
            loss = F.nll_loss(model_output, target)
    """),
    "DataParallel is given unmoved inputs": src("""
        import torch.nn as nn
        model = nn.DataParallel(Net().to(device))
        for images, labels in train_loader:
            loss = criterion(model(images), labels.to(device))
    """),
    "DataParallel output assigned, then meets a moved target": src("""
        import torch.nn as nn
        model = nn.DataParallel(Net().to(device))
        for images, labels in train_loader:
            out = model(images)
            loss = criterion(out, labels.to(device))
    """),
    "a loader told its device": src("""
        model = Net().to(device)
        train_loader = DistNeighborLoader(data=dataset, to_device=device)
        for batch in train_loader:
            loss = criterion(model(batch.x), batch.y)
    """),
}


@pytest.mark.parametrize("code", TDL004_STILL_SILENT.values(), ids=TDL004_STILL_SILENT.keys())
def test_tdl004_silent_with_loop_evidence_rules(lint, code):
    assert lint(code, ["TDL004"]) == []


TDL002_NEAR_GUARDS = {
    # a mark about something else guards nothing
    "unrelated mark": src("""
        import pytest, torch
        @pytest.mark.slow
        def test_big():
            torch.zeros(1, device="cuda")
    """),
    # exiting when the user asked for CUDA that is missing says nothing about the rest
    "exit only when CUDA was asked for": src("""
        import sys, torch
        def main(args):
            if args.cuda and not torch.cuda.is_available():
                sys.exit("no CUDA")
        x = torch.zeros(1, device="cuda")
    """),
    # asserting on a result is no requirement of the program
    "assert on a result": src("""
        import torch
        def test_move():
            out = torch.ones(1)
            assert not out.is_cuda
        y = torch.zeros(1).cuda()
    """),
    # marks that are not about CUDA, on a param that reaches the device directly
    "param without a CUDA mark": src("""
        import pytest, torch
        @pytest.mark.parametrize("t", [pytest.param(torch.ones(1, device="cuda"), marks=pytest.mark.slow)])
        def test_t(t):
            assert t.sum() == 1
    """),
}


@pytest.mark.parametrize("code", TDL002_NEAR_GUARDS.values(), ids=TDL002_NEAR_GUARDS.keys())
def test_tdl002_near_guards_still_report(lint, code):
    assert [c for _, _, c in lint(code, ["TDL002"])] == ["TDL002"]


# --- issue 13, point 3: a .cuda() statement whose copy is thrown away ---------------------

_BATCH_LOOP = """
    import torch
    from torch.utils.data import DataLoader

    model = torch.nn.Linear(4, 2).cuda()
    loader = DataLoader(data, batch_size=1)
    for batch in loader:
        {statement}
        {use}
"""


@pytest.mark.parametrize("statement,use", [
    ('batch["input"].cuda()', 'model(batch["input"])'),
    ('batch["input"].to("cpu")', "model(**batch)"),
    ("batch.x.cuda()", "model(batch.x)"),
    ('batch["label"].cuda()', 'inputs = batch["input"].to("cpu")'),
], ids=["item fed to the model", "batch unpacked into the model", "attribute", "other item moved"])
def test_tdl001_reports_a_discarded_move_of_a_batch_item(lint, statement, use):
    code = src(_BATCH_LOOP.format(statement=statement, use=use))
    assert (7, 5, "TDL001") in lint(code, ["TDL001"])


@pytest.mark.parametrize("statement,use", [
    ("batch.x.cuda()", "print(batch.x)"),  # the loop neither feeds nor moves the batch
    ("batch.x.cuda()", 'inputs = other.x.to("cpu")'),  # it moves something else
    ("batch.x.cuda()", "model(other)"),  # the model gets something else
], ids=["not used by a model", "moves something else", "feeds something else"])
def test_tdl001_stays_silent_on_batch_attributes_the_loop_does_not_use(lint, statement, use):
    assert lint(src(_BATCH_LOOP.format(statement=statement, use=use)), ["TDL001"]) == []


def test_tdl001_proposes_assigning_a_batch_item_only_by_string_key():
    from torchdevlint.engine import lint_source
    code = src(_BATCH_LOOP.format(statement='batch["input"].cuda()\n        batch[0].cuda()',
                                  use="model(batch)"))
    messages = [f.message for f in lint_source(code, "s.py").findings if f.code == "TDL001"]
    assert messages[0].endswith('assign it (`batch["input"] = batch["input"].cuda()`)')
    # a PyG Batch's item is a Data object: no assignment proposed for an integer index
    assert messages[1].endswith("use the result or remove the statement")


def test_tdl002_says_a_discarded_cuda_result_is_unused(lint):
    from torchdevlint.engine import lint_source
    code = src("""
        import torch

        def f(thing, model: torch.nn.Module):
            thing.cuda()
            model.cuda()
            return thing
    """)
    findings = lint_source(code, "s.py").findings
    by_line = {f.line: f.message for f in findings if f.code == "TDL002"}
    assert "its result is unused, so unless `thing` is a module nothing moves" in by_line[4]
    assert "unused" not in by_line[5]  # a module moves in place


def test_tdl002_says_a_discarded_tensor_copy_does_not_move(lint):
    from torchdevlint.engine import lint_source
    code = "import torch\nx = torch.ones(2)\nx.cuda()\n"
    message = [f.message for f in lint_source(code, "s.py").findings if f.code == "TDL002"][0]
    assert "its result is unused, so the tensor does not move" in message


# --- every silent snippet reaches its rule's check ----------------------------------------

# A snippet the prefilter drops (required_text, or could_report_in on Python's ast as
# lint_source uses it) is never seen by the rule: its test would pass whatever the check does.
# So each is also linted with the prefilters off, where the check itself must be silent.
SILENT_SNIPPETS = [
    (code, name, snippet)
    for code, cases in [("TDL001", TDL001_SILENT), ("TDL002", TDL002_SILENT),
                        ("TDL003", TDL003_SILENT), ("TDL004", TDL004_STILL_SILENT)]
    for name, snippet in cases.items()
]


@pytest.mark.parametrize("code,snippet", [(c, s) for c, _, s in SILENT_SNIPPETS],
                         ids=[f"{c}-{n}" for c, n, _ in SILENT_SNIPPETS])
def test_silent_snippets_are_silent_without_the_prefilter(code, snippet):
    from torchdevlint.config import select_rules
    from torchdevlint.engine import lint_source
    result = lint_source(snippet, "snippet.py", select_rules([code]), prefilter=False)
    assert [f for f in result.findings if f.code == code] == []


# --- TDL004: loader keyword arguments chosen by a conditional ------------------------------

_KWARGS_LOADER = """
    import torch
    from torch.utils.data import DataLoader

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    kwargs = {{'num_workers': 1, 'pin_memory': True}} if use_cuda else {{}}
    loader = DataLoader(dataset, batch_size=64, **kwargs)
    model = Net().to(device)


    def train():
        for data, target in loader:
            output = model(data)
"""


def test_tdl004_reads_loader_kwargs_chosen_by_a_conditional(lint):
    """pytorch/examples' pattern: every key either branch may pass is known, none of them a
    device, so the batches arrive on the CPU (before, the conditional hid them: silent)."""
    assert lint(src(_KWARGS_LOADER.format()), ["TDL004"]) == [(12, 24, "TDL004")]


def test_tdl004_stays_silent_when_a_branch_may_pass_a_device(lint):
    code = src(_KWARGS_LOADER.format().replace("else {}", "else {'device': device}"))
    assert lint(code, ["TDL004"]) == []


def test_tdl004_stays_silent_when_a_branch_is_unknown(lint):
    code = src(_KWARGS_LOADER.format().replace("else {}", "else other_kwargs"))
    assert lint(code, ["TDL004"]) == []
