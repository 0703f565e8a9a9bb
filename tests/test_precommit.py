"""A real pre-commit run of the hook in .pre-commit-hooks.yaml, in a throwaway git repository.

The hook repository is a committed snapshot of this checkout (tracked and new files, so the
test sees the working tree), and pre-commit installs it the way users get it: cloned at a
revision and pip-installed into its own environment.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

pytest.importorskip("pre_commit")

BUGGY = "import torch\nx = torch.ones(2)\nx.to('cpu')\nprint(x)\n"
FIXED = "import torch\nx = torch.ones(2)\nx = x.to('cpu')\nprint(x)\n"


def git(*args, cwd):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> tuple:
    """(path, revision) of a git repository holding this checkout's current files."""
    snapshot = tmp_path_factory.mktemp("hook-repo")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, snapshot / name)
    git("init", "-q", cwd=snapshot)
    git("add", "-A", cwd=snapshot)
    git("commit", "-q", "-m", "snapshot", cwd=snapshot)
    return snapshot, git("rev-parse", "HEAD", cwd=snapshot)


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def make_project(path: Path, hook_repo: tuple, args=()) -> Path:
    repo, rev = hook_repo
    path.mkdir()
    git("init", "-q", cwd=path)
    hook_args = f"\n    args: [{', '.join(args)}]" if args else ""
    (path / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {repo}\n  rev: {rev}\n  hooks:\n  - id: torchdevlint{hook_args}\n")
    return path


def pre_commit(project: Path, home: Path, *args):
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    env.pop("PYTHONPATH", None)  # the hook must run what pre-commit installed, not this checkout
    git("add", "-A", cwd=project)
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--color", "never", *args],
                          cwd=project, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)


def test_hook_fails_on_a_buggy_file_and_passes_a_clean_one(tmp_path, hook_repo, pre_commit_home):
    project = make_project(tmp_path / "project", hook_repo)
    (project / "clean.py").write_text(FIXED)
    (project / "notes.txt").write_text(BUGGY)  # not a Python file: the hook never sees it
    (project / "train.py").write_text(BUGGY)

    failing = pre_commit(project, pre_commit_home, "--all-files")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "train.py:3:1: TDL001" in failing.stdout
    assert "notes.txt" not in failing.stdout
    assert (project / "train.py").read_text() == BUGGY  # the lint hook never edits

    passing = pre_commit(project, pre_commit_home, "--files", "clean.py")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout


def test_fix_variant_repairs_the_file(tmp_path, hook_repo, pre_commit_home):
    project = make_project(tmp_path / "project", hook_repo, args=["--fix"])
    (project / "train.py").write_text(BUGGY)

    fixing = pre_commit(project, pre_commit_home, "--all-files")
    # pre-commit fails a run in which a hook modified files, so that the user looks at them.
    assert fixing.returncode == 1, fixing.stdout + fixing.stderr
    assert (project / "train.py").read_text() == FIXED
    again = pre_commit(project, pre_commit_home, "--all-files")
    assert again.returncode == 0, again.stdout + again.stderr


def test_hook_definition():
    import yaml  # a dependency of pre-commit

    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert (hook["id"], hook["entry"], hook["language"]) == ("torchdevlint", "torchdevlint", "python")
    assert hook["types_or"] == ["python", "pyi", "jupyter"]
    assert hook["require_serial"] is True  # the CLI spreads the files over processes itself


def _readme_block(marker: str) -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split(f"<!-- {marker} -->\n", 1)[1]
    return block.split("```", 2)[1].split("\n", 1)[1]


def test_readme_snippet_verbatim_against_a_clone_with_its_tags(tmp_path, pre_commit_home):
    """The README's block, its `rev` untouched, against a clone of this repository (the only
    change: the repository URL becomes the clone): the documented tag must exist."""
    config = _readme_block("pre-commit-config")
    [url] = [line.split("repo:", 1)[1].strip() for line in config.splitlines() if "repo:" in line]
    [rev] = [line.split("rev:", 1)[1].strip() for line in config.splitlines() if "rev:" in line]
    if subprocess.run(["git", "rev-parse", "--git-dir"], cwd=ROOT, capture_output=True).returncode:
        pytest.skip("not a git checkout: no tags to check")
    if not git("tag", "--list", cwd=ROOT):
        # A clone made without tags (CI's checkout of one branch) cannot show the release;
        # a checkout that has tags must have this one.
        pytest.skip("this checkout has no tags at all: the documented rev cannot be checked here")
    tags = git("tag", "--list", rev, cwd=ROOT)
    assert tags == rev, f"README's pre-commit rev {rev!r} is not a tag of this repository: " \
                        f"tag the release (git tag -a {rev} -m 'torchdevlint {rev}')"
    clone = tmp_path / "clone"
    git("clone", "-q", "--no-local", str(ROOT), str(clone), cwd=tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    git("init", "-q", cwd=project)
    (project / ".pre-commit-config.yaml").write_text(config.replace(url, str(clone)))
    (project / "train.py").write_text(BUGGY)
    result = pre_commit(project, pre_commit_home, "--all-files")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "train.py:3:1: TDL001" in result.stdout


def test_readme_install_line_names_the_tag_and_the_version():
    from torchdevlint import __version__
    line = _readme_block("install-command").strip()
    assert line.startswith('pip install "torchdevlint @ git+https://') and line.endswith('"')
    assert line.rstrip('"').rsplit("@", 1)[1] == f"v{__version__}"
    assert f"rev: v{__version__}" in _readme_block("pre-commit-config")
    # pip accepts the requirement as written (name, direct URL, tag)
    from pip._vendor.packaging.requirements import Requirement
    requirement = Requirement(line.split(" ", 2)[2].strip('"'))
    assert requirement.name == "torchdevlint" and requirement.url.startswith("git+https://")


def test_readme_install_line_installs_from_a_clone_at_its_tag(tmp_path):
    """pip runs the README's line as written, but for the repository URL, which becomes a
    clone of this checkout: the tag exists, the package builds from it, and it is the version
    the tag names."""
    line = _readme_block("install-command").strip()
    if subprocess.run(["git", "rev-parse", "--git-dir"], cwd=ROOT, capture_output=True).returncode:
        pytest.skip("not a git checkout: no tags to install from")
    if not git("tag", "--list", cwd=ROOT):
        pytest.skip("this checkout has no tags at all: the documented tag cannot be installed here")
    requirement = line.split(" ", 2)[2].strip('"')
    url = requirement.split("git+", 1)[1].rsplit("@", 1)[0]
    clone = tmp_path / "clone"
    git("clone", "-q", "--no-local", str(ROOT), str(clone), cwd=tmp_path)
    target = tmp_path / "site"
    # file://localhost/...: older pips reject a requirement URL with an empty host
    local = requirement.replace(url, "file://localhost" + clone.as_posix())
    result = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                             "--target", str(target), local], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    from torchdevlint import __version__
    assert (target / "torchdevlint" / "cli.py").is_file()
    assert (target / f"torchdevlint-{__version__}.dist-info").is_dir()
