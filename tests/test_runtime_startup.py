"""The pretend accelerator costs the linter nothing: importing torchdevlint, its runtime
package and its pytest plugin imports no torch, and a pytest run that does not ask for the
pretend accelerator never imports it either (issue 29). Runs without torch too."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from conftest import ROOT


def test_importing_the_runtime_and_the_plugin_imports_no_torch():
    probe = ("import sys, torchdevlint, torchdevlint.runtime, torchdevlint.runtime.pytest_plugin, "
             "torchdevlint.runtime._traceback; print('torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_a_pytest_run_that_does_not_ask_never_imports_torch(tmp_path):
    (tmp_path / "test_plain.py").write_text(textwrap.dedent("""\
        import sys


        def test_no_torch():
            assert "torch" not in sys.modules
    """))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             # other plugins installed beside it may import torch themselves
                             "-p", "no:asyncio", "-p", "no:hypothesispytest", "-p", "no:pytest_lsp",
                             "test_plain.py"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
