"""The project index (issue 27): facts that cross files, the same in every front end.

Each project under fixtures/projects/ holds the cross-file false case (silent only with the
index: the test runs it without the index too) and a nearby real bug in another file
(reported, naming the file that proves it where the message depends on one).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli
from torchdevlint import project_index
from torchdevlint.project_index import ProjectIndex, summarize

PROJECTS = FIXTURES / "projects"

# What each fixture project reports with the index, and what it reports without it.
EXPECTED = {
    # (also through a call of the module: ``flags.multi_process()`` in report.py's gather)
    "guard_across_imports": {("report.py", 9, "TDL002", None)},
    # (features.pt is written by features.py, a program that puts nothing on an accelerator,
    # nor does the model.py it imports: silent; embed.py's embeddings.pt comes from
    # encoder.py, which moves what it encodes: reported)
    "writer_provenance": {("evaluate.py", 9, "TDL003", "written from device state in train.py:9"),
                          ("evaluate.py", 11, "TDL003", None)},
    # (Unused is moved nowhere, but a library class is reported as its users move it: its
    # forward adds a CPU tensor to its input)
    "module_moved": {("models.py", 20, "TDL007", "moved to an accelerator in main.py:8"),
                     ("models.py", 25, "TDL007", "a library class: its users move it")},
    # engine.py's loop gets its model from main.py, moved; fit() gets a device loader there
    # (silent); metrics.py's helpers get a device tensor from every call, except summarize(),
    # which report.py calls with a CPU tensor (silent)
    "placement_across_calls": {
        ("engine.py", 6, "TDL004", "`x` comes from the data loader on the CPU and is passed to "
                                   "`model`, which was moved to a device (every call passes a "
                                   "moved model, as main.py:16 does)"),
        ("engine.py", 6, "TDL004", "`y` comes from the data loader on the CPU and is passed to "
                                   "`F.cross_entropy` with the output of `model` (on a device: "
                                   "every call passes a moved model, as main.py:16 does)"),
        ("metrics.py", 6, "TDL008", "every call of `to_numpy` passes one on an accelerator, as "
                                    "main.py:19 does"),
        ("metrics.py", 14, "TDL011", "every call of `scale` passes one on an accelerator, as "
                                     "main.py:19 does"),
        # sharded.py wraps the moved model in FSDP, which moves the inputs it is called with:
        # train_sharded's `x` is silent, its `y` meets the wrapper's output on the device;
        # train_maybe_sharded gets the model wrapped on one path only
        ("engine.py", 22, "TDL004", "`y` comes from the data loader on the CPU and is passed "
                                    "to `F.cross_entropy` with the output of `model`"),
        ("engine.py", 30, "TDL004", "`x` comes from the data loader on the CPU and is passed to "
                                    "`model`, which was moved to a device (every call passes a "
                                    "moved model, as sharded.py:27 does)"),
        ("engine.py", 30, "TDL004", "`y` comes from the data loader on the CPU"),
    },
    # Masked is moved by train.py (reported, naming it); Smoothed by nothing: the script of
    # model.py runs it on the CPU (silent)
    "buffer_moved": {("model.py", 9, "TDL005", "another file moves it to an accelerator: train.py:6")},
    # no file checks for an accelerator or names "cpu": GPU-only, TDL002 off (TDL003 stays)
    "gpu_only": {("train.py", 7, "TDL003", None)},
    # train.py calls distributed.init_distributed_mode, which exits without CUDA (silent);
    # evaluate.py has a CPU path and hard-codes .cuda() anyway (reported); three_nn.py's
    # work is a compiled extension's (silent, in-file); knn.py allocates CUDA memory alone
    "program_stops_without_cuda": {("evaluate.py", 8, "TDL002", None),
                                   ("knn.py", 5, "TDL002", None)},
    # fp8_benchmark.py imports Transformer Engine (CUDA-only) at its top level and
    # colab_gpu.ipynb asks Colab for a GPU runtime with no CPU path (silent); fused_adam.py
    # imports Apex only if it can, colab_with_cpu_path.ipynb chooses the CPU in a cell and
    # local.ipynb asks for no GPU (reported)
    "program_gpu_evidence": {("fused_adam.py", 10, "TDL002", None),
                             ("colab_with_cpu_path.ipynb", 1, "TDL002", None),
                             ("local.ipynb", 1, "TDL002", None)},
    # curve.py's curve_fn has a twin beside it (average_precision_fn: the same parameters)
    # that copies them to the host before NumPy (reported, naming it); histogram_fn has none,
    # and scripts/plot.py's twin lies in another folder (silent)
    "twin_conversions": {
        ("curve.py", 7, "TDL008", "`average_precision_fn` in average_precision.py:7, a function "
                                  "of the same parameters, copies `y_targets` to the host"),
        ("curve.py", 8, "TDL008", "copies `y_preds` to the host")},
    # the README says sampling needs a GPU: sample.py and the models.py it imports have no
    # CPU path (silent); evaluate.py imports common.py, which checks for CUDA, and export.py
    # has a --no-cuda option: both would run on the CPU but for the hard-coded device
    "program_readme_requirement": {("evaluate.py", 7, "TDL002", None),
                                   ("export.py", 10, "TDL002", None)},
    # train() reads what it just had utils.py write (a project helper given the file's name,
    # a method of a project object that writes it): a round trip, silent; resume() reads the
    # same files before anything of the run wrote them: reported
    "round_trip_across_files": {("train.py", 18, "TDL003", None),
                                ("train.py", 19, "TDL003", None)},
    # the stopper object called (its ``__call__`` saves) before the load of what it saved;
    # ``utils.tools`` is the copy beside the importer's enclosing folder
    "round_trip_through_a_stopper": {("exp_main.py", 26, "TDL003", None)},
    # compute_loss (models/lander.py, re-exported by models/__init__.py) returns the loss and
    # two ``.item()`` numbers: the lists of numbers are silent, the list of losses is not
    "numbers_from_another_file": {("train.py", 16, "TDL010", None), ("train.py", 20, "TDL008", None)},
    # a library class's "cuda" default that every call of the project passes (beside
    # ``**cfg``) is silent; a function one call leaves the default of, a class built without
    # arguments, and a class a YAML configuration names are not
    "default_passed_across_files": {("schedule.py", 17, "TDL002", None),
                                    ("schedule.py", 25, "TDL002", None),
                                    ("schedule.py", 33, "TDL002", None)},
    # MAML is a module class of the project (lib/algorithms.py): its .to() moves it in place;
    # the tensor's discarded .to() beside it is reported
    "move_of_a_project_object": {("test_maml.py", 12, "TDL001", None)},
    # Trainer.save writes through its base class's helper (lib/base.py), parameters by name:
    # the load of what it saved is a round trip; another file of the same folder is not
    "round_trip_through_a_base_class": {("run.py", 12, "TDL003", None)},
    # the project ships models/cpu_weights.pt (CPU storages: silent, also through the helper
    # _load_into, whose only call passes it) and models/gpu_weights.pt (saved on CUDA:
    # reported, naming it); latest.pt is not there
    "shipped_checkpoints": {("demo.py", 13, "TDL003", "the project ships models/gpu_weights.pt, "
                                                      "whose tensors were saved on cuda"),
                            ("demo.py", 17, "TDL003", None)},
    # utils.load_weights loads G's and D's weights only when they are not None, and every
    # call that passes them (train.py, sample.py's second) moved them with .cuda() before:
    # silent; its counters load is reached by sample.py's first call, before any CUDA use,
    # and load_model by export.py's, before its .cuda() (reported); the .cuda() moves
    # themselves are TDL002's
    "load_after_cuda_use": {("utils.py", 9, "TDL003", None), ("utils.py", 13, "TDL003", None),
                            ("train.py", 6, "TDL002", None), ("train.py", 8, "TDL002", None),
                            ("sample.py", 8, "TDL002", None), ("export.py", 8, "TDL002", None)},
}
WITHOUT_INDEX = {
    "guard_across_imports": {("report.py", 9, "TDL002"), ("report.py", 16, "TDL002"),
                             ("train.py", 8, "TDL002"), ("train.py", 14, "TDL002")},
    "writer_provenance": {("evaluate.py", 8, "TDL003"), ("evaluate.py", 9, "TDL003"),
                          ("evaluate.py", 10, "TDL003"), ("evaluate.py", 11, "TDL003")},
    "module_moved": {("models.py", 20, "TDL007"), ("models.py", 25, "TDL007")},
    "placement_across_calls": set(),
    "buffer_moved": set(),
    "gpu_only": {("train.py", 8, "TDL002"), ("train.py", 9, "TDL002"), ("model.py", 11, "TDL002"),
                 ("train.py", 7, "TDL003")},
    "program_stops_without_cuda": {("train.py", 10, "TDL002"), ("train.py", 11, "TDL002"),
                                   ("evaluate.py", 8, "TDL002"), ("knn.py", 5, "TDL002")},
    "program_gpu_evidence": {("fp8_benchmark.py", 6, "TDL002"), ("fp8_benchmark.py", 7, "TDL002"),
                             ("fused_adam.py", 10, "TDL002"), ("colab_gpu.ipynb", 1, "TDL002"),
                             ("colab_with_cpu_path.ipynb", 1, "TDL002"),
                             ("local.ipynb", 1, "TDL002")},
    "twin_conversions": set(),
    "program_readme_requirement": {("sample.py", 5, "TDL002"), ("sample.py", 6, "TDL002"),
                                   ("evaluate.py", 7, "TDL002"), ("export.py", 10, "TDL002")},
    "round_trip_across_files": {("train.py", 12, "TDL003"), ("train.py", 14, "TDL003"),
                                ("train.py", 18, "TDL003"), ("train.py", 19, "TDL003")},
    "round_trip_through_a_stopper": {("exp_main.py", 20, "TDL003"), ("exp_main.py", 26, "TDL003")},
    "numbers_from_another_file": {("train.py", 16, "TDL010"), ("train.py", 19, "TDL008"),
                                  ("train.py", 20, "TDL008")},
    "default_passed_across_files": {("schedule.py", 12, "TDL002"), ("schedule.py", 17, "TDL002"),
                                    ("schedule.py", 25, "TDL002"), ("schedule.py", 33, "TDL002")},
    "move_of_a_project_object": {("test_maml.py", 9, "TDL001"), ("test_maml.py", 12, "TDL001")},
    "round_trip_through_a_base_class": {("run.py", 10, "TDL003"), ("run.py", 12, "TDL003")},
    "shipped_checkpoints": {("demo.py", 9, "TDL003"), ("demo.py", 13, "TDL003"),
                            ("demo.py", 17, "TDL003"), ("demo.py", 21, "TDL003")},
    "load_after_cuda_use": {("utils.py", 6, "TDL003"), ("utils.py", 8, "TDL003"),
                            ("utils.py", 9, "TDL003"), ("utils.py", 13, "TDL003"),
                            ("train.py", 6, "TDL002"), ("train.py", 8, "TDL002"),
                            ("sample.py", 8, "TDL002"), ("export.py", 8, "TDL002")},
}


@pytest.fixture(autouse=True)
def fresh_indexes():
    project_index.forget()
    yield
    project_index.forget()


def copy_project(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(PROJECTS / name, target, ignore=shutil.ignore_patterns(".torchdevlint_cache"))
    return target


def cli_json(*args, cwd, env=None):
    result = subprocess.run([sys.executable, "-m", "torchdevlint", "--output-format", "json",
                             *map(str, args)], cwd=cwd, capture_output=True, text=True,
                            env={**os.environ, **(env or {})})
    assert "Traceback" not in result.stderr, result.stderr
    return {(Path(f["path"]).name, f["line"], f["code"], f["message"])
            for f in json.loads(result.stdout)}


def matches(found: set, expected: set) -> bool:
    """Each expected (file, line, code, words in the message) found, and nothing else."""
    if len(found) != len(expected):
        return False
    return all(any((name, line, code) == item[:3] and (words is None or words in item[3])
                   for item in found) for name, line, code, words in expected)


# -- summaries --------------------------------------------------------------------------


def test_summary_records_guards_classes_moves_saves_and_imports():
    summary = summarize(
        "import os\nimport torch\nfrom . import flags\nfrom .flags import FAST as F\n"
        "ON = torch.cuda.is_available() and os.environ.get('X')\n"
        "BOTH = ON and F\nNAME = 'w.pt'\n"
        "def enabled():\n    return torch.distributed.is_initialized()\n"
        "class Net(torch.nn.Module):\n    def __init__(self):\n        self.head = Head()\n"
        "def main(device):\n    model = Net().to(device)\n    cpu = Net().to('cpu')\n"
        "    torch.save(model.state_dict(), 'ckpt.pt')\n"
        "    torch.save({k: v.cpu() for k, v in model.state_dict().items()}, NAME)\n"
        "    torch.save(model, os.path.join('out', 'x.pth'))\n"
        "    other = torch.load('ckpt.pt')\n")
    assert summary["names"]["ON"]["tests"] == ["cuda"]
    assert summary["names"]["BOTH"] == {"line": 6, "tests": [], "refs": ["F", "ON"],
                                        "kind": "name"}
    assert summary["names"]["enabled"]["tests"] == ["dist"]
    assert summary["classes"]["Net"]["bases"] == ["torch.nn.Module"]
    assert summary["classes"]["Net"]["uses"] == ["Head"]
    assert ["Net", 14, True] in summary["moves"] and ["Net", 15, False] in summary["moves"]
    assert summary["saves"] == [[16, ["ckpt.pt"], "device"], [17, ["w.pt"], "cpu"],
                                [18, ["x.pth"], "device"]]
    assert summary["loads"] == ["ckpt.pt"]
    assert [1, "", "flags", "flags"] in summary["imports"]
    assert [1, "flags", "FAST", "F"] in summary["imports"]


def test_summary_records_what_each_call_into_the_project_passes():
    summary = summarize(
        "import torch\nimport engine\nfrom utils import to_np, DeviceLoader\n"
        "def main(device, loader):\n    model = Net().to(device)\n"
        "    dl = DeviceLoader(loader, device)\n    x = torch.zeros(3, device=device)\n"
        "    y = torch.ones(2).to(device)\n    y = y.cpu()\n"
        "    engine.train(model, loader, device)\n    engine.fit(model=model, loader=dl)\n"
        "    to_np(x, y, *rest)\n    to_np(x.cuda())\n    torch.save(x, 'x.pt')\n")
    assert summary["defs"] == ["main"]
    assert summary["calls"] == [
        ["DeviceLoader", 6, ["", ""], {}, 0],
        ["engine.train", 10, ["model", "", ""], {}, 0],
        ["engine.fit", 11, [], {"model": "model", "loader": "loader"}, 0],
        ["to_np", 12, None, {}, 0],  # a starred argument: no parameter is matched
        ["to_np", 13, ["moved"], {}, 0]]  # (torch.save: outside the project, not recorded)
    assert summary["cuda"] is True and summary["cpu_path"] is False  # (`.cpu()` names no device)
    assert summarize("import torch\nd = 'cuda' if torch.cuda.is_available() else 'cpu'\n")[
        "cpu_path"] is True
    assert summarize("import torch\nx = torch.zeros(2, device='cuda:0')\n")["cuda"] is True


def test_summary_records_helpers_that_stop_without_cuda_and_the_calls_that_run_them():
    summary = summarize(
        "import sys\nimport torch\nimport utils\nimport a.b\nfrom .dist import init as go\n"
        "def launch(args):\n    if 'RANK' in args:\n        pass\n"
        "    elif torch.cuda.is_available():\n        pass\n    else:\n        sys.exit(1)\n"
        "def strict():\n    assert torch.cuda.is_available()\n"
        "def nccl():\n    torch.distributed.init_process_group(backend='nccl')\n"
        "def refuse():\n    if not torch.cuda.is_available():\n        raise RuntimeError()\n"
        "def lenient(args):\n    if args.cuda and not torch.cuda.is_available():\n        sys.exit(1)\n"
        "def gloo():\n    torch.distributed.init_process_group('gloo')\n"
        "def main():\n    utils.setup(1)\n    x = go()\n    if x:\n        utils.later()\n"
        "if __name__ == '__main__':\n    a.b.run()\n")
    assert summary["stops"] == {"launch": 6, "strict": 13, "nccl": 15, "refuse": 17}
    # statements of top-level functions and of the __main__ block, not nested ones
    assert summary["entry_calls"] == [["torch.distributed.init_process_group", 16],
                                      ["torch.distributed.init_process_group", 24],
                                      ["utils.setup", 26], ["go", 27], ["a.b.run", 31]]
    assert list(project_index._entry_callees(summary))[2:] == ["utils.setup", ".dist.init",
                                                               "a.b.run"]


def test_summary_records_which_calls_come_after_a_statement_that_fails_without_cuda():
    summary = summarize(
        "import sys\nimport torch\nimport utils\n"
        "def run(config):\n    device = 'cuda'\n    utils.load(None, config)\n"
        "    G = Generator(**config).to(device)\n    utils.load(G, config)\n"
        "    if config.more:\n        utils.load(G, None)\n"
        "def chosen(config, device):\n    G = Generator().to(device)\n    utils.load(G)\n"
        "def rebound(config):\n    device = 'cuda'\n    if config.cpu:\n        device = 'cpu'\n"
        "    G = Generator().to(device)\n    utils.load(G)\n"
        "def nested(G):\n    if G is not None:\n        G.cuda()\n    utils.load(G)\n"
        "    def inner():\n        utils.load(G)\n"
        "def pinned(G):\n    torch.cuda.set_device(0)\n    utils.load(G)\n"
        "def required(G):\n    if not torch.cuda.is_available():\n        sys.exit(1)\n"
        "    utils.load(G)\n"
        "net = Net().cuda()\nutils.load(net)\n")
    after = {line: entry[4] for entry in summary["calls"] for line in [entry[1]]}
    # after ``.to(device)`` with ``device`` bound only to "cuda" (line 8, and line 10 in a
    # block below it), not before it (6); not after a device chosen at run time (13) or a
    # name also bound to "cpu" (19); not after a ``.cuda()`` in a branch (23) nor in a
    # nested function (25); after ``set_device`` (28), an exit without CUDA (32), and a
    # ``.cuda()`` of the module's own code (34)
    assert after == {6: 0, 8: 1, 10: 1, 13: 0, 19: 0, 23: 0, 25: 0, 28: 1, 32: 1, 34: 1}
    # a literal None is recorded as such: the helper's ``if G is not None:`` skips it
    assert summary["calls"][0][2] == ["none", ""]
    assert summary["calls"][2][2] == ["model", "none"]


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # (pytest's own filters show them)
def test_a_file_of_python_3_6_is_summarised_in_its_grammar_without_warnings():
    """``x.cuda(async=True)`` (``async`` a keyword since 3.7): the linter reports the file
    as E999, but its calls are facts of the project (darts' ``cnn/test.py``); the
    SyntaxWarnings of a file's text do not reach the run's stderr."""
    summary = summarize("import torch\nimport utils\ndef main(model, path):\n"
                        "    model = model.cuda()\n    utils.load(model, path)\n"
                        "    return torch.ones(2).cuda(async=True)\n")
    assert summary["calls"] == [["utils.load", 5, ["moved", ""], {}, 1]]
    assert summarize("x = [0x1for x in y]\n")["names"]["x"]["refs"] == ["x", "y"]
    # (pytest records every warning whatever the filters: a process of its own shows stderr)
    quiet = subprocess.run(
        [sys.executable, "-c", "from torchdevlint.project_index import summarize\n"
                               "summarize('x = [0x1for x in y]\\n')"],
        capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr


def test_a_load_reached_only_from_a_python_3_6_file_after_cuda_use_is_silent(tmp_path):
    """darts' ``utils.load(model, path)``, whose only caller (in a file of Python 3.6) moves
    the model with ``.cuda()`` first: the ``torch.load`` inside ``def load`` is torch's, not
    a call of the helper. Another file that calls it before any CUDA use is reported."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "utils.py").write_text(
        "import torch\n\n\ndef load(model, path):\n    model.load_state_dict(torch.load(path))\n")
    (tmp_path / "test.py").write_text(
        "import sys\nimport torch\nimport utils\n\n\ndef main(path):\n"
        "    if not torch.cuda.is_available():\n        sys.exit(1)\n"
        "    model = torch.nn.Linear(2, 2).cuda()\n    utils.load(model, path)\n"
        "    return model(torch.ones(2).cuda(async=True))\n")
    found = {item[:3] for item in cli_json(".", cwd=tmp_path)}
    assert found == {("test.py", 11, "E999")}
    (tmp_path / "export.py").write_text(
        "import torch\nimport utils\n\n\ndef main(path):\n"
        "    model = torch.nn.Linear(2, 2)\n    utils.load(model, path)\n    return model\n")
    found = {item[:3] for item in cli_json(".", cwd=tmp_path)}
    assert found == {("test.py", 11, "E999"), ("utils.py", 5, "TDL003")}


