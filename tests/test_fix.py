"""--fix, --unsafe-fixes, --diff, --show-fixes: what is rewritten, how, and what is left alone."""
from __future__ import annotations

import os
import pickle
import shutil
import stat
import subprocess
import sys
import textwrap

import pytest

from conftest import FIXTURES, fixture_files, fixture_rules, run_cli
from torchdevlint.applier import fix_bytes, fix_source
from torchdevlint.engine import lint_source
from torchdevlint.fixes import FixOptions
from torchdevlint.fixes.model import Edit, Fix
from torchdevlint.rules import ALL_RULES, DEFAULT_RULES
from torchdevlint.rules.tdl001_discarded_move import DiscardedMove

UNSAFE = FixOptions(unsafe=True)
POSITIVES = fixture_files("positive")


def fixed(source: str, unsafe: bool = True, **options) -> str:
    result = fix_source(textwrap.dedent(source), "snippet.py", DEFAULT_RULES,
                        FixOptions(unsafe=unsafe, **options))
    assert result.error is None, result.error
    return result.fixed


def codes(source: str) -> list:
    return [f.code for f in lint_source(source, "snippet.py").findings]


def expected_fixed(path):
    return path.with_name(path.stem + ".fixed.py")


# -- the fixtures are the contract ---------------------------------------------------------


def test_every_positive_fixture_has_a_fixed_version():
    assert POSITIVES
    for path in POSITIVES:
        assert expected_fixed(path).is_file(), f"{path} has no .fixed.py"


@pytest.fixture
def fixture_copies(tmp_path):
    """Copies of the positive fixtures, each rule's in a folder of its own whose
    pyproject.toml selects that rule alone, as ``fixture_rules`` lints them."""
    copies = {}
    for path in POSITIVES:
        code = path.parts[-3]
        folder = tmp_path / code
        if not folder.is_dir():
            folder.mkdir()
            (folder / "pyproject.toml").write_text(f'[tool.torchdevlint]\nselect = ["{code}"]\n')
        copy = folder / f"{code}_{path.name}"
        shutil.copyfile(path, copy)
        copies[path] = copy
    return copies


