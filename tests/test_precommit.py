"""A real pre-commit run of the hook in .pre-commit-hooks.yaml, in a throwaway git repository.

The hook repository is a committed snapshot of this checkout (tracked and new files, so the
test sees the working tree), and pre-commit installs it the way users get it: cloned at a
revision and pip-installed into its own environment.
"""
from __future__ import annotations

import os
import shlex
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


def _readme_url(config: str) -> str:
    [url] = [line.split("repo:", 1)[1].strip() for line in config.splitlines() if "repo:" in line]
    return url


def test_readme_snippet_pinned_as_documented_on_a_clone_without_tags(tmp_path, hook_repo,
                                                                      pre_commit_home):
    """The README's block and then its pin command, as written but for the repository URL,
    which becomes a repository holding this checkout's files and no tag at all (release tags
    do not travel with every clone): pre-commit pins `rev` to its newest commit's hash, and
    the hook then runs from it, with no warning about a mutable `rev`."""
    config = _readme_block("pre-commit-config")
    url = _readme_url(config)
    repo, head = hook_repo
    assert not git("tag", "--list", cwd=repo)
    project = tmp_path / "project"
    project.mkdir()
    git("init", "-q", cwd=project)
    (project / ".pre-commit-config.yaml").write_text(config.replace(url, str(repo)))
    (project / "train.py").write_text(BUGGY)

    pin = shlex.split(_readme_block("pre-commit-pin").strip())
    assert pin[:2] == ["pre-commit", "autoupdate"] and url in pin
    env = {**os.environ, "PRE_COMMIT_HOME": str(pre_commit_home)}
    env.pop("PYTHONPATH", None)
    pinned_args = [str(repo) if word == url else word for word in pin[1:]]
    pinned = subprocess.run([sys.executable, "-m", "pre_commit", *pinned_args], cwd=project,
                            env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert pinned.returncode == 0, pinned.stdout + pinned.stderr
    [rev] = [line.split("rev:", 1)[1].split("#", 1)[0].strip()
             for line in (project / ".pre-commit-config.yaml").read_text().splitlines()
             if "rev:" in line]
    assert rev == head, (rev, head)

    result = pre_commit(project, pre_commit_home, "--all-files")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "train.py:3:1: TDL001" in result.stdout
    assert "mutable reference" not in result.stdout + result.stderr


def test_readme_install_line_is_the_git_url_without_a_tag():
    line = _readme_block("install-command").strip()
    assert line.startswith('pip install "torchdevlint @ git+https://') and line.endswith('"')
    # pip accepts the requirement as written (name, direct URL), and names no tag
    from pip._vendor.packaging.requirements import Requirement
    requirement = Requirement(line.split(" ", 2)[2].strip('"'))
    assert requirement.name == "torchdevlint" and requirement.url.startswith("git+https://")
    assert "@" not in requirement.url.split("://", 1)[1], "a tag or branch does not travel"
    from torchdevlint.docs import PROJECT_URL
    assert requirement.url == f"git+{PROJECT_URL}" == f"git+{_readme_url(_readme_block('pre-commit-config'))}"


def test_readme_install_line_installs_from_a_clone_without_tags(tmp_path, hook_repo):
    """pip runs the README's line as written, but for the repository URL, which becomes a
    repository holding this checkout's files and no tag: the package builds from it."""
    line = _readme_block("install-command").strip()
    repo, _ = hook_repo
    requirement = line.split(" ", 2)[2].strip('"')
    url = requirement.split("git+", 1)[1]
    target = tmp_path / "site"
    # file://localhost/...: older pips reject a requirement URL with an empty host
    local = requirement.replace(url, "file://localhost" + repo.as_posix())
    result = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                             "--target", str(target), local], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    from torchdevlint import __version__
    assert (target / "torchdevlint" / "cli.py").is_file()
    assert (target / f"torchdevlint-{__version__}.dist-info").is_dir()


def test_hook_on_a_changed_file_sees_the_rest_of_the_project(tmp_path, hook_repo, pre_commit_home):
    """Issue 27: pre-commit names only the changed file; the facts of the project's other
    files (a guard flag in config/flags.py) still apply, as on the whole project."""
    project = make_project(tmp_path / "project", hook_repo)
    for item in (ROOT / "fixtures" / "projects" / "guard_across_imports").glob("[!.]*"):
        (shutil.copytree if item.is_dir() else shutil.copy)(item, project / item.name)
    guarded = pre_commit(project, pre_commit_home, "--files", "train.py")
    assert guarded.returncode == 0, guarded.stdout + guarded.stderr
    unguarded = pre_commit(project, pre_commit_home, "--files", "report.py")
    assert unguarded.returncode == 1 and "report.py:9:18: TDL002" in unguarded.stdout


@pytest.mark.parametrize("name, changed, expected", [
    ("placement_across_calls", ("engine.py", "metrics.py"),
     {("engine.py", 6, "TDL004", "as main.py:16 does"), ("metrics.py", 6, "TDL008", "as main.py:19 does"),
      ("metrics.py", 14, "TDL011", "as main.py:19 does"),
      ("engine.py", 22, "TDL004", "as sharded.py:18 does"),
      ("engine.py", 30, "TDL004", "as sharded.py:27 does")}),
    ("buffer_moved", ("model.py",), {("model.py", 9, "TDL005", "train.py:6")}),
    ("gpu_only", ("train.py", "model.py"), {("train.py", 7, "TDL003", "map_location")}),
    ("program_gpu_evidence", ("fp8_benchmark.py", "fused_adam.py"),
     {("fused_adam.py", 10, "TDL002", "hard-codes the CUDA device")}),
    # train.py calls distributed.py's helper, which stops without CUDA: GPU-only
    ("program_stops_without_cuda", ("train.py", "evaluate.py"),
     {("evaluate.py", 8, "TDL002", "hard-codes the CUDA device")}),
    # utils.py alone: its G and D loads are reached only after train.py's and sample.py's
    # CUDA moves (silent); the counters and load_model are not
    ("load_after_cuda_use", ("utils.py",),
     {("utils.py", 9, "TDL003", "map_location"), ("utils.py", 13, "TDL003", "map_location")}),
])
def test_hook_on_changed_files_gets_the_cross_file_findings(tmp_path, hook_repo, pre_commit_home,
                                                           name, changed, expected):
    """Issue 27: pre-commit on the changed files of the fixture projects reports what the CLI
    reports on the whole project (tests/test_project_index.py), naming the file that proves
    a finding; a GPU-only project reports no TDL002 and says so once."""
    project = make_project(tmp_path / "project", hook_repo)
    for item in (ROOT / "fixtures" / "projects" / name).glob("[!.]*"):
        (shutil.copytree if item.is_dir() else shutil.copy)(item, project / item.name)
    result = pre_commit(project, pre_commit_home, "--files", *changed)
    assert result.returncode == 1, result.stdout + result.stderr
    rows = [line for line in result.stdout.splitlines() if ": TDL" in line]
    found = {(row.split(":")[0], int(row.split(":")[1]), row.split(": ")[1].split()[0])
             for row in rows}
    assert found == {item[:3] for item in expected}, result.stdout
    for file, line, code, words in expected:
        assert any(row.startswith(f"{file}:{line}:") and words in row for row in rows), rows
    assert result.stdout.count("taken for GPU-only") == (name in ("gpu_only",
                                                                  "program_gpu_evidence",
                                                                  "program_stops_without_cuda"))