def test_summary_says_whether_the_file_may_put_anything_on_an_accelerator():
    """``places``: a device, CUDA or a GPU named (also in prose), a move, a launcher;
    ``reads``: a read that may hold device tensors. A save of a file with neither is
    ``unplaced`` (``ProjectIndex.writes`` asks the modules it imports too)."""
    def facts(text):
        summary = summarize("import json\nimport numpy as np\nimport torch\n" + text +
                            "torch.save(x, 'x.pt')\n")
        return summary["places"], summary["reads"], summary["saves"][0][2]
    assert facts("x = torch.from_numpy(np.load('a.npy')) * json.load(open('s'))['k']\n") == (
        False, False, "unplaced")
    assert facts("x = torch.load('a.pt', map_location='cpu')['w'].float()\n") == (
        False, False, "unplaced")
    assert facts("x = torch.load('a.pt')['w'].float()\n") == (False, True, "unknown")
    assert facts("x = AutoModel.from_pretrained('m').embed(y)\n") == (False, True, "unknown")
    assert facts("x = y.to(dev) + 1\n") == (True, False, "unknown")
    assert facts("x = y + 1  # on the GPU\n") == (True, False, "unknown")
    assert facts("trainer = Trainer(model)\nx = y + 1\n") == (True, False, "unknown")
    assert facts("x = y.to(torch.float16)\n") == (False, False, "unplaced")
    # what a function saves is its own only where no caller hands it anything
    saves = summarize("import torch\ndef main():\n    torch.save(make(), 'a.pt')\n"
                      "    def inner():\n        torch.save(make(), 'b.pt')\n"
                      "def helper(model):\n    torch.save(model.state_dict(), 'c.pt')\n"
                      "    def inner():\n        torch.save(make(), 'd.pt')\n")["saves"]
    assert [kind for _, _, kind in saves] == ["unplaced", "unplaced", "unknown", "unknown"]


