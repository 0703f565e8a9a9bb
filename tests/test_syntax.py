"""Syntax verdicts: against the target Python version, whatever the prefilter skips, and never
a crash or a minutes-long parse on pathological nesting (LibCST overflows its native stack)."""
from __future__ import annotations

import sys

import pytest

from conftest import run_cli
from torchdevlint import syntax
from torchdevlint.engine import lint_source

MODERN = "type Vec = list[float]\n\ndef first[T](xs: list[T]) -> T:\n    return xs[0]\n"
MOVE = "import torch\nx = torch.ones(2)\nx.to('cpu')\n"


@pytest.mark.parametrize("extra", ["", MOVE], ids=["prefilter-skips", "analysed"])
def test_modern_syntax_is_no_e999_by_default_whatever_the_prefilter(extra):
    result = lint_source(MODERN + extra, "m.py")
    assert result.error is None
    assert [f.code for f in result.findings] == (["TDL001"] if extra else [])


@pytest.mark.parametrize("extra", ["", MOVE], ids=["prefilter-skips", "analysed"])
def test_syntax_newer_than_the_target_is_e999_naming_the_version(extra):
    result = lint_source(MODERN + extra, "m.py", target=(3, 11))
    assert result.error is not None and result.error.code == "E999"
    assert result.error.message == \
        "SyntaxError: type alias statement requires Python 3.12; target is 3.11"
    assert (result.error.line, result.error.column) == (1, 1)
    assert lint_source(MODERN + extra, "m.py", target=(3, 12)).error is None


def test_a_libcst_without_t_strings_still_judges_newer_syntax(monkeypatch):
    """The declared floor, LibCST 1.5, has no ``TemplatedString`` (1.8 added it): looking for
    t-strings must not crash the syntax check of a file newer than this interpreter (it gave
    TDL999 ``module 'libcst' has no attribute 'TemplatedString'``). CI's lowest-versions run
    has the real 1.5; here the attribute is taken away from whichever LibCST is installed."""
    import libcst
    monkeypatch.delattr(libcst, "TemplatedString", raising=False)
    found = [what for _, what, _ in syntax._newer_constructs(libcst.parse_module(MODERN))]
    assert found == ["type alias statement", "type parameter list"]
    if sys.version_info < (3, 12):  # Python cannot parse MODERN: LibCST judges it
        result = lint_source(MODERN + MOVE, "m.py", target=(3, 12))
        assert result.error is None and [f.code for f in result.findings] == ["TDL001"]
        assert lint_source(MODERN, "m.py", target=(3, 11)).error.message == \
            "SyntaxError: type alias statement requires Python 3.12; target is 3.11"


@pytest.mark.parametrize("source, needs", [
    ("match x:\n    case 1:\n        pass\n", (3, 10)),
    ("try:\n    pass\nexcept* ValueError:\n    pass\n", (3, 11)),
    ("class C[T]:\n    pass\n", (3, 12)),
    ("try:\n    pass\nexcept ValueError, TypeError:\n    pass\n", (3, 14)),
])
def test_each_version_gated_construct_follows_the_target(source, needs):
    older = (needs[0], needs[1] - 1)
    error = lint_source(source, "m.py", target=older).error
    assert error is not None and error.code == "E999", source
    error = lint_source(source, "m.py", target=needs).error
    if needs > syntax.newest() and needs > syntax.RUNNING:  # (LibCST < 1.8, Python < 3.14)
        assert error is not None and "needs LibCST 1.8 or newer" in error.message, error
    else:
        assert error is None, source


def test_syntax_newer_than_python_and_libcst_says_what_is_needed(monkeypatch):
    """LibCST before 1.8 (the declared floor is 1.5) does not parse Python 3.14's grammar: a
    file that targets 3.14 on an older Python gets one E999 saying why, not a bare one."""
    import libcst

    def old_libcst(source, *args, **kwargs):  # as LibCST 1.5 answers Python 3.14 grammar
        raise libcst.ParserSyntaxError("unexpected token", lines=[source], raw_line=1, raw_column=0)
    monkeypatch.setattr(libcst, "parse_module", old_libcst)
    monkeypatch.setattr(syntax, "RUNNING", (3, 10))
    monkeypatch.setattr(syntax, "newest", lambda: (3, 13))
    error = syntax.syntax_error("try:\n    pass\nexcept A, B:\n    pass\n", (3, 14))
    assert error is not None and error[0].endswith(
        f"(Python 3.14 syntax on Python 3.10 needs LibCST 1.8 or newer; "
        f"{syntax.libcst_version()} is installed)"), error
    assert syntax.syntax_error("x = (\n", (3, 13))[0] == syntax.syntax_error("x = (\n")[0]


