"""The rule pages (docs/rules/TDL00N.md), the single source of ``--explain``."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
# In a wheel the pages are shipped inside the package; in a source checkout they live in docs/.
_LOCATIONS = (_PACKAGE / "_rule_docs", _PACKAGE.parent / "docs" / "rules")


# Where a source checkout keeps the pages: generated from the rule classes'
# docstrings by ``python -m torchdevlint.rules.registry`` (as ruff's rule pages are its doc
# comments), so a page and its rule cannot drift (tests/test_rule_docs.py).
PAGES = _PACKAGE.parent / "docs" / "rules"


def page_text(code: str, name: str, docstring: str) -> str:
    """A rule's page: its code and name as the title, then its class's docstring (What it
    does / Why is this bad / Example / Use instead / Fix safety / Known limits)."""
    import inspect  # (only where pages are written or checked: not at start-up)
    return f"# {code}: {name}\n\n{inspect.cleandoc(docstring)}\n"


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