def test_a_file_python_cannot_parse_has_an_empty_summary():
    assert summarize("def (:\n") == {"imports": [], "names": {}, "classes": {}, "moves": [],
                                     "saves": [], "loads": [], "load_paths": [], "defs": [],
                                     "calls": [],
                                     "cuda": False, "cpu_path": False, "stops": {},
                                     "entry_calls": [], "requires": [], "signatures": [],
                                     "host_copies": [], "writers": [], "host_returns": [],
                                     "places": True, "reads": True}


def test_summary_records_what_each_function_and_class_writes_and_from_which_parameters():
    summary = summarize(
        "import torch\nfrom pathlib import Path\n"
        "def save_model(model, target_dir, model_name):\n"
        "    path = Path(target_dir) / model_name\n"
        "    torch.save(obj=model.state_dict(), f=path)\n"
        "def fixed(model):\n    torch.save(model, 'm.pt')\n"
        "class Stopper:\n    def save(self, model):\n"
        "        torch.save(model.state_dict(), 'es.pt')\n"
        "        torch.save(model.state_dict(), self.path)\n")
    assert summary["writers"] == [["save_model", 5, [], ["model_name", "target_dir"]],
                                  ["fixed", 7, ["m.pt"], []], ["Stopper", 10, ["es.pt"], []]]
    # (the file puts nothing on an accelerator, but these save what a caller hands them)
    assert summary["saves"] == [[7, ["m.pt"], "unknown"], [10, ["es.pt"], "unknown"]]