def test_python_syntax_errors_keep_pythons_message():
    error = lint_source("def f(:\n    pass\n", "m.py").error
    assert error.code == "E999" and error.message.startswith("SyntaxError: ")


def test_target_version_from_cli_config_and_requires_python(tmp_path):
    (tmp_path / "m.py").write_text(MODERN)
    assert run_cli("--no-cache", "m.py", cwd=tmp_path).returncode == 0
    flagged = run_cli("--no-cache", "--target-version", "py311", "m.py", cwd=tmp_path)
    assert flagged.returncode == 1
    assert "m.py:1:1: E999 SyntaxError: type alias statement requires Python 3.12; target is 3.11" \
        in flagged.stdout
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nrequires-python = ">=3.10"\n')
    inferred = run_cli("--no-cache", "m.py", cwd=tmp_path)
    assert "target is 3.10" in inferred.stdout and inferred.returncode == 1
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\nrequires-python = ">=3.10"\n\n'
        '[tool.torchdevlint]\ntarget-version = "py312"\n')
    assert run_cli("--no-cache", "m.py", cwd=tmp_path).returncode == 0
    (tmp_path / "pyproject.toml").write_text('[tool.torchdevlint]\ntarget-version = "py27"\n')
    bad = run_cli("--no-cache", "m.py", cwd=tmp_path)
    assert bad.returncode == 2 and "py27" in bad.stderr
    assert run_cli("--target-version", "py27", "m.py", cwd=tmp_path).returncode == 2


@pytest.mark.parametrize("spec, version", [
    (">=3.9", (3, 9)), (">=3.10,<4", (3, 10)), ("~=3.11", (3, 11)), ("==3.12.*", (3, 12)),
    (">=3.8", (3, 9)), ("<4", None), (">=2.7", None),
])
def test_requires_python_lower_bound(spec, version):
    assert syntax.from_requires_python(spec) == version


