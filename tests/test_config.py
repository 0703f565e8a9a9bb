"""[tool.torchdevlint] in pyproject.toml: every key, discovery, and command-line overrides."""
from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import run_cli
from test_cli import findings
from torchdevlint.config import KNOWN_KEYS, ConfigError, Overrides, Resolver

# TDL001 on line 3, TDL002 on line 4.
TWO_RULES = "import torch\nx = torch.ones(2)\nx.to('cpu')\ny = torch.ones(2, device='cuda')\n"
ONLY_TDL001 = "import torch\nx = torch.ones(2)\nx.to('cpu')\n"


def project(tmp_path: Path, config: str, files: dict) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\n\n[tool.torchdevlint]\n" + textwrap.dedent(config))
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def reported(result, root: Path) -> list:
    assert "Traceback" not in result.stderr, result.stderr
    return sorted(((root / f["path"]).resolve().relative_to(root.resolve()).as_posix(), f["code"])
                  for f in findings(result.stdout))


def codes(result) -> list:
    return sorted({f["code"] for f in findings(result.stdout)})


def test_select(tmp_path):
    root = project(tmp_path, 'select = ["TDL002"]\n', {"m.py": TWO_RULES})
    assert codes(run_cli(".", cwd=root)) == ["TDL002"]


def test_extend_select_adds_to_select(tmp_path):
    root = project(tmp_path, 'select = ["TDL003"]\nextend-select = ["TDL002"]\n', {"m.py": TWO_RULES})
    assert codes(run_cli(".", cwd=root)) == ["TDL002"]
    root2 = project(tmp_path / "b", 'select = ["TDL001"]\nextend-select = ["TDL002"]\n', {"m.py": TWO_RULES})
    assert codes(run_cli(".", cwd=root2)) == ["TDL001", "TDL002"]


def test_ignore_and_extend_ignore(tmp_path):
    a = project(tmp_path / "a", 'ignore = ["TDL001"]\n', {"m.py": TWO_RULES})
    b = project(tmp_path / "b", 'extend-ignore = ["TDL002"]\n', {"m.py": TWO_RULES})
    assert codes(run_cli(".", cwd=a)) == ["TDL002"]
    assert codes(run_cli(".", cwd=b)) == ["TDL001"]


def test_more_specific_selector_wins_as_in_ruff(tmp_path):
    root = project(tmp_path, 'select = ["TDL001"]\nignore = ["TDL"]\n', {"m.py": TWO_RULES})
    assert codes(run_cli(".", cwd=root)) == ["TDL001"]


def test_command_line_overrides_the_file(tmp_path):
    root = project(tmp_path, 'select = ["TDL002"]\n', {"m.py": TWO_RULES})
    assert codes(run_cli("--select", "TDL001", ".", cwd=root)) == ["TDL001"]
    assert codes(run_cli("--extend-select", "TDL001", ".", cwd=root)) == ["TDL001", "TDL002"]
    assert codes(run_cli("--ignore", "TDL002", ".", cwd=root)) == []
    assert codes(run_cli("--isolated", ".", cwd=root)) == ["TDL001", "TDL002"]


def test_per_file_ignores_globs_are_relative_to_the_config(tmp_path):
    root = project(tmp_path, '''
        [tool.torchdevlint.per-file-ignores]
        "tests/**/*.py" = ["TDL001"]
        "scratch.py" = ["TDL"]
        "!src/**" = ["TDL002"]
        ''', {"tests/unit/test_a.py": TWO_RULES, "src/pkg/scratch.py": TWO_RULES,
              "src/pkg/model.py": TWO_RULES, "other.py": TWO_RULES})
    # tests/**: TDL001 ignored and, being outside src/, TDL002 too; scratch.py (any folder):
    # everything; other.py: TDL002 (outside src/).
    expected = [("other.py", "TDL001"), ("src/pkg/model.py", "TDL001"), ("src/pkg/model.py", "TDL002")]
    assert reported(run_cli(".", cwd=root), root) == expected
    # Run from elsewhere: the globs still count from the pyproject.toml's folder.
    assert reported(run_cli(root), root) == expected