def test_summary_records_signatures_and_host_copies_of_top_level_functions():
    summary = summarize(
        "def score(y_preds, y_targets):\n    return y_targets.detach().cpu().numpy()\n"
        "def rebound(y_preds, y_targets):\n    y_preds = y_preds.cpu()\n"
        "    return y_preds.cpu().numpy(), y_targets.to('cpu').float().numpy()\n"
        "def one(x):\n    return x.cpu().numpy()\n"
        "def fancy(a, b):\n    return a.cpu().tolist(), b.cpu().argmax().numpy()\n")
    assert summary["signatures"] == [["score", 1, ["y_preds", "y_targets"]],
                                     ["rebound", 3, ["y_preds", "y_targets"]],
                                     ["fancy", 8, ["a", "b"]]]
    # (a rebound name is not what the caller gave; argmax is no copy's chain)
    assert summary["host_copies"] == [["score", "y_targets"], ["rebound", "y_targets"]]


# -- the index and its cache ----------------------------------------------------------------


def test_cross_file_questions_on_the_fixture_projects(tmp_path):
    guard = ProjectIndex(copy_project("guard_across_imports", tmp_path)).build()
    assert guard.guard("train.py", "config.flags.USE_FUSED") == ("USE_FUSED", "config/flags.py", 6)
    assert guard.guard("train.py", "config.flags.multi_process")[0] == "multi_process"
    assert guard.guard("report.py", "config.flags.VERBOSE") is None
    assert guard.guard("report.py", "os.environ") is None  # outside the project
    writers = ProjectIndex(copy_project("writer_provenance", tmp_path)).build()
    assert writers.writes(["weights_cpu.pt"]) == [("export.py", 9, "cpu")]
    assert writers.writes(["checkpoint.pt"]) == [("train.py", 9, "device")]
    moved = ProjectIndex(copy_project("module_moved", tmp_path)).build()
    assert moved.is_module_class("models.py", "Head")
    assert moved.moved_to_accelerator("models.py", "Net") == ("main.py", 8)
    assert moved.moved_to_accelerator("models.py", "Head") == ("main.py", 8)  # inside Net
    assert moved.moved_to_accelerator("models.py", "Unused") is None
    calls = ProjectIndex(copy_project("placement_across_calls", tmp_path)).build()
    assert calls.callers("engine.py", "fit") == [("main.py", 17, ["model", "loader", ""], {}, 0)]
    assert sorted(calls.callers("metrics.py", "summarize")) == [
        ("main.py", 19, ["tensor"], {}, 0), ("report.py", 8, [""], {}, 0)]
    assert calls.placed_by_callers() == {"engine.py", "metrics.py"}
    view = project_index.ProjectView(calls, "metrics.py")
    assert view.passed_by_every_caller("to_numpy", "scores", 0, ("tensor",)) == (1, "main.py:19")
    assert view.passed_by_every_caller("summarize", "scores", 0, ("tensor",)) is None
    assert view.passed_by_every_caller("unknown", "x", 0, ("tensor",)) == (0, None)


def test_relative_imports_resolve_inside_packages(tmp_path):
    root = tmp_path / "proj"
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "flags.py").write_text("import torch\nGPU_OK = torch.cuda.is_available()\n")
    (root / "pkg" / "sub" / "__init__.py").write_text("")
    (root / "pkg" / "sub" / "run.py").write_text("from ..flags import GPU_OK\n")
    index = ProjectIndex(root).build()
    assert index.guard("pkg/sub/run.py", "..flags.GPU_OK") == ("GPU_OK", "pkg/flags.py", 2)
    assert index.guard("pkg/sub/run.py", ".flags.GPU_OK") is None  # pkg.sub.flags: no such


