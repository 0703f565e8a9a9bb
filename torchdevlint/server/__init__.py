"""``torchdevlint server``: a Language Server Protocol server over standard input and output.

It needs pygls (the ``server`` extra: ``pip install ".[server]"``), which nothing else
imports: the linter itself never depends on it.
"""

from __future__ import annotations

import sys
from typing import Optional, Sequence

USAGE = """usage: torchdevlint server [--stdio]

Run the torchdevlint language server on standard input and output (the Language Server
Protocol), for editors: diagnostics as you type, quick fixes, fix-all, notebooks.
Setup for VS Code, Neovim, Helix, Zed and Emacs: docs/editors.md.

options:
  --stdio     accepted for editors that pass it; standard input and output is the only
              transport
  -h, --help  show this help message and exit"""


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[2:] if argv is None else argv)
    if any(arg in ("-h", "--help") for arg in args):
        print(USAGE)
        return 0
    unknown = [arg for arg in args if arg != "--stdio"]
    if unknown:
        print(f"torchdevlint server: error: unrecognized arguments: {' '.join(unknown)}",
              file=sys.stderr)
        return 2
    problem = _missing_pygls()
    if problem is not None:
        from torchdevlint.docs import install_extra
        print(f"torchdevlint server: error: the language server needs pygls 2 ({problem}): "
              f"install the server extra: {install_extra('server')}", file=sys.stderr)
        return 2
    from torchdevlint.server.lsp import serve
    return serve()


def _missing_pygls() -> Optional[str]:
    from importlib import metadata
    for package in ("pygls", "lsprotocol"):
        try:
            version = metadata.version(package)
        except metadata.PackageNotFoundError:
            return f"{package} is not installed"
        if package == "pygls" and not version.startswith("2."):
            return f"pygls {version} is installed"
    return None