def test_per_file_ignores_from_the_command_line(tmp_path):
    root = project(tmp_path, "", {"a/m.py": TWO_RULES, "b/m.py": TWO_RULES})
    result = run_cli("--per-file-ignores", "a/*.py:TDL001,TDL002", ".", cwd=root)
    assert reported(result, root) == [("b/m.py", "TDL001"), ("b/m.py", "TDL002")]


def test_exclude_replaces_the_defaults(tmp_path):
    root = project(tmp_path, 'exclude = ["gen_*.py"]\n',
                   {"gen_a.py": ONLY_TDL001, "a.py": ONLY_TDL001, ".venv/b.py": ONLY_TDL001})
    assert reported(run_cli(".", cwd=root), root) == [(".venv/b.py", "TDL001"), ("a.py", "TDL001")]
    # A file named on the command line is linted anyway...
    assert reported(run_cli("gen_a.py", cwd=root), root) == [("gen_a.py", "TDL001")]
    # ...unless force-exclude says otherwise.
    assert run_cli("--force-exclude", "gen_a.py", cwd=root).stdout.startswith("All checks passed")


def test_extend_exclude_keeps_the_defaults(tmp_path):
    root = project(tmp_path, 'extend-exclude = ["legacy"]\n',
                   {"legacy/a.py": ONLY_TDL001, "a.py": ONLY_TDL001, ".venv/b.py": ONLY_TDL001})
    assert reported(run_cli(".", cwd=root), root) == [("a.py", "TDL001")]
    result = run_cli("--extend-exclude", "a.py", ".", cwd=root)
    assert reported(result, root) == []


def test_force_exclude_key_and_excluded_parent_folder(tmp_path):
    root = project(tmp_path, 'extend-exclude = ["legacy"]\nforce-exclude = true\n',
                   {"legacy/deep/a.py": ONLY_TDL001, "b.py": ONLY_TDL001})
    result = run_cli("legacy/deep/a.py", "b.py", cwd=root)
    assert reported(result, root) == [("b.py", "TDL001")]
    assert reported(run_cli("--no-force-exclude", "legacy/deep/a.py", cwd=root), root) == \
        [("legacy/deep/a.py", "TDL001")]


