"""Every command the README shows is run here (or, for the few that need what a test cannot
have, by the named test that does), so that a newcomer copying one never meets an error.

The commands are read from the README itself: code blocks (shell lines, `$ ` prompts, the
`run:` / `script:` lines of CI snippets) and inline code that starts with a program name. A
command this file does not know fails the test: document it, then say here how it is run.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT

PROGRAMS = ("torchdevlint", "flake8", "pip", "python", "ruff", "grep", "pre-commit")
README = (ROOT / "README.md").read_text(encoding="utf-8")
# Exit codes a documented lint command may end with: clean or findings, never a usage error.
LINT_EXITS = (0, 1)


def readme_commands(text: str = README) -> list:
    """(where, command) for every command the README shows."""
    found = []
    for match in re.finditer(r"```(\w*)\n(.*?)```", text, re.S):
        for line in match.group(2).splitlines():
            command = re.sub(r"^\s*(?:\$\s|-\s+(?:run:\s*)?)?", "", line).strip()
            if re.match(rf"(?:{'|'.join(PROGRAMS)})\s", command):
                found.append((f"```{match.group(1)} block", command))
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for match in re.finditer(r"`([^`]+)`", prose):
        command = " ".join(match.group(1).split())  # (inline code may wrap across lines)
        if re.match(rf"(?:{'|'.join(PROGRAMS)})\s", command):
            found.append(("inline", command))
    return found


COMMANDS = readme_commands()


def test_the_readme_shows_commands_at_all():
    kinds = {command.split()[0] for _, command in COMMANDS}
    assert {"torchdevlint", "flake8", "pip", "python", "ruff"} <= kinds, kinds


# -- a project to run them in --------------------------------------------------------------

TRAIN = '''import torch
import torch.nn as nn
from torch.utils.data import DataLoader

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(8, 2).to(device)
loader = DataLoader(torch.randn(16, 8), batch_size=4)
for images, labels in loader:
    images.to(device)
    out = model(images)
'''


@pytest.fixture
def sample(tmp_path) -> Path:
    """A small project with findings: a script, a notebook, a package."""
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "sample"\n', encoding="utf-8")
    (root / "train.py").write_text(TRAIN, encoding="utf-8")
    shutil.copy(ROOT / "tests" / "data" / "training.ipynb", root / "notebook.ipynb")
    shutil.copy(FIXTURES / "TDL004" / "positive" / "train_loop.py", root / "pkg" / "loop.py")
    return root


def _placeheld(command: str, root: Path) -> list:
    """The command's arguments with the README's placeholders made real."""
    words = []
    for word in shlex.split(command):
        if word in ("path/to/your/project", "PATH"):
            word = "."
        elif word == "CODE":
            word = "TDL001"
        words.append(word)
    return words


def _run(words: list, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    program, *rest = words
    argv = {"torchdevlint": [sys.executable, "-m", "torchdevlint"],
            "flake8": [sys.executable, "-m", "flake8"],
            "ruff": [shutil.which("ruff") or "ruff"]}.get(program, [program])
    return subprocess.run([*argv, *rest], cwd=cwd, capture_output=True, text=True, input=stdin,
                          timeout=600, env={**os.environ, "NO_COLOR": "1"})


def _no_crash(result: subprocess.CompletedProcess, command: str) -> None:
    assert "Traceback" not in result.stderr, f"{command}\n{result.stderr}"
    assert "error:" not in result.stderr.lower() or result.returncode != 2, \
        f"{command}: usage error\n{result.stderr}"


# -- the commands ----------------------------------------------------------------------------

LINT = [c for _, c in COMMANDS if c.split()[0] == "torchdevlint" and " server" not in c
        and not c.startswith("torchdevlint --add-noqa")]


@pytest.mark.parametrize("command", sorted(set(LINT)))
def test_torchdevlint_commands(command, sample):
    pipeline = [part.strip() for part in command.split("|")]
    result = _run(_placeheld(pipeline[0], sample), sample)
    _no_crash(result, command)
    assert result.returncode in LINT_EXITS, f"{command}: exit {result.returncode}\n{result.stderr}"
    words = pipeline[0].split()
    if any(w in words for w in ("--list-rules", "--explain", "rule")):
        assert result.returncode == 0 and result.stdout.strip()
    elif "--output-file" in words:
        report = sample / words[words.index("--output-file") + 1]
        assert report.is_file() and report.stat().st_size > 0
        assert result.returncode == (0 if "--exit-zero" in words else 1)
    elif "--fix" in words:
        assert "images = images.to(device)" in (sample / "train.py").read_text(encoding="utf-8")
    elif "--diff" in words:
        assert result.returncode == 1 and "+    images = images.to(device)" in result.stdout
        for reader in pipeline[1:]:  # `| less`: a pager reading the diff
            assert reader.split()[0] in ("less", "more")
    else:
        assert result.returncode == 1 and "TDL" in result.stdout, result.stdout


def test_adopting_with_add_noqa_then_listing_the_directives(sample):
    [add] = [c for _, c in COMMANDS if c.startswith("torchdevlint --add-noqa")]
    result = _run(_placeheld(add, sample), sample)
    _no_crash(result, add)
    assert result.returncode == 0 and "Added" in result.stderr
    assert _run(["torchdevlint", "."], sample).returncode == 0  # nothing reported any more
    [grep] = [c for _, c in COMMANDS if c.startswith("grep ")]
    listed = subprocess.run(shlex.split(grep) + ["."], cwd=sample, capture_output=True, text=True)
    assert listed.returncode == 0 and "noqa: TDL" in listed.stdout


def test_flake8_command(sample):
    [command] = [c for _, c in COMMANDS if c.startswith("flake8 ")]
    result = _run(_placeheld(command, sample), sample)
    _no_crash(result, command)
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if " TDL" in line]
    assert lines and all(line.split(" ")[1].startswith("TDL") for line in lines)


def test_server_command_starts_and_stops(sample):
    pytest.importorskip("pygls")
    [command] = {c for _, c in COMMANDS if c == "torchdevlint server"}
    # an editor that connects and goes away at once: no traceback, not a usage error
    result = _run(_placeheld(command, sample), sample, stdin="")
    _no_crash(result, command)
    assert result.returncode in (0, 1)  # 1: it exited without an LSP shutdown request


def test_ruff_commands_keep_torchdevlint_noqa(sample):
    """The README's advice: with `external = ["TDL"]`, ruff's RUF100 keeps `# noqa: TDL001`."""
    if shutil.which("ruff") is None:
        pytest.skip("ruff is not installed (it is in the test extra)")
    [command] = {c for _, c in COMMANDS if c.startswith("ruff ")}
    config = README.split("[tool.ruff.lint]", 1)[1].split("```", 1)[0]
    (sample / "pyproject.toml").write_text(
        '[project]\nname = "sample"\n\n[tool.ruff.lint]' + config, encoding="utf-8")
    (sample / "moved.py").write_text(
        "import torch\nx = torch.ones(2)\nx.to('cpu')  # noqa: TDL001\n", encoding="utf-8")
    result = _run(_placeheld(command, sample), sample)
    assert result.returncode in LINT_EXITS, result.stderr
    fixed = _run(["ruff", "check", "--select", "RUF100", "--fix", "moved.py"], sample)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "# noqa: TDL001" in (sample / "moved.py").read_text(encoding="utf-8")
    assert _run(["torchdevlint", "moved.py"], sample).returncode == 0


def test_pip_install_and_lint_in_a_fresh_environment(tmp_path, sample):
    """The README's first command, as a new user runs it: a fresh virtual environment (no
    torch), `pip install .` from a copy of this checkout, then the lint."""
    [command] = [c for _, c in COMMANDS if c.startswith("pip install . && torchdevlint")]
    source = tmp_path / "checkout"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".torchdevlint_cache", "__pycache__", "*.egg-info", "build", "dist"))
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    bin_dir = environment / ("Scripts" if os.name == "nt" else "bin")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "VIRTUAL_ENV": str(environment), "NO_COLOR": "1"}
    env.pop("PYTHONPATH", None)
    install, lint = [part.strip() for part in command.split("&&")]
    installed = subprocess.run(shlex.split(install) + ["--quiet"], cwd=source, env=env,
                               capture_output=True, text=True, timeout=900)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    result = subprocess.run(_placeheld(lint, sample), cwd=sample, env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 1 and "train.py:9:5: TDL001" in result.stdout, \
        result.stdout + result.stderr
    no_torch = subprocess.run([str(bin_dir / "python"), "-c", "import torch"], env=env,
                              capture_output=True)
    assert no_torch.returncode != 0  # the linter did not pull torch in


@pytest.mark.parametrize("extra, module", [("watch", "watchfiles"), ("server", "pygls")])
def test_pip_install_extras_exist(extra, module):
    """`pip install ".[watch]"` / `".[server]"`: the extra is declared, and what it installs is
    what the feature imports (installed here by the test extra)."""
    commands = [c for _, c in COMMANDS if c == f'pip install ".[{extra}]"']
    assert commands, f"the README no longer shows the {extra} extra"
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["optional-dependencies"]
    assert any(requirement.startswith(module) for requirement in extras[extra])
    pytest.importorskip(module)


# The commands a test elsewhere runs: each with the test that does, and why not here.
RUN_ELSEWHERE = {
    'pip install "torchdevlint @ git+https://github.com/torchdevlint/torchdevlint"':
        "tests/test_precommit.py::test_readme_install_line_installs_from_a_clone_without_tags "
        "(pip installs it from a clone of this checkout)",
    'pip install "torchdevlint[server] @ git+https://github.com/torchdevlint/torchdevlint"':
        "tests/test_precommit.py::test_readme_install_line_installs_from_a_clone_without_tags "
        "(the same URL; the extra is checked by test_pip_install_extras_exist)",
    'pre-commit autoupdate --freeze --repo https://github.com/torchdevlint/torchdevlint':
        "tests/test_precommit.py::test_readme_snippet_pinned_as_documented_on_a_clone_without_tags "
        "(pre-commit pins a clone of this checkout, then runs the hook)",
    'pip install torch==2.13.0 && pip install -e ".[test]" && python -m pytest':
        ".ci/run (CI runs exactly this line on a clean clone)",
    "python -m pytest --fake-accelerator":
        "tests/runtime/test_fake_accelerator_plugin.py::test_the_session_runs_on_a_pretend_gpu "
        "(a user's test suite, run by that command in a child process)",
    "python -m torchdevlint.runtime train.py --max-steps 2":
        "tests/runtime/test_fake_accelerator.py::test_a_script_run_on_it (a training script, "
        "with its own arguments after its name)",
}


def test_commands_run_elsewhere_are_still_the_readme_commands():
    shown = {c for _, c in COMMANDS}
    for command in RUN_ELSEWHERE:
        assert command in shown, f"{command!r} is no longer in the README"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "test-command" in ci and "eval" in ci


@pytest.mark.parametrize("command", sorted({c for _, c in COMMANDS
                                            if c.startswith("python benchmarks/")}))
def test_benchmark_commands_name_real_options(command):
    """A benchmark takes minutes to an hour: the test runs its `--help` and checks that every
    option the README gives it exists."""
    words = shlex.split(command)
    script = ROOT / words[1]
    assert script.is_file(), script
    helped = subprocess.run([sys.executable, str(script), "--help"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert helped.returncode == 0, helped.stderr
    for option in (w for w in words[2:] if w.startswith("--")):
        assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", helped.stdout), \
            f"{command}: {option} is not an option of {words[1]}"


def test_every_readme_command_is_covered():
    covered = set(LINT) | set(RUN_ELSEWHERE)
    for _, command in COMMANDS:
        program = command.split()[0]
        if command in covered or command.startswith(("python benchmarks/", "flake8 ", "ruff ",
                                                     "grep ", "torchdevlint --add-noqa")):
            continue
        if command in ("torchdevlint server", 'pip install ".[watch]"',
                       'pip install ".[server]"') or \
                command.startswith("pip install . && torchdevlint"):
            continue
        pytest.fail(f"the README shows `{command}` ({program}), which no test runs: "
                    "add it to tests/test_readme.py")


# torchdevlint is on no package index: `pip install torchdevlint` or `"torchdevlint[server]"`
# fails. A checkout (`.`, `".[extra]"`, `-e ".[test]"`) or the git URL works.
_WORKING_INSTALLS = (
    r'pip install (?:-e )?(?:\.|"\.\[[a-z]+\]")',
    # (other packages beside it come from PyPI: `... pytest`)
    r'pip install "torchdevlint(?:\[[a-z]+\])? @ git\+{url}(?:@[0-9a-f]{{7,40}})?"(?: [a-z][\w-]*)*',
    # torch is on PyPI, and its CPU builds on PyTorch's own index
    r"pip install torch==[\d.]+(?: --index-url https://download\.pytorch\.org/whl/cpu)?",
)


def _pip_installs(text: str) -> list:
    """Every `pip install ...` command, each of `a && b` apart; not IPython's `!pip install ...`
    nor uv's `uv pip install` (CI's, of the dependencies)."""
    return [part.strip() for line in re.findall(r"(?<!!)(?<!uv )pip install[^`\n]*", text)
            for part in line.split("&&") if part.strip().startswith("pip install")]


def test_every_documented_install_works_without_a_package_index(tmp_path):
    """Every `pip install` of the README, docs/ and the messages of `torchdevlint server` and
    `--watch` without their extra installs from a checkout or from git, never from an index."""
    from torchdevlint.docs import PROJECT_URL
    working = [re.compile(pattern.format(url=re.escape(PROJECT_URL))) for pattern in _WORKING_INSTALLS]
    shown = {"README.md": _pip_installs(README)}
    for page in sorted((ROOT / "docs").rglob("*.md")):
        shown[str(page.relative_to(ROOT))] = _pip_installs(page.read_text(encoding="utf-8"))
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "watchfiles.py").write_text("raise ImportError('not installed')\n")
    watch = subprocess.run([sys.executable, "-m", "torchdevlint", "--watch", "."], cwd=tmp_path,
                           capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(blocker)})
    # pygls 1, which the server does not take
    (blocker / "pygls-1.3.0.dist-info").mkdir()
    (blocker / "pygls-1.3.0.dist-info" / "METADATA").write_text("Name: pygls\nVersion: 1.3.0\n")
    (blocker / "pygls").mkdir()
    (blocker / "pygls" / "__init__.py").write_text("")
    server = subprocess.run([sys.executable, "-m", "torchdevlint", "server"], cwd=ROOT,
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(blocker)},
                            stdin=subprocess.DEVNULL)
    for name, result in (("--watch", watch), ("server", server)):
        assert result.returncode == 2, result.stderr
        # the message says how to get the extra from a checkout and from git
        shown[name] = [part.strip() for part in re.split(r", or |: (?=pip)| in a checkout",
                                                         result.stderr) if part.strip().startswith("pip install")]
        assert len(shown[name]) == 2, result.stderr
    assert sum(map(len, shown.values())) > 8
    for where, commands in shown.items():
        for command in commands:
            assert any(p.fullmatch(command) for p in working), \
                f"{where}: `{command}` needs torchdevlint on a package index"
