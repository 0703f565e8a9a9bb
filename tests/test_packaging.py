"""What a user installs: no torch, the CLI entry point, the flake8 plugin, the rule pages."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile

import pytest

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


def _declared_requirements() -> list:
    """Every requirement of the package: runtime and every extra's."""
    from packaging.requirements import Requirement
    project = _pyproject()["project"]
    return [Requirement(text) for text in project["dependencies"]
            + [r for extra in project["optional-dependencies"].values() for r in extra]]


def _floor(requirement):
    from packaging.version import Version
    floors = [Version(s.version) for s in requirement.specifier if s.operator in (">=", "==", "~=")]
    return max(floors) if floors else None


def test_every_dependency_declares_its_lowest_version():
    """A requirement without a lower bound has no tested floor: the lowest-versions run of
    .ci/python-versions would install whatever ancient release the index has (numpy 1.3)."""
    unbounded = [str(r) for r in _declared_requirements() if _floor(r) is None]
    assert not unbounded, f"no lower bound: {unbounded}"


def test_ci_installs_the_lowest_declared_versions_on_the_lowest_python():
    script = (ROOT / ".ci" / "python-versions").read_text(encoding="utf-8")
    assert "--resolution lowest-direct" in script and "TORCHDEVLINT_LOWEST_DEPS=" in script
    assert '"$lowest_deps:lowest"' in script
    assert "bash .ci/python-versions" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.skipif(not os.environ.get("TORCHDEVLINT_LOWEST_DEPS"),
                    reason="only in .ci/python-versions' lowest-versions run")
def test_installed_versions_are_the_declared_floors():
    """In the lowest-versions run, every dependency installed is at its declared floor: the
    suite that passes there proves the floors, and a floor that cannot be installed (yanked,
    never released, below what another requirement needs) fails here."""
    from importlib import metadata

    from packaging.version import Version
    checked, wrong = [], []
    for requirement in _declared_requirements():
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        try:
            installed = Version(metadata.version(requirement.name))
        except metadata.PackageNotFoundError:
            assert requirement.name == "torch", f"{requirement} is not installed"
            continue  # the runtime suite's torch: see .ci/python-versions
        checked.append(requirement.name)
        if installed != _floor(requirement):
            wrong.append(f"{requirement}: {installed} installed")
    assert "libcst" in checked and not wrong, wrong