def test_names_and_functions_that_read_each_other_in_a_ring_are_no_guard(tmp_path):
    """A question that follows what a name reads ends, however the names refer to each other
    (dgl's test modules: a call of a project function in a test asks the index)."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "backend.py").write_text(
        "def ping():\n    \"\"\"Whether the backend is up (cuda or not).\"\"\"\n    return pong()\n\n\n"
        "def pong():\n    return ping()\n")
    (root / "test_ring.py").write_text(
        "import torch\nimport backend\n\n\ndef test_it():\n    if backend.ping():\n"
        "        return torch.zeros(1).cuda()\n")
    index = ProjectIndex(root).build()
    assert index.guard("test_ring.py", "backend.ping") is None
    assert {i[:3] for i in cli_json(".", cwd=root)} == {("test_ring.py", 7, "TDL002")}


def test_a_warm_index_summarises_nothing_and_a_change_only_that_file(tmp_path):
    root = copy_project("writer_provenance", tmp_path)
    cold = ProjectIndex(root).build()
    assert cold.summarised == len(list(root.glob("*.py")))  # every .py file of the project
    keys = {relpath: cold.dependency_key(relpath) for relpath in cold.files}
    warm = ProjectIndex(root).build()
    assert warm.summarised == 0
    assert {relpath: warm.dependency_key(relpath) for relpath in warm.files} == keys
    train = root / "train.py"
    train.write_text(train.read_text().replace("model.state_dict()", "model.cpu().state_dict()"))
    changed = ProjectIndex(root).build()
    assert changed.summarised == 1
    after = {relpath: changed.dependency_key(relpath) for relpath in changed.files}
    # only the file that loads what train.py writes depends on it
    assert {relpath for relpath in after if after[relpath] != keys[relpath]} == {"evaluate.py"}


def test_a_loose_script_directory_is_not_walked(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "b.py").write_text("y = 2\n")
    index = project_index.index_for(str(tmp_path / "a.py"))
    assert sorted(index.files) == ["a.py"]


def test_background_mode_answers_none_until_ready(tmp_path, monkeypatch):
    root = copy_project("guard_across_imports", tmp_path)
    monkeypatch.setitem(project_index._settings, "background", True)
    monkeypatch.setitem(project_index._settings, "background_above", 0)
    asked = project_index.pending_asks()
    assert project_index.view_for(str(root / "train.py")) is None
    assert project_index.pending_asks() == asked + 1
    for _ in range(500):
        if project_index.ready(str(root / "train.py")):
            break
        time.sleep(0.01)
    view = project_index.view_for(str(root / "train.py"))
    assert view is not None and view.guard("config.flags.USE_FUSED")[1] == "config/flags.py:6"


# -- every front end ---------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_cli_on_the_whole_project_and_without_the_index(name, tmp_path):
    root = copy_project(name, tmp_path)
    found = cli_json(".", cwd=root)
    assert matches(found, EXPECTED[name]), found
    without = cli_json(".", "--no-cache", cwd=root, env={"TORCHDEVLINT_NO_INDEX": "1"})
    assert {item[:3] for item in without} == WITHOUT_INDEX[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_cli_on_one_file_and_flake8_agree_with_the_whole_project(name, tmp_path):
    root = copy_project(name, tmp_path)
    whole = cli_json(".", "--no-cache", cwd=root)
    for file in sorted({item[0] for item in EXPECTED[name]} | {i[0] for i in WITHOUT_INDEX[name]}):
        # (named by the file's name; a file in a folder of the project is linted by its path)
        file = next(path for path in root.rglob(file)).relative_to(root).as_posix()
        alone = cli_json(file, "--no-cache", cwd=root)
        assert alone == {item for item in whole if item[0] == Path(file).name}
        if file.endswith(".ipynb"):
            continue  # (flake8 reads no notebook)
        flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "TDL",
                                 "--format", "%(path)s|%(row)d|%(code)s|%(text)s", file],
                                cwd=root, capture_output=True, text=True)
        rows = {tuple(line.split("|", 3)) for line in flake8.stdout.splitlines()}
        assert {(Path(p).name, int(line), code, text) for p, line, code, text in rows} == alone


def test_the_cache_drops_a_finding_when_the_file_it_depends_on_changes(tmp_path):
    root = copy_project("writer_provenance", tmp_path)
    assert matches(cli_json(".", cwd=root), EXPECTED["writer_provenance"])
    train = root / "train.py"
    train.write_text(train.read_text().replace("model.state_dict()", "model.cpu().state_dict()"))
    # evaluate.py unchanged, its cached finding gone
    assert {i[:3] for i in cli_json(".", cwd=root)} == {("evaluate.py", 11, "TDL003")}
    # a module the writer of embeddings.pt imports stops moving anything: that file is
    # CPU data now, and evaluate.py's cached finding goes too
    (root / "encoder.py").write_text("import torch\n\nNET = torch.nn.Linear(4, 2)\n\n\n"
                                     "def encode(x):\n    return NET(x)\n")
    assert cli_json(".", cwd=root) == set()
    flags = copy_project("guard_across_imports", tmp_path) / "config" / "flags.py"
    assert {i[:3] for i in cli_json(".", cwd=flags.parent.parent)} == {("report.py", 9, "TDL002")}
    flags.write_text(flags.read_text().replace("torch.cuda.is_available() and ", ""))
    assert {i[:3] for i in cli_json(".", cwd=flags.parent.parent)} == \
        {("report.py", 9, "TDL002"), ("train.py", 8, "TDL002")}


def test_the_cache_drops_a_silenced_load_when_a_caller_stops_using_cuda_first(tmp_path):
    """Whether each call of a helper comes after a CUDA use is part of the helper's file's
    cache key (``Summary["calls"]``'s ``after``, in ``dependency_key``)."""
    root = copy_project("load_after_cuda_use", tmp_path)
    assert matches(cli_json(".", cwd=root), EXPECTED["load_after_cuda_use"])
    train = root / "train.py"
    train.write_text(train.read_text().replace('"cuda"', 'config["device"]').replace(
        "Discriminator().cuda()", "Discriminator().to(device)"))
    found = {i[:3] for i in cli_json(".", cwd=root) if i[2] == "TDL003"}
    # train.py's call now runs where the configuration chooses: G's and D's loads too
    assert found == {("utils.py", 6, "TDL003"), ("utils.py", 8, "TDL003"),
                     ("utils.py", 9, "TDL003"), ("utils.py", 13, "TDL003")}


def test_the_cache_drops_a_finding_when_the_checkpoint_it_read_changes(tmp_path):
    """A shipped checkpoint is a dependency of the file that loads it (``load_paths`` in its
    summary): a warm run sees the file replaced."""
    root = copy_project("shipped_checkpoints", tmp_path)
    assert matches(cli_json(".", cwd=root), EXPECTED["shipped_checkpoints"])
    shutil.copy(root / "models" / "cpu_weights.pt", root / "models" / "gpu_weights.pt")
    assert {i[:3] for i in cli_json(".", cwd=root)} == {("demo.py", 17, "TDL003")}
    (root / "models" / "latest.pt").write_text("version https://git-lfs.github.com/spec/v1\n")
    # (a Git LFS pointer says nothing of the storages: still reported)
    assert {i[:3] for i in cli_json(".", cwd=root)} == {("demo.py", 17, "TDL003")}
    shutil.copy(root / "models" / "cpu_weights.pt", root / "models" / "latest.pt")
    assert cli_json(".", cwd=root) == set()


def test_jobs_give_the_same_findings(tmp_path):
    root = copy_project("guard_across_imports", tmp_path)
    for name in ("a", "b", "c"):  # enough files for a pool
        shutil.copy(root / "train.py", root / f"{name}.py")
    serial = cli_json(".", "--no-cache", "-j", "1", cwd=root)
    assert cli_json(".", "--no-cache", "-j", "2", cwd=root) == serial
    assert {i[0] for i in serial} == {"report.py"}


def test_bad_files_in_the_project_cost_nothing_but_their_facts(tmp_path):
    root = copy_project("guard_across_imports", tmp_path)
    (root / "broken.py").write_text("def (:\n")
    (root / "latin.py").write_bytes(b"x = '\xff'\n")
    (root / "bad.ipynb").write_text("{not json")
    result = run_cli("--output-format", "json", "--no-cache", "train.py", cwd=root)
    assert "Traceback" not in result.stderr and json.loads(result.stdout) == []


def test_a_script_that_names_no_device_reports_when_another_file_moves_its_module(tmp_path):
    """TDL007 needs evidence that the module meets an accelerator (issue 28): a script that
    never names a device has none in the file, but another file of the project that imports
    and moves the class is that evidence, and the message names it."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text(
        "import torch\nfrom torch import nn\n\n\nclass Head(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n"
        "    def forward(self, x):\n        return self.fc(x) + torch.ones(2)\n\n\n"
        "if __name__ == \"__main__\":\n    print(Head()(torch.zeros(1, 4)))\n")
    assert cli_json("model.py", "--no-cache", cwd=tmp_path) == set()  # alone: CPU only
    (tmp_path / "train.py").write_text(
        "import torch\nfrom model import Head\n\n"
        "device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n"
        "model = Head().to(device)\n")
    found = cli_json("model.py", "--no-cache", cwd=tmp_path)
    assert matches(found, {("model.py", 11, "TDL007", "another file moves it to an accelerator: train.py:5")}), found


def test_a_save_in_another_directory_is_another_programs_file(tmp_path):
    """Saves and loads are matched by file name; only a sibling's save (same directory)
    speaks for the file a load reads. ``gan_a/train.py`` saving ``G.pth`` from CPU state says
    nothing about the ``G.pth`` that ``gan_b/train.py`` loads, and is not named in its message."""
    (tmp_path / "pyproject.toml").write_text("")
    for folder, state in (("gan_a", "{k: v.cpu() for k, v in G.state_dict().items()}"),
                          ("gan_b", "G.state_dict()")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "save.py").write_text(
            "import torch\nfrom torch import nn\n\n"
            "device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n"
            f"G = nn.Linear(2, 2).to(device)\ntorch.save({state}, \"G.pth\")\n")
    (tmp_path / "gan_b" / "load.py").write_text("import torch\n\nstate = torch.load(\"G.pth\")\n")
    found = cli_json("gan_b/load.py", "--no-cache", cwd=tmp_path)
    assert matches(found, {("load.py", 3, "TDL003", "written from device state in gan_b/save.py:6")}), found
    (tmp_path / "gan_b" / "save.py").unlink()  # only gan_a's CPU save is left: not a sibling
    found = cli_json("gan_b/load.py", "--no-cache", cwd=tmp_path)
    assert matches(found, {("load.py", 3, "TDL003", None)}), found
    assert "written from" not in next(iter(found))[3]


def test_a_writer_in_a_notebook_is_named_by_cell_and_line(tmp_path):
    import nbformat
    (tmp_path / "pyproject.toml").write_text("")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import torch\nfrom torch import nn"),
                nbformat.v4.new_markdown_cell("Train it"),
                nbformat.v4.new_code_cell(
                    "device = \"cuda\" if torch.cuda.is_available() else \"cpu\"\n"
                    "model = nn.Linear(2, 2).to(device)\n"
                    "torch.save(model.state_dict(), \"model.pth\")")]
    nbformat.write(nb, str(tmp_path / "train.ipynb"))
    (tmp_path / "use.py").write_text("import torch\n\nstate = torch.load(\"model.pth\")\n")
    found = cli_json("use.py", "--no-cache", cwd=tmp_path)
    assert matches(found, {("use.py", 3, "TDL003", "written from device state in train.ipynb cell 3, line 3")}), found


def test_a_gpu_only_project_says_so_once_and_the_setting_turns_tdl002_back_on(tmp_path):
    """Issue 27, project intent: a project with no CPU path anywhere reports no TDL002, and
    the run says so once, after its summary, naming the setting; `require-accelerator =
    false` or `--no-require-accelerator` turns TDL002 back on, and so does a CPU path
    added in any file (the cached results follow)."""
    root = copy_project("gpu_only", tmp_path)
    result = run_cli(".", cwd=root)
    notes = [line for line in result.stdout.splitlines() if "taken for GPU-only" in line]
    assert len(notes) == 1 and "require-accelerator = false" in notes[0] \
        and "--no-require-accelerator" in notes[0], result.stdout
    assert result.stdout.index("Found 1 finding") < result.stdout.index(notes[0])
    assert "TDL002" not in result.stdout.replace(notes[0], "")
    codes = lambda found: sorted(code for _, _, code, _ in found)  # noqa: E731
    assert codes(cli_json(".", "--no-require-accelerator", cwd=root)) == \
        ["TDL002", "TDL002", "TDL002", "TDL003"]
    assert "GPU-only" not in run_cli(".", "--no-require-accelerator", cwd=root).stdout
    with open(root / "pyproject.toml", "a") as handle:
        handle.write("\n[tool.torchdevlint]\nrequire-accelerator = false\n")
    assert codes(cli_json(".", cwd=root)) == ["TDL002", "TDL002", "TDL002", "TDL003"]
    other = copy_project("gpu_only", tmp_path / "again")
    assert codes(cli_json(".", cwd=other)) == ["TDL003"]
    # (choosing the CPU is a CPU path; ``torch.zeros(2, device="cpu")`` alone would not be).
    # One in a file that train.py does not import ends the project's intent, but train.py
    # and model.py still have none and the README says they need a GPU (issue 28's
    # criterion (b)): GPU-only programs. One in the module that train.py imports ends both.
    (other / "evaluate.py").write_text('import torch\n\ndevice = "cpu"\nx = torch.zeros(2, device=device)\n')
    result = run_cli(".", cwd=other)
    assert "no file of this project checks" not in result.stdout
    assert "2 program(s) say that they run only on a GPU" in result.stdout, result.stdout
    assert codes(cli_json(".", cwd=other)) == ["TDL003"]
    (other / "model.py").write_text((other / "model.py").read_text() + '\nDEFAULT = "cpu"\n')
    assert codes(cli_json(".", cwd=other)) == ["TDL002", "TDL002", "TDL002", "TDL003"]


def test_a_program_calling_a_helper_that_stops_without_cuda_is_gpu_only_and_says_so(tmp_path):
    """Issue 28: a program that calls a project helper which exits without CUDA (dino's
    utils.init_distributed_mode) reports no TDL002, and the run names it once with why;
    the sibling program with a CPU path keeps its finding; `--no-require-accelerator`
    turns it back on, and so does the helper losing its exit (the cached results follow)."""
    root = copy_project("program_stops_without_cuda", tmp_path)
    result = run_cli(".", cwd=root)
    notes = [line for line in result.stdout.splitlines() if "taken for GPU-only" in line]
    assert len(notes) == 1 and "train.py (init_distributed_mode (distributed.py:8) stops " \
        "without CUDA)" in notes[0] and "--no-require-accelerator" in notes[0], result.stdout
    assert "evaluate.py" not in notes[0] and "evaluate.py:8:35: TDL002" in result.stdout
    back = cli_json(".", "--no-require-accelerator", cwd=root)
    assert sorted((name, line) for name, line, _, _ in back) == \
        [("evaluate.py", 8), ("knn.py", 5), ("train.py", 10), ("train.py", 11)]
    helper = root / "distributed.py"
    helper.write_text(helper.read_text().replace('    else:\n        print("Does not support '
                                                 'training without GPU.")\n        sys.exit(1)\n',
                                                 "").replace('backend="nccl"', 'backend="gloo"'))
    assert sorted(name for name, _, _, _ in cli_json(".", cwd=root)) == \
        ["evaluate.py", "knn.py", "train.py", "train.py"]


def test_a_program_whose_own_code_says_it_needs_a_gpu_is_gpu_only_and_says_so(tmp_path):
    """Issue 28: a program that imports a CUDA-only package at its top level, or a notebook
    whose metadata asks for a GPU runtime and that never chooses the CPU, reports no TDL002;
    the run names each once with its evidence. An optional import (in ``try:``), a notebook
    with a CPU path and one that asks for no GPU keep their findings; the setting turns the
    rule back on, and the notebook that stops asking for a GPU is reported again."""
    root = copy_project("program_gpu_evidence", tmp_path)
    result = run_cli(".", cwd=root)
    notes = [line for line in result.stdout.splitlines() if "taken for GPU-only" in line]
    assert len(notes) == 1, result.stdout
    assert "fp8_benchmark.py (imports transformer_engine at line 2, which runs only on CUDA)" \
        in notes[0] and "colab_gpu.ipynb (it asks for a GPU runtime, says so" in notes[0]
    assert "fused_adam.py" not in notes[0] and "fused_adam.py:10:37: TDL002" in result.stdout
    back = cli_json(".", "--no-require-accelerator", cwd=root)
    assert {name for name, _, _, _ in back} == {"fp8_benchmark.py", "fused_adam.py",
                                                 "colab_gpu.ipynb", "colab_with_cpu_path.ipynb",
                                                 "local.ipynb"}
    notebook = root / "colab_gpu.ipynb"
    notebook.write_text(notebook.read_text().replace('"accelerator": "GPU",', ""))
    assert "colab_gpu.ipynb" in {name for name, _, _, _ in cli_json(".", cwd=root)}


def test_a_program_without_a_cpu_path_whose_readme_needs_a_gpu_is_gpu_only(tmp_path):
    """Issue 28's criterion, part (b): a program none of whose code (the file and the project
    modules it imports) checks for an accelerator, chooses the CPU or has a device option,
    in a project whose README states a GPU requirement, reports no TDL002, and the run names
    it with the README's sentence; programs that import a CPU path or have a device option
    keep their findings. The setting turns the rule back on; an imported module that gains a
    CPU path, and a README that only names a GPU, turn it back on too (the cache follows)."""
    root = copy_project("program_readme_requirement", tmp_path)
    result = run_cli(".", cwd=root)
    notes = [line for line in result.stdout.splitlines() if "taken for GPU-only" in line]
    assert len(notes) == 1, result.stdout
    assert "sample.py (neither it nor a project module it imports checks for an accelerator" \
        in notes[0] and 'README.md says "Sampling runs on a GPU with at least 8 GB' in notes[0]
    assert "evaluate.py" not in notes[0] and "export.py" not in notes[0]
    lines = lambda found: sorted((name, line) for name, line, _, _ in found)  # noqa: E731
    assert lines(cli_json(".", "--no-require-accelerator", cwd=root)) == \
        [("evaluate.py", 7), ("export.py", 10), ("sample.py", 5), ("sample.py", 6)]
    # (whatever form the move takes: ``.cuda()`` of a subscript names no callee)
    (root / "infer.py").write_text("from models import Net\n\nnets = [Net()]\n"
                                   "model = nets[0].eval().cuda()\n")
    assert "infer.py" not in {name for name, _, _, _ in cli_json(".", cwd=root)}
    models = root / "models.py"
    models.write_text(models.read_text() + '\nDEFAULT = "cpu"\n')  # (chooses the CPU)
    assert ("sample.py", 5) in lines(cli_json(".", cwd=root))
    other = copy_project("program_readme_requirement", tmp_path / "again")
    (other / "README.md").write_text("# demo\n\nWe trained it on 8 GPUs for a day.\n")
    assert ("sample.py", 5) in lines(cli_json(".", cwd=other))


def test_a_readme_states_a_gpu_requirement_only_where_it_says_one_is_needed():
    """The README part of the criterion: a sentence that says the code needs a GPU, not one
    that mentions GPUs, their memory, how many a run used, or that none is needed."""
    from torchdevlint.textsearch import states_a_gpu_requirement
    for stated in ("It runs on a GPU with at least 10GB VRAM.",
                   "* 1+ high-end NVIDIA GPU for sampling and 8+ GPUs for training.",
                   "* 1&ndash;8 high-end NVIDIA GPUs with at least 12 GB of memory.",
                   "For training new models, you'll also need an NVIDIA GPU and NCCL",
                   "This code requires a CUDA-capable GPU.", "A GPU is required."):
        assert states_a_gpu_requirement("# Title\n\nSome text.\n" + stated) is not None, stated
    for unstated in ("The required GPU memory is not much larger than original SD.",
                     "Boilerplate code needed to use multi-GPUs/TPU/fp16.",
                     "Run it on a single node with 8 GPUs for 100 epochs.",
                     "When run on a machine with 8 GPUs the command should produce this.",
                     "✅ 1-1000+ GPUs/TPUs", "A demo notebook (no GPU needed).",
                     "It needs a GPU or runs on the CPU, slowly.", "Developed with CUDA 11.0."):
        assert states_a_gpu_requirement(unstated) is None, unstated


def test_a_device_option_is_a_cpu_path():
    """An option through which the user chooses the device or turns CUDA off is a CPU path,
    whatever its default; one that picks which GPU is not."""
    for option in ('"--device", default="cuda"', '"--cpu", action="store_true"',
                   '"-n", "--no-cuda", action="store_true"', '"--use_gpu", type=int'):
        summary = summarize(f"import argparse\np = argparse.ArgumentParser()\n"
                            f"p.add_argument({option})\n")
        assert summary["cpu_path"] is True, option
    assert summarize("import click\n@click.option('--device', default='cuda')\n"
                     "def main(device):\n    pass\n")["cpu_path"] is True
    assert summarize("import argparse\np = argparse.ArgumentParser()\n"
                     "p.add_argument('--gpu', type=int, default=0)\n")["cpu_path"] is False


def test_loading_to_or_moving_results_to_the_cpu_is_no_cpu_path():
    """Issue 28: a GPU-only program loads checkpoints to the CPU and moves results there; only
    choosing the CPU as the device (or checking for an accelerator) is a CPU path, which
    keeps a project or a notebook from being taken for GPU-only."""
    placing = ("import torch\nstate = torch.load('w.pt', map_location='cpu')\n"
               "other = torch.load('v.pt', torch.device('cpu'))\n"
               "def load_state_dict(path, location='cpu'):\n    return torch.load(path, location)\n"
               "out = torch.zeros(2, device='cpu') + state['x'].to('cpu')\nmodel = Net().cuda()\n")
    assert summarize(placing)["cpu_path"] is False
    for choosing in ("device = 'cpu'\n", "device = torch.device('cpu')\n",
                     "def run(device='cpu'):\n    pass\n", "on_cpu = x.device.type == 'cpu'\n",
                     "parser.add_argument('--device', default='cpu')\n",
                     "ok = torch.cuda.is_available()\n"):
        assert summarize("import torch\n" + choosing)["cpu_path"] is True, choosing
    summary = summarize("import torch\ntry:\n    import apex\nexcept ImportError:\n"
                        "    apex = None\nimport flash_attn.ops\nfrom xformers import ops\n"
                        "def f():\n    import bitsandbytes\n")
    assert summary["requires"] == [["flash_attn", 6], ["xformers", 7]]


def test_a_loose_directory_of_scripts_is_never_taken_for_gpu_only(tmp_path):
    (tmp_path / "run.py").write_text("import torch\n\nx = torch.zeros(2).cuda()\n")
    (tmp_path / "README.md").write_text("Needs a GPU.\n")
    assert [code for _, _, code, _ in cli_json("run.py", cwd=tmp_path)] == ["TDL002"]


def test_a_project_whose_readme_names_no_gpu_is_not_gpu_only(tmp_path):
    """Hard-coded CUDA in a small project (a script and its pyproject.toml) is the portability
    bug TDL002 is for: GPU-only needs the project to say so too, in its README."""
    root = copy_project("gpu_only", tmp_path)
    (root / "README.md").write_text("# gpu_only\n\nA small model.\n")
    assert sorted(code for _, _, code, _ in cli_json(".", cwd=root)) == \
        ["TDL002", "TDL002", "TDL002", "TDL003"]


def test_a_command_line_run_walks_each_project_once_however_long_it_takes(tmp_path, monkeypatch,
                                                                           capsys):
    """The index is asked several times a file (its rules, its cache key, its analysis): a
    command-line run trusts one stat of the project for the whole run, where a stamp of a
    few seconds made a slow run walk and stat a 2,000-file project again and again. Under
    --watch, each run stats it afresh."""
    from torchdevlint import cli
    root = copy_project("placement_across_calls", tmp_path)
    monkeypatch.setattr(project_index, "_settings", dict(project_index._settings))
    walks = []
    real = project_index._project_files
    monkeypatch.setattr(project_index, "_project_files", lambda r: walks.append(r) or real(r))
    clock = iter(range(0, 10**6, 10))  # ten seconds pass between any two questions
    monkeypatch.setattr(project_index.time, "monotonic", lambda: next(clock))
    monkeypatch.chdir(root)
    assert cli.main(["--output-format", "json", "--cache-dir", str(tmp_path / "cache"), "."]) == 1
    assert len(walks) == 1
    assert len(json.loads(capsys.readouterr().out)) == len(EXPECTED["placement_across_calls"])
    cli.main(["--output-format", "json", "--cache-dir", str(tmp_path / "cache"), "."])
    assert len(walks) == 2  # a second run in the process (--watch) stats the files again


def test_learning_a_project_is_not_gpu_only_needs_no_index(tmp_path, monkeypatch, capsys):
    """One process without a cache builds an index only when a fact asks for it: that the
    project has a CPU path is found by summarising its files one by one, until the first."""
    from torchdevlint import cli
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "a.py").write_text('import torch\n\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\n')
    (tmp_path / "b.py").write_text('import torch\n\nx = torch.zeros(2).to("cuda")\n')
    monkeypatch.setattr(project_index, "_settings", dict(project_index._settings))
    built = []
    monkeypatch.setattr(ProjectIndex, "build", lambda self, jobs=1: built.append(self) or self)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--output-format", "json", "--no-cache", "-j", "1", "b.py"]) == 1
    assert [f["code"] for f in json.loads(capsys.readouterr().out)] == ["TDL002"]
    assert built == []


def test_placement_across_calls_is_asked_only_in_a_project(tmp_path, monkeypatch, capsys):
    """A directory of loose files (no pyproject.toml, setup.py, setup.cfg or .git: torch's
    installed sources) never has its index built to learn who calls its functions: without
    the marker the placement project reports nothing across files, and builds nothing."""
    from torchdevlint import cli
    root = copy_project("placement_across_calls", tmp_path)
    (root / "pyproject.toml").unlink()
    with open(root / "metrics.py", "a") as handle:  # a function the analysis walks
        handle.write("\n\ndef moved(x, device):\n    y = x.to(device)\n    return y.numpy()\n")
    monkeypatch.setattr(project_index, "_settings", dict(project_index._settings))
    built = []
    monkeypatch.setattr(ProjectIndex, "build", lambda self, jobs=1: built.append(self) or self)
    monkeypatch.chdir(root)
    assert cli.main(["--output-format", "json", "--no-cache", "-j", "1", "."]) == 1
    found = json.loads(capsys.readouterr().out)
    assert [(Path(f["path"]).name, f["line"], f["code"]) for f in found] == [
        ("metrics.py", 19, "TDL008")]  # (its own move: no caller's word needed)
    assert built == []


def _count_reads_and_parses(monkeypatch, root: Path):
    """(reads, parses): how many times each ``.py`` file under ``root`` is opened for reading
    and given to ``summarize`` (the index's ast parse), by relative path."""
    import builtins
    import io
    from collections import Counter
    texts = {path.read_text(): path.relative_to(root).as_posix() for path in root.rglob("*.py")}
    assert len(texts) == len(list(root.rglob("*.py")))  # (each file told apart by its text)
    names = set(texts.values())
    reads, parses = Counter(), Counter()
    real_open, real_summarize = io.open, project_index.summarize

    def count(file, mode):
        if isinstance(file, (str, os.PathLike)) and "r" in mode and str(file).endswith(".py"):
            full = Path(os.path.abspath(file))
            if root in full.parents and full.relative_to(root).as_posix() in names:
                reads[full.relative_to(root).as_posix()] += 1

    def counting_summarize(source):
        parses[texts.get(source, "(other)")] += 1
        return real_summarize(source)

    # Path.open reaches io.open through an accessor bound at import on Python < 3.11: count
    # it there too, once (a read through Path.open that ends in io.open is one read)
    inside = []
    real_path_open = Path.open

    def counting_path_open(self, mode="r", *args, **kwargs):
        count(self, mode)
        inside.append(True)
        try:
            return real_path_open(self, mode, *args, **kwargs)
        finally:
            inside.pop()

    def counted_open(file, mode="r", *args, **kwargs):
        if not inside:
            count(file, mode)
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counted_open)
    monkeypatch.setattr(io, "open", counted_open)
    monkeypatch.setattr(Path, "open", counting_path_open)
    monkeypatch.setattr(project_index, "summarize", counting_summarize)
    return reads, parses, sorted(texts.values())