def test_fix_output_matches_fixed_fixtures_then_converges(tmp_path, fixture_copies):
    first = run_cli("--fix", "--unsafe-fixes", "--show-fixes", tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr  # everything fixed
    assert "All checks passed" in first.stdout
    fixes_listed = first.stdout.split("Fixed ")[1]
    assert "- " in fixes_listed and "TDL002_module_cuda.py:\n    2 x TDL002 (hardcoded-cuda-device)" \
        in fixes_listed
    for original, copy in fixture_copies.items():
        assert copy.read_bytes() == expected_fixed(original).read_bytes(), original.name
        # nothing the fix was meant to remove is found again
        assert [f.code for f in lint_source(copy.read_text(encoding="utf-8"), copy.name,
                                            fixture_rules(original)).findings] == [], original.name
    second = run_cli("--fix", "--unsafe-fixes", tmp_path)
    assert second.returncode == 0
    # nothing to fix, nothing said about fixing (as ruff; issue 30, point 13)
    assert second.stdout == f"All checks passed! ({len(fixture_copies)} files checked)\n"
    for original, copy in fixture_copies.items():
        assert copy.read_bytes() == expected_fixed(original).read_bytes()


@pytest.mark.parametrize("path", POSITIVES, ids=lambda p: f"{p.parts[-3]}-{p.stem}")
def test_api_gives_the_fixed_fixture_and_a_fixed_point(path):
    result = fix_bytes(path.read_bytes(), str(path), fixture_rules(path), UNSAFE)
    assert result.fixed.encode() == expected_fixed(path).read_bytes()
    assert result.findings == [] and result.applied
    again = fix_bytes(expected_fixed(path).read_bytes(), str(path), fixture_rules(path), UNSAFE)
    assert not again.changed and not again.applied


def test_safe_only_fix_leaves_unsafe_findings_reported(tmp_path, fixture_copies):
    run = run_cli("--fix", tmp_path)
    assert run.returncode == 1  # unsafe fixes were not applied: their findings remain
    remaining = {line.split(":")[0] for line in run.stdout.splitlines() if ": TDL" in line}
    by_name = {copy.name: original for original, copy in fixture_copies.items()}
    for name in ("TDL006_list_comprehension.py", "TDL003_aliased_import.py", "TDL004_dict_batch.py"):
        assert any(r.endswith(name) for r in remaining), name
        assert fixture_copies[by_name[name]].read_bytes() == by_name[name].read_bytes()  # untouched
    for name in ("TDL001_factory_tensor.py", "TDL003_load_state_dict.py",
                 "TDL002_module_cuda.py", "TDL004_train_loop.py"):
        assert fixture_copies[by_name[name]].read_bytes() == expected_fixed(by_name[name]).read_bytes()


# -- what each fix does and does not do ---------------------------------------------------


def test_tdl001_rebinds_only_names_of_the_same_scope():
    source = """\
        import torch
        x = torch.ones(2)
        G = torch.ones(2)


        def f(device, t: torch.Tensor):
            t.to(device)

            def inner():
                x.to(device)

            def uses_global():
                global G
                G.to(device)
            t.detach().cpu()
            return inner, uses_global
        """
    out = fixed(source)
    assert "    t = t.to(device)\n" in out
    assert "        x.to(device)\n" in out  # a closure: assigning would make x local
    assert "        G.to(device)\n" in out  # global
    assert "    t.detach().cpu()\n" in out  # nothing to assign to


def test_tdl001_attribute_fix_is_unsafe():
    source = """\
        import torch
        import torch.nn as nn


        class Scaler(nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = torch.ones(2)

            def forward(self, x):
                self.scale.to(x.device)
                return x * self.scale
        """
    assert "self.scale = self.scale.to(x.device)" not in fixed(source, unsafe=False)
    assert "        self.scale = self.scale.to(x.device)\n" in fixed(source)


def test_tdl002_cuda_call_uses_guarded_device_in_scope():
    source = """\
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


        def f():
            return torch.nn.Linear(2, 2).cuda()
        """
    out = fixed(source, unsafe=False)
    assert "return torch.nn.Linear(2, 2).to(device)" in out
    assert out.count("device = ") == 1


def test_tdl002_defines_a_module_device_that_shadows_nothing():
    source = """\
        import torch as T


        def f(device):
            return T.ones(2).cuda(), device
        """
    out = fixed(source, unsafe=False)
    assert out.startswith('import torch as T\n\ndefault_device = T.device("cuda" if '
                          'T.cuda.is_available() else "cpu")\n')
    assert "return T.ones(2, device=default_device), device" in out  # created there (TDL009)


def test_tdl002_adds_import_torch_when_missing_and_keeps_quotes():
    source = """\
        \"\"\"Doc.\"\"\"
        from torch import nn, zeros

        x = zeros(2, device='cuda')


        def f():
            return nn.Linear(2, 2).cuda()
        """
    out = fixed(source, unsafe=False)
    assert out.count("import torch\n") == 1
    assert "x = zeros(2, device='cuda' if torch.cuda.is_available() else 'cpu')" in out
    assert "return nn.Linear(2, 2).to(device)" in out
    assert codes(out) == []


def test_tdl002_no_fix_for_other_indices_arguments_and_tensor_types():
    source = """\
        import torch
        a = torch.zeros(2, device="cuda:1")
        b = torch.zeros(2).cuda(0)
        c = torch.cuda.FloatTensor(2)
        """
    assert fixed(source) == textwrap.dedent(source)


def test_tdl002_unknown_receiver_is_unsafe():
    source = "import torch\n\n\ndef f(thing):\n    return thing.cuda()\n"
    assert fixed(source, unsafe=False) == source
    assert "return thing.to(device)" in fixed(source)


def test_tdl002_literal_inside_a_conditional_is_parenthesized():
    out = fixed('import torch\n\n\ndef f(flag):\n'
                '    return torch.zeros(1, device="cuda" if flag else "cpu")\n')
    assert '("cuda" if torch.cuda.is_available() else "cpu") if flag else "cpu"' in out


def test_tdl003_safe_only_into_load_state_dict_and_uses_device_variable():
    source = """\
        import torch


        def restore(model, path, device):
            model.load_state_dict(torch.load(path)["model"])
            return torch.load(path)
        """
    safe = fixed(source, unsafe=False)
    assert 'model.load_state_dict(torch.load(path, map_location=device)["model"])' in safe
    assert "    return torch.load(path)\n" in safe
    assert "return torch.load(path, map_location=device)" in fixed(source)
    optional = "import torch\n\n\ndef f(m, path, device=None):\n    m.load_state_dict(torch.load(path))\n"
    assert 'torch.load(path, map_location="cpu")' in fixed(optional)  # device may be None


def test_tdl003_multiline_call_with_trailing_comma_and_comments():
    source = """\
        import torch


        def f(m, path):
            m.load_state_dict(
                torch.load(
                    path,  # the checkpoint
                    weights_only=True,
                ),
            )
        """
    out = fixed(source, unsafe=False)
    assert '            weights_only=True, map_location="cpu",\n' in out
    assert "path,  # the checkpoint\n" in out


def test_tdl004_inserts_after_unpacking_and_falls_back_to_model_parameters():
    source = """\
        import torch
        from torch.utils.data import DataLoader


        class Trainer:
            def __init__(self, model, device):
                self.model = model.to(device)

            def run(self, loader: DataLoader):
                for batch in loader:
                    # unpack
                    inputs, labels = batch
                    self.model(inputs)
        """
    out = fixed(source)
    assert ("            inputs, labels = batch\n"
            "            inputs = inputs.to(next(self.model.parameters()).device)\n"
            "            self.model(inputs)\n") in out
    assert codes(out) == []


@pytest.mark.parametrize("step, setup, call", [
    ("def step(model, batch):\n    inputs, labels = batch\n    return model(inputs)\n",
     "model = torch.nn.Linear(4, 2).to(device)", "step(model, batch)"),
    ("class Trainer:\n    def __init__(self, model, device):\n"
     "        self.model = model.to(device)\n\n"
     "    def step(self, batch):\n        inputs, labels = batch\n"
     "        return self.model(inputs)\n",
     "trainer = Trainer(torch.nn.Linear(4, 2), device)", "trainer.step(batch)"),
])
def test_tdl004_a_whole_batch_handed_to_a_step_gets_no_move_of_the_whole(step, setup, call):
    # The step unpacks it: a tuple of tensors has no ``.to()``, so ``batch = batch.to(d)``
    # would raise AttributeError. The finding stays; no fix is offered, not even unsafe.
    source = (
        "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n\n\n"
        + step + "\n\n"
        "def main(device):\n"
        f"    {setup}\n"
        "    loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randn(8)), batch_size=4)\n"
        "    for batch in loader:\n"
        f"        {call}\n")
    found = lint_source(source, "snippet.py").findings
    assert [(f.code, f.message.split("`")[1]) for f in found if f.code == "TDL004"] == \
        [("TDL004", "batch")]
    assert "batch = batch.to(" not in fix_source(source, "snippet.py", DEFAULT_RULES, UNSAFE).fixed


def test_tdl004_tabs_and_crlf_are_kept():
    source = ("import torch\r\nfrom torch.utils.data import DataLoader\r\n\r\n\r\n"
              "def main(device, loader: DataLoader):\r\n"
              "\tmodel = torch.nn.Linear(2, 2).to(device)\r\n"
              "\tfor x, y in loader:\r\n"
              "\t\tmodel(x)\r\n")
    out = fix_source(source, "t.py", ALL_RULES, UNSAFE).fixed
    assert "\tfor x, y in loader:\r\n\t\tx = x.to(device)\r\n\t\tmodel(x)\r\n" in out
    assert out.count("\n") == out.count("\r\n")


# -- formatting, noqa, files --------------------------------------------------------------


def test_noqa_lines_are_never_edited():
    source = ("import torch\nx = torch.ones(2)\n"
              "x.cuda()  # noqa: TDL002\n"
              "x.to('cpu')  # noqa\n"
              "y = torch.ones(2)\ny.to('cpu')\n")
    out = fixed(source)
    assert "x.cuda()  # noqa: TDL002\n" in out  # its TDL001 is reported, but the line is kept
    assert "x.to('cpu')  # noqa\n" in out
    assert "y = y.to('cpu')\n" in out
    assert codes(out) == ["TDL001"]


def test_comments_inside_the_edited_call_are_kept():
    source = "import torch\nx = torch.ones(2)\nx.to(  # where\n    'cpu',  # cpu\n)\n"
    assert fixed(source) == "import torch\nx = torch.ones(2)\nx = x.to(  # where\n    'cpu',  # cpu\n)\n"


def test_overlapping_fixes_are_all_applied_over_passes():
    source = "import torch\nx = torch.ones(2)\nx.cuda()\ny = torch.zeros(2, device='cuda').cuda()\n"
    result = fix_source(source, "s.py", ALL_RULES, UNSAFE)
    assert result.fixed == (
        "import torch\n\ndevice = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n"
        "x = torch.ones(2)\nx = x.to(device)\n"
        "y = torch.zeros(2, device='cuda' if torch.cuda.is_available() else 'cpu').to(device)\n")
    assert len(result.applied) == 4 and result.findings == []


def test_crlf_bom_and_mode_survive_the_cli(tmp_path):
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbfimport torch\r\nx = torch.ones(2)\r\nx.to('cpu')\r\n")
    path.chmod(0o751)
    run = run_cli("--fix", path)
    assert run.returncode == 0, run.stdout
    assert path.read_bytes() == b"\xef\xbb\xbfimport torch\r\nx = torch.ones(2)\r\nx = x.to('cpu')\r\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["bom.py"]  # no temporary file left


def test_symlink_is_kept_and_its_target_fixed(tmp_path):
    target = tmp_path / "real.py"
    target.write_text("import torch\nx = torch.ones(2)\nx.to('cpu')\n")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    assert run_cli("--fix", link).returncode == 0
    assert link.is_symlink() and "x = x.to('cpu')" in target.read_text()


def test_read_only_file_gets_a_message_and_the_run_goes_on(tmp_path):
    locked = tmp_path / "a_locked.py"
    locked.write_text("import torch\nx = torch.ones(2)\nx.to('cpu')\n")
    locked.chmod(0o444)
    other = tmp_path / "b_other.py"
    other.write_text("import torch\ny = torch.ones(2)\ny.to('cpu')\n")
    run = run_cli("--fix", tmp_path)
    assert run.returncode == 1
    assert "a_locked.py:1:1: E902 cannot write fixed file: file is read-only" in run.stdout
    assert "Traceback" not in run.stdout + run.stderr
    assert "x.to('cpu')\n" in locked.read_text()
    assert "y = y.to('cpu')" in other.read_text()


def test_diff_applies_with_patch_and_git_apply_and_writes_nothing(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "pkg").mkdir()
    (tree / "pkg" / "crlf.py").write_bytes(b"import torch\r\nx = torch.ones(2)\r\nx.to('cpu')\r\n")
    (tree / "no_newline.py").write_bytes(b"import torch\nx = torch.ones(2)\nx.cuda()")
    (tree / "clean.py").write_text("import torch\n")
    before = {p: p.read_bytes() for p in tree.rglob("*.py")}
    # bytes, not text: the patch must keep the CRLF file's "\r"
    run = subprocess.run([sys.executable, "-m", "torchdevlint", "--diff", "--unsafe-fixes", "."],
                         cwd=tree, capture_output=True)
    assert run.returncode == 1
    assert {p: p.read_bytes() for p in tree.rglob("*.py")} == before
    assert b"Would fix 3 findings in 2 files" in run.stderr
    assert b"x = x.to('cpu')\r\n" in run.stdout
    patch_file = tmp_path / "fix.patch"
    patch_file.write_bytes(run.stdout)
    # what --fix does, for comparison
    fixed_tree = tmp_path / "fixed"
    shutil.copytree(tree, fixed_tree)
    assert run_cli("--fix", "--unsafe-fixes", ".", cwd=fixed_tree).returncode == 0
    expected = {p.relative_to(fixed_tree): p.read_bytes() for p in fixed_tree.rglob("*.py")}
    for tool in (["patch", "-p0", "--binary", "-i", str(patch_file)],
                 ["git", "apply", str(patch_file)]):
        if shutil.which(tool[0]) is None:
            continue
        work = tmp_path / tool[0]
        shutil.copytree(tree, work)
        if tool[0] == "git":
            subprocess.run(["git", "init", "-q"], cwd=work, check=True)
        subprocess.run(tool, cwd=work, check=True, capture_output=True)
        assert {p.relative_to(work): p.read_bytes() for p in work.rglob("*.py")
                if ".git" not in p.parts} == expected, tool[0]


def test_diff_of_a_clean_tree_is_empty(tmp_path):
    (tmp_path / "clean.py").write_text("import torch\nx = torch.ones(2)\nx = x.to('cpu')\n")
    run = run_cli("--diff", tmp_path)
    assert run.returncode == 0 and run.stdout == ""


# -- the machinery ------------------------------------------------------------------------


def test_result_is_plain_picklable_data():
    path = FIXTURES / "TDL004" / "positive" / "train_loop.py"
    result = fix_bytes(path.read_bytes(), str(path), ALL_RULES, FixOptions(unsafe=True))
    copy = pickle.loads(pickle.dumps(result))
    assert copy.fixed == result.fixed and copy.applied == result.applied


def test_fixable_codes_limit_what_is_fixed():
    source = "import torch\nx = torch.ones(2)\nx.to('cpu')\ny = torch.zeros(1).cuda()\n"
    out = fixed(source, fixable=frozenset({"TDL002"}))
    assert "x.to('cpu')\n" in out and "torch.zeros(1, device=device)" in out
    out = fixed(source, unfixable=frozenset({"TDL002"}))
    assert "x = x.to('cpu')" in out and ".cuda()" in out


def test_non_convergence_is_reported_and_nothing_is_written(monkeypatch):
    def never_done(plan, finding, ctx):  # a broken fix: changes the file, never removes the finding
        return Fix(finding.code, True, "broken", (Edit(0, 0, "#\n"),))

    monkeypatch.setattr(DiscardedMove, "build", never_done)
    source = "import torch\nx = torch.ones(2)\nx.to('cpu')\n"
    result = fix_source(source, "s.py", ALL_RULES, UNSAFE)
    assert result.fixed == source and not result.changed
    assert result.internal_error and "did not converge" in result.error.message


def test_a_fix_that_breaks_the_code_is_not_written(monkeypatch, tmp_path):
    def breaks(plan, finding, ctx):
        return Fix(finding.code, True, "broken", (Edit(0, 0, "("),))

    monkeypatch.setattr(DiscardedMove, "build", breaks)
    source = "import torch\nx = torch.ones(2)\nx.to('cpu')\n"
    result = fix_source(source, "s.py", ALL_RULES, UNSAFE)
    assert result.fixed == source and result.internal_error
    assert "does not parse" in result.error.message


def test_unparsable_file_is_reported_not_fixed(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("def f(:\n")
    run = run_cli("--fix", path)
    assert run.returncode == 1 and "E999" in run.stdout
    assert path.read_text() == "def f(:\n"


def test_mode_of_file_is_kept_for_executable_scripts(tmp_path):
    path = tmp_path / "script.py"
    path.write_text("#!/usr/bin/env python\nimport torch\nx = torch.ones(2)\nx.to('cpu')\n")
    os.chmod(path, 0o755)
    assert run_cli("--fix", path).returncode == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o755
    assert path.read_text().startswith("#!/usr/bin/env python\n")


def test_tdl002_literal_is_safe_only_as_a_torch_argument():
    source = """\
        import torch
        DEVICE = "cuda"


        def same_device(t, device="cuda"):
            return t.device.type == device


        def f(t):
            return same_device(t, device="cuda"), torch.zeros(2, device="cuda"), t.to("cuda")


        def g(devices, i):
            return torch.device("cuda") in devices, torch.device("cuda", i)
        """
    safe = fixed(source, unsafe=False)
    assert 'DEVICE = "cuda"\n' in safe and 'device="cuda"):' in safe
    assert 'same_device(t, device="cuda")' in safe  # another function: may only compare
    assert 'torch.zeros(2, device="cuda" if torch.cuda.is_available() else "cpu")' in safe
    assert 't.to("cuda" if torch.cuda.is_available() else "cpu")' in safe
    assert 'torch.device("cuda") in devices' in safe  # a value that is compared
    unsafe = fixed(source)
    # only compared: not reported (TDL002 docs), so not rewritten either
    assert 'torch.device("cuda") in devices' in unsafe
    assert 'torch.device("cuda", i)' in unsafe  # explicit index: no fix at all
    assert codes(unsafe) == ["TDL002"]


def test_declared_encoding_is_kept(tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes("# -*- coding: latin-1 -*-\nimport torch  # café\nx = torch.ones(2)\n"
                     "x.to('cpu')\n".encode("latin-1"))
    assert run_cli("--fix", path).returncode == 0
    assert path.read_bytes() == ("# -*- coding: latin-1 -*-\nimport torch  # café\n"
                                 "x = torch.ones(2)\nx = x.to('cpu')\n").encode("latin-1")


def test_discarded_cuda_of_a_batch_item_is_assigned_then_rewritten():
    """Issue 13, point 3: TDL002's rewrite alone would keep the copy discarded."""
    source = """\
        import torch
        from torch.utils.data import DataLoader

        model = torch.nn.Linear(4, 2).to("cpu")
        loader = DataLoader([{"input": torch.randn(4)}], batch_size=1)
        for batch in loader:
            batch["input"].cuda()
            model(batch["input"])
        """
    assert 'batch["input"].cuda()\n' in fixed(source, unsafe=False)  # both fixes are unsafe
    out = fixed(source)
    assert '    batch["input"] = batch["input"].to(device)\n' in out
    assert codes(out) == []


def test_discarded_cuda_of_an_unknown_receiver_is_left_alone():
    source = "import torch\n\n\ndef f(thing):\n    thing.cuda()\n    return thing\n"
    assert fixed(source) == source
    assert codes(source) == ["TDL002"]


def test_discarded_cuda_of_a_module_is_still_fixed_safely():
    source = "import torch\n\n\ndef f(model: torch.nn.Module):\n    model.cuda()\n    return model\n"
    assert "    model.to(device)\n" in fixed(source, unsafe=False)


def test_tdl004_fix_uses_the_module_level_device_its_message_names():
    """Issue 13, point 4."""
    source = """\
        import torch
        from torch.utils.data import DataLoader

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = torch.nn.Linear(4, 2).to(device)


        def train(loader: DataLoader):
            for inputs, labels in loader:
                inputs = inputs.to(device)
                loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        """
    message = next(f.message for f in lint_source(textwrap.dedent(source), "s.py").findings
                   if f.code == "TDL004")
    assert "(`labels = labels.to(device)`)" in message
    assert "        labels = labels.to(device)\n" in fixed(source)


def test_fix_with_two_jobs_writes_and_reports_what_one_job_does(tmp_path):
    """--fix runs on the same per-file runner as linting, in parallel with -j."""
    outputs = {}
    for jobs in ("1", "2"):
        tree = tmp_path / f"j{jobs}"
        tree.mkdir()
        for path in POSITIVES:
            shutil.copyfile(path, tree / f"{path.parts[-3]}_{path.name}")
        result = run_cli("--fix", "--unsafe-fixes", "--no-cache", "-j", jobs, ".", cwd=tree)
        assert result.returncode in (0, 1), result.stderr
        outputs[jobs] = (result.stdout, {p.name: p.read_text() for p in sorted(tree.iterdir())})
    assert outputs["1"] == outputs["2"]
    assert any(text != path.read_text() for path in POSITIVES
               for name, text in outputs["2"][1].items() if name.endswith("_" + path.name))
