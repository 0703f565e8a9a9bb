"""The pytest plugin (``pytest --fake-accelerator``), run on test suites written here.

Each test runs pytest in a child process (pytester), the way a user's CI does; several of the
user's tests go into one run to keep this quick.
"""
from __future__ import annotations

import textwrap

import pytest

pytest_plugins = ["pytester"]

CONFTEST_FREE = "-p", "no:cacheprovider"


@pytest.fixture(autouse=True)
def cpu_only_ci(monkeypatch):
    """The child runs are a user's CI without a GPU: on a machine with one, it is hidden from
    them (as on an H200, where the children otherwise found the real GPU and failed the tests
    that show the plugin inert)."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")

DEVICE_AT_IMPORT = '''
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"  # read when the module is imported


def test_device_at_import():
    assert device == "cuda"


def test_unmoved_input():
    model = torch.nn.Linear(4, 2).to(device)
    x = torch.randn(3, 4)
    model(x)  # the user's bug


@__import__("pytest").mark.fake_accelerator(enabled=False)
def test_opted_out():
    assert not torch.cuda.is_available()


def test_cpu_only_phase(tmp_path, fake_accelerator):
    path = tmp_path / "model.pt"
    torch.save(torch.nn.Linear(2, 2).to(device).state_dict(), path)
    with fake_accelerator.cpu_only():
        torch.load(path)  # a CPU-only user without map_location
'''


def outcomes(result) -> dict:
    """test name -> passed/failed/skipped, from pytest's -rA summary."""
    found = {}
    for line in result.outlines:
        for word in ("PASSED", "FAILED", "SKIPPED", "ERROR"):
            if line.startswith(word + " "):
                name = line.split()[1].split("::")[-1]
                found[name] = word.lower()
    return found


def test_the_session_runs_on_a_pretend_gpu(pytester):
    pytester.makepyfile(test_user=DEVICE_AT_IMPORT)
    # a path right after the flag is a path, not the kind
    result = pytester.runpytest_subprocess("--fake-accelerator", "test_user.py", "-rA", *CONFTEST_FREE)
    assert outcomes(result) == {"test_device_at_import": "passed", "test_unmoved_input": "failed",
                                "test_opted_out": "passed", "test_cpu_only_phase": "failed"}
    output = result.stdout.str()
    assert "pretend accelerator cuda x1" in output
    # the failure points at the user's line, with the message a GPU gives
    assert "model(x)  # the user's bug" in output
    assert ("RuntimeError: Expected all tensors to be on the same device, but got mat1 is on "
            "cpu, different from other tensors on cuda:0") in output
    assert "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False" \
        in output
    assert "_fake.py" not in output and "_python_dispatch.py" not in output


def test_inert_unless_asked_and_a_marker_opts_one_test_in(pytester):
    # (the user project of acceptance 4 rides along: on the CPU its bugs go unnoticed)
    pytester.makepyfile(userlib=USER_LIBRARY, **USER_TESTS)
    pytester.makepyfile(test_user=DEVICE_AT_IMPORT, test_marked='''
import pytest
import torch


@pytest.mark.fake_accelerator
def test_in():
    x = torch.ones(2).cuda()
    assert x.device.type == "cuda"
    x + torch.ones(2)


def test_out():
    assert not torch.cuda.is_available()
''')
    result = pytester.runpytest_subprocess(
        "-rA", "-k", "device_at_import or unmoved or test_in or test_out or test_forward or "
        "test_weighted", *CONFTEST_FREE)
    # on the CPU the module picks "cpu" and the bug goes unnoticed, unless a marker asks
    assert outcomes(result) == {"test_device_at_import": "failed", "test_unmoved_input": "passed",
                                "test_in": "failed", "test_out": "passed", "test_forward": "passed",
                                "test_weighted_mean": "passed", "test_weighted_loss": "passed"}
    output = result.stdout.str()
    assert "pretend accelerator" not in output
    assert "found at least two devices, cuda:0 and cpu!" in output


def test_ini_option_count_and_marker(pytester):
    pytester.makeini(textwrap.dedent("""\
        [pytest]
        fake_accelerator = cuda
        fake_accelerator_count = 2
    """))
    pytester.makepyfile(test_user='''
import pytest
import torch


def test_two_gpus():
    assert torch.cuda.device_count() == 2


@pytest.mark.fake_accelerator("mps")
def test_marked_mps():
    assert torch.backends.mps.is_available() and not torch.cuda.is_available()
''')
    result = pytester.runpytest_subprocess("-rA", *CONFTEST_FREE)
    assert outcomes(result) == {"test_two_gpus": "passed", "test_marked_mps": "passed"}