def git_project(tmp_path: Path, config: str) -> Path:
    root = project(tmp_path, config, {"kept.py": ONLY_TDL001, "skipped.py": ONLY_TDL001,
                                      "out/gen.py": ONLY_TDL001})
    (root / ".gitignore").write_text("skipped.py\nout/\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def test_respect_gitignore(tmp_path):
    root = git_project(tmp_path / "on", "")
    assert reported(run_cli(".", cwd=root), root) == [("kept.py", "TDL001")]
    # Named explicitly, an ignored file is still linted.
    assert reported(run_cli("skipped.py", cwd=root), root) == [("skipped.py", "TDL001")]
    off = git_project(tmp_path / "off", "respect-gitignore = false\n")
    everything = [("kept.py", "TDL001"), ("out/gen.py", "TDL001"), ("skipped.py", "TDL001")]
    assert reported(run_cli(".", cwd=off), off) == everything
    assert reported(run_cli("--no-respect-gitignore", ".", cwd=root), root) == everything


def test_fixable_unfixable_and_unsafe_fixes(tmp_path):
    root = project(tmp_path, 'fixable = ["TDL00"]\nunfixable = ["TDL003"]\nunsafe-fixes = true\n', {})
    settings = Resolver().for_directory(root)
    assert [c in settings.fixable for c in ("TDL001", "TDL002", "TDL003", "TDL004")] == \
        [True, True, False, True]
    assert settings.unsafe_fixes is True
    default = Resolver(isolated=True).default()
    assert default.unsafe_fixes is False and {"TDL001", "TDL003"} <= default.fixable
    cli = Resolver(Overrides(unfixable=["TDL001"], unsafe_fixes=False)).for_directory(root)
    assert "TDL001" not in cli.fixable and "TDL003" not in cli.fixable and not cli.unsafe_fixes


def test_unfixable_and_unsafe_fixes_drive_fix(tmp_path):
    source = "import torch\nx = torch.ones(2)\nx.to('cpu')\nstate = torch.load('m.pt')\n"
    root = project(tmp_path, 'unfixable = ["TDL001"]\nunsafe-fixes = true\n', {"m.py": source})
    records = json.loads(run_cli("--output-format", "json", "m.py", cwd=root).stdout)
    assert [(r["code"], r["fix_available"]) for r in records] == [("TDL001", False), ("TDL003", True)]
    run_cli("--fix", "m.py", cwd=root)
    fixed = (root / "m.py").read_text()
    assert "x.to('cpu')\n" in fixed and "x = x.to" not in fixed  # unfixable
    assert "map_location" in fixed  # an unsafe fix, applied because of unsafe-fixes
    (root / "m.py").write_text(source)
    # The command line's --fixable replaces the file's choice; --no-unsafe-fixes its flag.
    run_cli("--fix", "--no-unsafe-fixes", "--fixable", "TDL001", "m.py", cwd=root)
    assert (root / "m.py").read_text() == source.replace("x.to(", "x = x.to(")


@pytest.mark.parametrize("config, named", [
    ('selcet = ["TDL001"]\n', "'selcet'"),
    ('select = ["TDL001"]\nper_file_ignores = {}\nfoo = 1\n', "'per_file_ignores', 'foo'"),
    ('ignore = ["TDL099"]\n', "'TDL099'"),
    ('[tool.torchdevlint.per-file-ignores]\n"a.py" = ["XYZ1"]\n', "'XYZ1'"),
    ('unfixable = ["TDL5"]\n', "'TDL5'"),
    ('select = "TDL001"\n', "`select` must be a list of strings"),
    ('respect-gitignore = "yes"\n', "`respect-gitignore` must be true or false"),
])
def test_unknown_keys_codes_and_bad_values_exit_2(tmp_path, config, named):
    root = project(tmp_path, config, {"m.py": ONLY_TDL001})
    result = run_cli(".", cwd=root)
    assert result.returncode == 2, result.stdout
    assert named in result.stderr and "pyproject.toml" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_invalid_toml_is_one_clear_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.torchdevlint\nselect = [")
    (tmp_path / "m.py").write_text(ONLY_TDL001)
    result = run_cli(".", cwd=tmp_path)
    assert result.returncode == 2 and "not valid TOML" in result.stderr


def test_closest_config_with_the_table_wins_per_file(tmp_path):
    root = project(tmp_path, 'select = ["TDL002"]\n', {"top.py": TWO_RULES, "sub/inner.py": TWO_RULES,
                                                      "plain/p.py": TWO_RULES})
    (root / "sub" / "pyproject.toml").write_text('[tool.torchdevlint]\nselect = ["TDL001"]\n')
    (root / "plain" / "pyproject.toml").write_text("[project]\nname = 'no-table'\n")  # skipped
    assert reported(run_cli(".", cwd=root), root) == [
        ("plain/p.py", "TDL002"), ("sub/inner.py", "TDL001"), ("top.py", "TDL002")]
    # --config makes one file apply everywhere.
    assert reported(run_cli("--config", "sub/pyproject.toml", ".", cwd=root), root) == [
        ("plain/p.py", "TDL001"), ("sub/inner.py", "TDL001"), ("top.py", "TDL001")]
    assert run_cli("--config", "missing.toml", ".", cwd=root).returncode == 2


def test_every_key_is_documented():
    from conftest import ROOT
    docs = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for key in KNOWN_KEYS:
        assert f"`{key}`" in docs, key
    assert "docs/configuration.md" in readme and "[tool.torchdevlint]" in readme


def test_config_error_is_raised_for_bad_command_line_codes():
    with pytest.raises(ConfigError, match="TDL77"):
        Resolver(Overrides(extend_select=["TDL77"]), isolated=True)


def test_require_accelerator_turns_tdl002_off_and_the_command_line_can_select_it(tmp_path):
    source = 'import torch\nx = torch.zeros(1, device="cuda")\nm = torch.load("c.pt")\n'
    root = project(tmp_path, "require-accelerator = true\n", {"m.py": source})
    quiet = run_cli("m.py", cwd=root)
    assert "TDL002" not in quiet.stdout and "TDL003" in quiet.stdout, quiet.stdout
    loud = run_cli("--extend-select", "TDL002", "m.py", cwd=root)
    assert "TDL002" in loud.stdout, loud.stdout
    bad = project(tmp_path / "bad", 'require-accelerator = "yes"\n', {"m.py": source})
    assert run_cli("m.py", cwd=bad).returncode == 2


# TDL009 (opt-in) on line 5.
CREATE_THEN_MOVE = "import torch\n\n\ndef f(device):\n    return torch.zeros(3).to(device)\n"


def test_an_opt_in_rule_is_off_by_default_and_under_prefix_selectors():
    from torchdevlint.config import RuleSelection, resolve_codes, select_rules
    assert "TDL009" not in resolve_codes([])
    for selector in ("ALL", "TDL", "TDL0", "TDL00"):
        assert "TDL009" not in {rule.code for rule in select_rules([selector])}, selector
        assert "TDL009" not in resolve_codes([RuleSelection(extend_select=(selector,))]), selector
    assert {rule.code for rule in select_rules(["TDL009"])} == {"TDL009"}
    assert "TDL009" in resolve_codes([RuleSelection(extend_select=("TDL009",))])
    # fixable: every rule unless excluded, opt-in or not
    assert "TDL009" in Resolver(Overrides(), isolated=True).default().fixable


def test_an_opt_in_rule_runs_where_its_exact_code_is_selected(tmp_path):
    files = {"m.py": CREATE_THEN_MOVE}
    default = project(tmp_path / "default", "", files)
    assert codes(run_cli(".", cwd=default)) == []
    assert codes(run_cli("--select", "TDL", ".", cwd=default)) == []
    assert codes(run_cli("--extend-select", "TDL009", ".", cwd=default)) == ["TDL009"]
    assert codes(run_cli("--select", "TDL009", ".", cwd=default)) == ["TDL009"]
    assert codes(run_cli("--extend-select", "TDL009", "--ignore", "TDL009", ".", cwd=default)) == []
    extended = project(tmp_path / "extended", 'extend-select = ["TDL009"]\n', files)
    assert codes(run_cli(".", cwd=extended)) == ["TDL009"]
    selected = project(tmp_path / "selected", 'select = ["TDL", "TDL009"]\n', files)
    assert codes(run_cli(".", cwd=selected)) == ["TDL009"]
    prefix = project(tmp_path / "prefix", 'select = ["TDL0"]\n', files)
    assert codes(run_cli(".", cwd=prefix)) == []


def test_list_rules_shows_which_rules_are_opt_in():
    listing = run_cli("--list-rules").stdout.splitlines()
    row = next(line for line in listing if line.startswith("TDL009"))
    assert "create-then-move" in row and "opt-in" in row and "fix" in row
    assert "default" in next(line for line in listing if line.startswith("TDL001"))


@pytest.mark.parametrize("key", KNOWN_KEYS)
def test_every_configuration_key_has_the_flag_the_docs_promise(key):
    """docs/configuration.md: "Every key has a flag of the same name". Each key of
    [tool.torchdevlint] is an option of the command and a row of the page's flag table."""
    import re

    from conftest import ROOT
    from torchdevlint.cli import build_parser
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert "Every key has a flag of the same name" in page
    section = page.split("## Command-line flags", 1)[1].split("\n## ", 1)[0]
    table = "\n".join(line for line in section.splitlines() if line.startswith("| `--"))
    assert re.search(rf"`--{re.escape(key)}[ `]", table), f"--{key} is not in the table"
    options = {option for action in build_parser()._actions for option in action.option_strings}
    assert f"--{key}" in options, f"--{key} is documented but the command rejects it"
