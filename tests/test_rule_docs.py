"""A rule's docs page is its class's docstring (issue 26, as ruff's rule pages are its doc
comments): ``python -m torchdevlint.rules.registry`` writes ``docs/rules/CODE.md`` from it, and
a page that differs from what the command writes fails here."""
from __future__ import annotations

import pytest

from conftest import ROOT
from torchdevlint.docs import PAGES, page_text
from torchdevlint.rules import registry

RULE_CLASSES = tuple(registry.classes_by_code().values())


@pytest.mark.parametrize("rule", RULE_CLASSES, ids=lambda r: r.code)
def test_each_page_is_what_the_command_generates_from_the_docstring(rule):
    page = ROOT / "docs" / "rules" / f"{rule.code}.md"
    assert page.read_text(encoding="utf-8") == registry.rule_page(rule), (
        f"{page.name} differs from {rule.__name__}'s docstring: edit the docstring and run "
        f"`{registry.REGENERATE}`")


def test_the_pages_are_the_ones_the_checkout_holds():
    assert PAGES == ROOT / "docs" / "rules"
    assert sorted(p.stem for p in PAGES.glob("*.md")) == sorted(r.code for r in RULE_CLASSES)


def test_the_command_writes_a_changed_docstring_into_the_page(tmp_path, monkeypatch):
    rule = RULE_CLASSES[0]
    edited = type(rule.__name__, (rule,), {"__doc__": rule.__doc__ + "\n    One more line.\n"})
    monkeypatch.setattr(registry, "_discover", lambda: {rule.code: edited})
    monkeypatch.setattr(registry, "PAGES", tmp_path)
    monkeypatch.setattr(registry, "CATALOG_PATH", tmp_path / "_catalog.py")
    monkeypatch.setattr(registry, "CHECKOUT", tmp_path)
    (tmp_path / f"{rule.code}.md").write_text(registry.rule_page(rule), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\ndescription = "A static analyzer for PyTorch device-management '
        'bugs: old."\n', encoding="utf-8")
    assert registry.main() == 0
    written = (tmp_path / f"{rule.code}.md").read_text(encoding="utf-8")
    assert written == registry.rule_page(rule).rstrip("\n") + "\n\nOne more line.\n"
    # the descriptions that name every rule are written too
    assert (tmp_path / "pyproject.toml").read_text(encoding="utf-8") == (
        '[project]\nname = "x"\ndescription = "A static analyzer for PyTorch device-management '
        f'bugs: {rule.name}."\n')


def test_a_rule_without_a_docstring_has_no_page():
    class Undocumented:
        code, name, __doc__ = "TDL999", "undocumented", None
    with pytest.raises(ValueError, match="no docstring"):
        registry.rule_page(Undocumented)


def test_the_page_is_the_title_then_the_docstring():
    doc = """
        ## What it does
        Reports this.

        ```python
        if x:
            y()
        ```
        """
    assert page_text("TDL999", "demo", doc) == (
        "# TDL999: demo\n\n## What it does\nReports this.\n\n```python\nif x:\n    y()\n```\n")


def test_adding_a_rule_names_what_the_command_writes_and_what_is_written_by_hand():
    guide = (ROOT / "docs" / "adding-a-rule.md").read_text(encoding="utf-8")
    generated = ["torchdevlint/rules/_catalog.py", "docs/rules/TDLNNN.md",
                 *(name for name, _, _ in registry.DESCRIPTIONS)]
    by_hand = ["tests/runtime/runtime_proofs.py", "tests/runtime/test_mutations.py"]
    for path in generated + by_hand:
        assert f"`{path}`" in guide, path
    for path in by_hand + [name for name, _, _ in registry.DESCRIPTIONS]:
        assert (ROOT / path).is_file(), path
    assert registry.REGENERATE in guide