@pytest.mark.parametrize("where", ["ini", "option"])
def test_bad_kind_is_one_usage_error(pytester, where):
    pytester.makepyfile(test_user="def test_nothing():\n    pass\n")
    if where == "ini":
        pytester.makeini("[pytest]\nfake_accelerator = tpu\n")
        result = pytester.runpytest_subprocess(*CONFTEST_FREE)
    else:
        result = pytester.runpytest_subprocess("--fake-accelerator=tpu", *CONFTEST_FREE)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "fake_accelerator: expected one of cuda, mps, got 'tpu'" in result.stderr.str()
    assert "Traceback" not in result.stderr.str()


# --- Acceptance 4: bugs the linter is silent about by design, which the plugin catches -------
#
# A user's project: a library module and three test files. The linter cannot see the device of
# a model built in another module, of a batch a custom collate function builds, or of a tensor
# a library call returns; each test passes on the CPU and fails under the plugin.

USER_LIBRARY = '''
import torch
import torch.nn as nn


def make_model(device):
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to(device)


def collate(samples):
    """Stacks the features and, for speed, moves them; forgets the weights."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    features = torch.stack([s[0] for s in samples]).to(device)
    weights = torch.stack([s[1] for s in samples])
    return features, weights


def class_weights(count):
    return torch.linspace(0.5, 1.5, count)
'''

USER_TESTS = {
    "test_model_elsewhere": '''
import torch
from userlib import make_model

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_forward():
    model = make_model(DEVICE)
    batch = torch.randn(3, 4)
    assert model(batch).shape == (3, 2)
''',
    "test_custom_collate": '''
import torch
from torch.utils.data import DataLoader
from userlib import collate


def test_weighted_mean():
    data = [(torch.randn(4), torch.rand(4)) for _ in range(6)]
    for features, weights in DataLoader(data, batch_size=3, collate_fn=collate):
        assert (features * weights).sum().item() == (features * weights).sum().item()
''',
    "test_library_tensor": '''
import torch
import torch.nn.functional as F
from userlib import class_weights


def test_weighted_loss():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    logits = torch.randn(5, 3, device=device)
    target = torch.randint(0, 3, (5,), device=device)
    loss = F.cross_entropy(logits, target, weight=class_weights(3))
    assert loss.item() > 0
''',
}


@pytest.fixture(scope="module")
def user_project(tmp_path_factory):
    root = tmp_path_factory.mktemp("user_project")
    (root / "userlib.py").write_text(USER_LIBRARY)
    for name, source in USER_TESTS.items():
        (root / f"{name}.py").write_text(source)
    return root


def run_user_suite(root, *args):
    import subprocess
    import sys
    process = subprocess.run([sys.executable, "-m", "pytest", "-rA", *CONFTEST_FREE, *args],
                             cwd=root, capture_output=True, text=True, timeout=600)
    return process


def test_the_linter_is_silent_on_the_user_project(user_project):
    from conftest import run_cli
    result = run_cli(*sorted(user_project.glob("*.py")), "--extend-select", "TDL")
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip() == "All checks passed! (4 files checked)"


def test_they_fail_on_the_pretend_gpu(user_project):
    """(test_inert_unless_asked_and_a_marker_opts_one_test_in runs them on the CPU: they pass)"""
    names = {"test_forward", "test_weighted_mean", "test_weighted_loss"}
    on_gpu = run_user_suite(user_project, "--fake-accelerator")
    found = {}
    for line in on_gpu.stdout.splitlines():
        if line.startswith(("PASSED ", "FAILED ")):
            found[line.split()[1].split("::")[-1]] = line.split()[0]
    assert found == dict.fromkeys(names, "FAILED"), on_gpu.stdout
    output = on_gpu.stdout
    # each at the user's line, with a GPU's message
    assert "assert model(batch).shape == (3, 2)" in output
    assert "assert (features * weights).sum().item()" in output
    assert "loss = F.cross_entropy(logits, target, weight=class_weights(3))" in output
    # (counted in the tracebacks: the summary repeats the message in full where CI is set)
    assert sum(line.startswith("E ") and "RuntimeError: Expected all tensors to be on the same "
               "device" in line for line in output.splitlines()) == 3, output