def test_the_gpu_only_program_question_reads_the_index_summary(tmp_path, monkeypatch, capsys):
    """Issue 27: whether a program calls a helper that stops without CUDA is answered from
    the per-file summary the index holds: a cold command-line run reads and parses each file
    once for the index and that question together (and reads it once more to lint it), a
    warm one parses none and reads each file once (its result-cache key)."""
    from torchdevlint import cli
    root = copy_project("program_stops_without_cuda", tmp_path)
    monkeypatch.setattr(project_index, "_settings", dict(project_index._settings))
    monkeypatch.chdir(root)
    reads, parses, files = _count_reads_and_parses(monkeypatch, root)
    cache = str(tmp_path / "cache")
    assert cli.main(["--output-format", "json", "--cache-dir", cache, "."]) == 1
    found = {(f["path"].rpartition("/")[2], f["code"]) for f in json.loads(capsys.readouterr().out)}
    assert found == {("evaluate.py", "TDL002"), ("knn.py", "TDL002")}  # train.py: GPU-only
    assert dict(parses) == {name: 1 for name in files}
    assert dict(reads) == {name: 2 for name in files}
    project_index.forget()  # (a new process)
    reads.clear(), parses.clear()
    assert cli.main(["--output-format", "json", "--cache-dir", cache, "."]) == 1
    assert {(f["path"].rpartition("/")[2], f["code"])
            for f in json.loads(capsys.readouterr().out)} == found
    assert dict(parses) == {}
    assert dict(reads) == {name: 1 for name in files}


