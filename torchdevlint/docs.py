"""The rule pages (docs/rules/TDL00N.md), the single source of ``--explain``."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
# In a wheel the pages are shipped inside the package; in a source checkout they live in docs/.
_LOCATIONS = (_PACKAGE / "_rule_docs", _PACKAGE.parent / "docs" / "rules")


def rule_doc(code: str) -> str:
    for folder in _LOCATIONS:
        page = folder / f"{code}.md"
        if page.is_file():
            return page.read_text(encoding="utf-8").rstrip("\n")
    raise FileNotFoundError(f"documentation for {code} is missing from this installation")


# Where the rule pages are published (SARIF helpUri, JSON "url"). Keep in step with the
# repository's public address.
PROJECT_URL = "https://github.com/torchdevlint/torchdevlint"


def rule_url(code: str) -> str:
    return f"{PROJECT_URL}/blob/main/docs/rules/{code}.md"


def install_extra(extra: str) -> str:
    """How to install an optional extra: torchdevlint is on no package index, so
    ``pip install "torchdevlint[server]"`` fails; a checkout or the git URL works."""
    return (f'pip install ".[{extra}]" in a checkout of torchdevlint, or '
            f'pip install "torchdevlint[{extra}] @ git+{PROJECT_URL}"')
