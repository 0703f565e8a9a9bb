"""What a user installs: no torch, the CLI entry point, the flake8 plugin, the rule pages."""
from __future__ import annotations

import subprocess
import sys
import zipfile

from conftest import ROOT
from torchdevlint.rules import ALL_RULES

SECTIONS = ("## What it does", "## Why is this bad", "## Example", "## Use instead", "## Fix safety",
            "## Known limits")


def test_wheel_has_no_torch_dependency_and_ships_rule_docs(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path),
                    str(ROOT)], check=True)
    [wheel] = tmp_path.glob("torchdevlint-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith("METADATA"))).decode()
        entry_points = archive.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    runtime = [line for line in requires if "extra ==" not in line]
    # libcst, plus tomli where the standard library has no tomllib (Python < 3.11).
    assert runtime and all("libcst" in line or ("tomli" in line and "python_version < '3.11'"
                                                 in line.replace('"', "'")) for line in runtime), runtime
    assert any("torch" in line and "extra == 'test'" in line.replace('"', "'") for line in requires)
    for rule in ALL_RULES:
        assert f"torchdevlint/_rule_docs/{rule.code}.md" in names
    assert "torchdevlint = torchdevlint.cli:main" in entry_points
    assert "TDL = torchdevlint.flake8_plugin:TorchDevLintChecker" in entry_points


def test_rule_pages_have_every_section():
    for rule in ALL_RULES:
        text = (ROOT / "docs" / "rules" / f"{rule.code}.md").read_text(encoding="utf-8")
        assert text.startswith(f"# {rule.code}: {rule.name}\n")
        positions = [text.index(section) for section in SECTIONS]
        assert positions == sorted(positions)


def test_readme_commands_and_ci_agree():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "<!-- lint-command -->" in readme and "<!-- test-command -->" in readme
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "test-command" in ci and "eval" in ci


def test_supported_pythons_agree_in_readme_classifiers_and_requires_python():
    import re

    from torchdevlint import syntax
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    versions = sorted(tuple(map(int, v.split("."))) for v in
                      re.findall(r'"Programming Language :: Python :: (3\.\d+)"', pyproject))
    lowest, highest = versions[0], versions[-1]
    assert versions == [(3, minor) for minor in range(lowest[1], highest[1] + 1)]
    assert f'requires-python = ">={lowest[0]}.{lowest[1]}"' in pyproject
    assert lowest == syntax.OLDEST
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"Python {lowest[0]}.{lowest[1]} to {highest[0]}.{highest[1]}" in readme
    assert "bash .ci/python-versions" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _pyproject() -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_descriptions_name_every_rule():
    """The package's summary and the pre-commit hook's description list the rules of the
    registry, every one by name (they once named 4 of 11)."""
    import re
    names = ", ".join(rule.name + ("" if rule.default_enabled else " (opt-in)") for rule in ALL_RULES)
    summary = _pyproject()["project"]["description"]
    assert summary == f"A static analyzer for PyTorch device-management bugs: {names}."
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    [description] = re.findall(r'^\s*description:\s*"(.*)"\s*$', hooks, re.M)
    assert description == f"Find PyTorch device-management bugs: {names}."