def test_without_a_loaded_index_the_gpu_only_question_shares_the_summary_cache(tmp_path,
                                                                               monkeypatch):
    """flake8 and pre-commit ask whether a program is GPU-only before any index is loaded:
    the file and its helper are read and parsed once, and their summaries are put in the
    index's cache by content, so the index built next parses only the other files."""
    from torchdevlint.rules import ALL_RULES
    root = copy_project("program_stops_without_cuda", tmp_path)
    monkeypatch.setattr(project_index, "_settings", dict(project_index._settings))
    project_index.configure(cache_dir=tmp_path / "cache", use_cache=True, stamp=float("inf"))
    reads, parses, files = _count_reads_and_parses(monkeypatch, root)
    rules = project_index.rules_for_program(ALL_RULES, str(root / "train.py"))
    assert "TDL002" in {rule.code for rule in ALL_RULES} - {rule.code for rule in rules}
    assert dict(parses) == {"train.py": 1, "distributed.py": 1}
    assert dict(reads) == {"train.py": 1, "distributed.py": 1}
    index = project_index.index_for(str(root / "train.py"))
    assert index.summarised == len(files) - 2
    assert dict(parses) == {name: 1 for name in files}
    # asked again (another program of the same process), nothing is read or parsed again
    reads.clear()
    assert project_index.rules_for_program(ALL_RULES, str(root / "train.py")) == rules
    assert dict(reads) == {} and dict(parses) == {name: 1 for name in files}