def test_fix_keeps_working_on_syntax_newer_than_this_interpreter(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(MODERN + MOVE)
    result = run_cli("--no-cache", "--fix", path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "x = x.to('cpu')" in path.read_text()


def test_a_missing_path_is_e902_and_the_run_goes_on(tmp_path):
    (tmp_path / "train.py").write_text(MOVE)
    for extra in ([], ["-j", "2"], ["--output-format", "json"], ["--fix"]):  # --fix last
        result = run_cli("--no-cache", *extra, "nope.py", "train.py", cwd=tmp_path)
        assert result.returncode == 1, (extra, result.stdout, result.stderr)
        assert "nope.py" in result.stdout and "E902" in result.stdout, extra
        assert "No such file or directory" in result.stdout, extra
        if not extra or extra == ["-j", "2"]:
            assert "train.py:3:1: TDL001" in result.stdout
    assert run_cli("--no-cache", "nope.py", cwd=tmp_path).stdout.splitlines()[0] == \
        "nope.py:1:1: E902 cannot read file: No such file or directory"


# --- pathological inputs ------------------------------------------------------------------

DEPTH = 5000
PATHOLOGICAL = {
    "parentheses": "x = " + "(" * DEPTH + "1" + ")" * DEPTH,
    "brackets": "x = " + "[" * DEPTH + "1" + "]" * DEPTH,
    "braces": "x = " + "{" * DEPTH + "1" + "}" * DEPTH,
    "unary-minus": "x = " + "-" * DEPTH + "1",
    "not": "x = " + "not " * DEPTH + "y",
    "plus-chain": "x = " + "+".join(["1"] * 20000),
    "multi-line-chain": "x = (" + " +\n".join(["1"] * 5000) + ")",
    "attribute-chain": "x = a" + ".b" * DEPTH,
    "call-chain": "x = f" + "()" * DEPTH,
    "subscript-chain": "x = f" + "[0]" * DEPTH,
    "ternary-chain": "x = " + "a if b else " * DEPTH + "c",
    "lambda-chain": "x = " + "lambda: " * DEPTH + "c",
    "and-chain": "x = " + " and ".join(["a"] * DEPTH),
    "string-concatenation": "x = " + " ".join(["'a'"] * DEPTH),
    "parentheses-1000": "x = " + "(" * 1000 + "1" + ")" * 1000,
    "huge-list": "x = [" + ", ".join(["1"] * 30000) + "]",
    "huge-dict": "x = {" + ", ".join(f"{i}: {i}" for i in range(15000)) + "}",
}
# a move in each file, so that the prefilter sends it to LibCST
PREFIX = "import torch\ny = torch.ones(2)\ny.to('cpu')\n"


@pytest.mark.parametrize("kind", sorted(PATHOLOGICAL))
def test_pathological_input_gets_at_most_one_diagnostic(kind):
    source = PREFIX + PATHOLOGICAL[kind] + "\n"
    result = lint_source(source, "p.py")  # its time: benchmarks/pathological.py
    if result.error is not None:  # Python's own parser rejects it (which depends on its version)
        assert result.error.code == "E999" and result.findings == [], kind
    else:  # valid: the deep expression is left out, the rest of the file analysed
        assert [(f.line, f.code) for f in result.findings] == [(3, "TDL001")], kind
    if kind.startswith("huge"):
        assert result.error is None


# Valid Python on every supported version, deeper than LibCST can take (issue 30, point 5)
DEEP_STATEMENTS = {
    "and-chain": "flag = " + " and ".join(f"a{i}" for i in range(DEPTH)),
    "comparison-chain": "ok = " + " < ".join(f"a{i}" for i in range(DEPTH)),
    "string-concatenation": "s = " + " + ".join(f'"a{i}"' for i in range(1500)),
    "or-of-comparisons": "if " + " or ".join(f"y == {i}" for i in range(3000)) + ":\n    pass",
    "call-argument": "print(" + " or ".join(f"y != {i}" for i in range(3000)) + ")",
    "in-a-function": "def f(y):\n    return " + " and ".join(["y"] * DEPTH),
    "over-lines": "total = (" + " and\n".join(["y"] * DEPTH) + ")",
}


@pytest.mark.parametrize("kind", sorted(DEEP_STATEMENTS))
def test_a_deep_statement_is_left_out_and_the_rest_of_the_file_analysed(kind):
    """No TDL999 for the file: the findings before and after the deep statement are reported,
    and the deep expression itself, a value torchdevlint cannot tell, gives none."""
    after = "z = torch.zeros(2)\nz.cuda()\n"
    source = PREFIX + DEEP_STATEMENTS[kind] + "\n" + after
    line = source.count("\n")  # z.cuda()'s line: the last
    result = lint_source(source, "p.py")  # its time: benchmarks/pathological.py
    assert result.error is None, result.error
    assert [(f.line, f.code) for f in result.findings] == [
        (3, "TDL001"), (line, "TDL001"), (line, "TDL002")], kind


def test_a_file_with_a_deep_statement_is_fixed_around_it(tmp_path):
    from torchdevlint.applier import fix_source
    deep = DEEP_STATEMENTS["and-chain"] + "  # generated\n"
    fixed = fix_source(PREFIX + deep + "z = torch.zeros(2)\nz.to('cpu')\n", "p.py")
    assert fixed.error is None, fixed.error
    assert fixed.fixed == PREFIX.replace("y.to(", "y = y.to(") + deep + \
        "z = torch.zeros(2)\nz = z.to('cpu')\n"


def test_a_deep_assignment_target_is_still_one_diagnostic_for_the_file():
    """What cannot be replaced by a value: the file gets its one TDL999, as before."""
    result = lint_source(PREFIX + "a" + ".b" * 1500 + " = 1\n", "p.py")
    assert result.error is not None and result.error.code == "TDL999"
    assert "nested or chained too deeply" in result.error.message


def test_python_rejects_1000_nested_parentheses_and_so_does_torchdevlint():
    error = lint_source(PREFIX + PATHOLOGICAL["parentheses-1000"] + "\n", "p.py").error
    assert error.code == "E999" and "too many nested parentheses" in error.message


def test_nesting_estimate_leaves_real_code_alone():
    import torchdevlint.engine as engine
    source = open(engine.__file__, encoding="utf-8").read()
    assert syntax.too_deep(source) is None
    assert syntax.nesting_depth("x = 1 + 2 + 3\n")[0] <= 4


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_clean_files_keep_their_findings_beside_pathological_ones(tmp_path, jobs):
    for index in range(3):
        (tmp_path / f"clean{index}.py").write_text(MOVE)
    for kind in ("parentheses", "unary-minus", "call-chain", "plus-chain"):
        (tmp_path / f"bad_{kind}.py").write_text(PREFIX + PATHOLOGICAL[kind] + "\n")
    result = run_cli("--no-cache", "-j", jobs, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    for index in range(3):
        assert f"clean{index}.py:3:1: TDL001" in result.stdout
    for kind in ("parentheses", "unary-minus", "call-chain", "plus-chain"):
        [line] = [line for line in result.stdout.splitlines() if f"bad_{kind}.py" in line]
        assert " E999 " in line or " TDL001 " in line
    assert "internal error" not in result.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="uses os.kill on itself")
def test_a_worker_that_dies_costs_only_its_own_file(tmp_path, monkeypatch):
    """A crash no pre-scan foresaw (here: the worker kills itself on one file)."""
    from torchdevlint import parallel

    results = list(parallel.run_per_file(_die_on_bad, [f"f{i}" for i in range(12)] + ["bad"]
                                         + [f"g{i}" for i in range(12)], jobs=2,
                                         on_crash=lambda item, reason: f"crashed:{item}"))
    assert results == [f"ok:f{i}" for i in range(12)] + ["crashed:bad"] + \
        [f"ok:g{i}" for i in range(12)]


def _die_on_bad(item: str) -> str:
    if item == "bad":
        import os
        import signal
        os.kill(os.getpid(), signal.SIGKILL)  # (SIGSEGV would also dump a traceback)
    return f"ok:{item}"


KEYWORD_BEFORE_PARENTHESES = (
    "import torch\n"
    "\n"
    "\n"
    "def main(a, c):\n"
    "    assert(a if c else True)\n"
    "    while(a if c else False): x = torch.zeros(2).cuda(); break\n"
    "    return [y.cuda() for y in(a if c else [])]\n"
)


def test_a_keyword_right_before_a_parenthesized_conditional_is_analysed_where_written():
    """LibCST rejects ``assert(a if c else b)`` (valid Python; LibCST issue 1095) with a
    validation error: the file is analysed with a space after such keywords and its findings
    are placed on the text as written, without fixes (no internal error, no E999)."""
    result = lint_source(KEYWORD_BEFORE_PARENTHESES, "m.py")
    assert result.error is None
    spaced = lint_source(KEYWORD_BEFORE_PARENTHESES.replace("while(", "while (").replace(
        "assert(", "assert (").replace("in(", "in ("), "m.py")
    where = [(f.line, f.column, f.end_column, f.code) for f in result.findings]
    assert where == [(6, 50, 54, "TDL002"), (7, 15, 19, "TDL002")]
    # the same findings as where the spaces are written, one column later after each space
    assert [(f.line, f.code) for f in spaced.findings] == [(6, "TDL002"), (7, "TDL002")]
    assert [f.column for f in spaced.findings] == [51, 15]
    lines = KEYWORD_BEFORE_PARENTHESES.splitlines()
    assert [lines[line - 1][column - 1:end - 1] for line, column, end, _ in where] == ["cuda"] * 2
    assert all(f.fix is None for f in result.findings)


def test_cli_fix_leaves_a_file_it_analysed_spaced_as_it_was(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(KEYWORD_BEFORE_PARENTHESES)
    done = run_cli("--isolated", "--no-cache", "--fix", "--unsafe-fixes", path)
    assert done.returncode == 1 and "TDL999" not in done.stdout and "m.py:6:50: TDL002" in done.stdout
    assert path.read_text() == KEYWORD_BEFORE_PARENTHESES
