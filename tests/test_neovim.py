"""docs/editors.md's Neovim configuration, fix-on-save included, in a real headless Neovim.

The configuration is read from the page itself. Skipped where no Neovim 0.11 or newer is on
PATH (the page's `vim.lsp.config` needs 0.11; Debian 12's package is 0.7); .ci/run installs
one.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

pytest.importorskip("pygls")

BUGGY = "import torch\nx = torch.ones(2)\nx.to('cpu')\nprint(x)\n"
FIXED = "import torch\nx = torch.ones(2)\nx = x.to('cpu')\nprint(x)\n"


def _neovim() -> str:
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("no nvim on PATH")
    version = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=60)
    match = re.match(r"NVIM v(\d+)\.(\d+)", version.stdout)
    if match is None or (int(match.group(1)), int(match.group(2))) < (0, 11):
        pytest.skip(f"Neovim 0.11 or newer needed: {version.stdout.splitlines()[:1]}")
    return nvim


def _documented_config() -> str:
    page = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    section = page.split("## Neovim", 1)[1].split("\n## ", 1)[0]
    [config] = re.findall(r"```lua\n(.*?)```", section, re.S)
    assert "source.fixAll.torchdevlint" in config and "BufWritePre" in config
    return config


# Open the file as a person would, wait until the server has attached and published its
# diagnostics (it has the document), then `:write` and quit.
DRIVER = r"""
local path = vim.env.TDL_FILE
vim.cmd.edit(vim.fn.fnameescape(path))
local ok = vim.wait(60000, function()
  local clients = vim.lsp.get_clients({ bufnr = 0, name = "torchdevlint" })
  return #clients > 0 and clients[1].initialized and #vim.diagnostic.get(0) > 0
end, 50)
if not ok then
  io.stderr:write("torchdevlint never attached or never reported\n")
  vim.cmd("cquit 3")
end
vim.cmd.write()
io.stderr:write("modified after write: " .. tostring(vim.bo.modified) .. "\n")
vim.cmd("qall!")
"""


def test_fix_on_save_fixes_the_file_on_disk(tmp_path):
    nvim = _neovim()
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "p"\n')
    (project / "train.py").write_text(BUGGY)
    (tmp_path / "init.lua").write_text(_documented_config())
    (tmp_path / "driver.lua").write_text(DRIVER)
    env = {**os.environ, "TDL_FILE": str(project / "train.py"),
           # the documented `cmd = { "torchdevlint", "server" }` finds this environment's
           "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[name] = str(tmp_path / name.lower())
    env.pop("PYTHONPATH", None)
    result = subprocess.run([nvim, "--headless", "-n", "-i", "NONE", "-u", str(tmp_path / "init.lua"),
                             "-c", f"luafile {tmp_path / 'driver.lua'}"],
                            cwd=project, env=env, capture_output=True, text=True, timeout=180,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "modified after write: false" in result.stderr, result.stderr
    assert (project / "train.py").read_text() == FIXED, result.stderr
