"""Start-up (issue 16, point 10): what does not analyse a file does not import LibCST.

``--version``, ``--list-rules``, ``--explain``, a run whose files are all cached and a run whose
files the prefilter skips read the rules' descriptions (``rules/registry.py`` and its generated
``_catalog.py``), never the rule classes. Each case runs in a fresh interpreter and looks at
``sys.modules`` afterwards; nothing here is timed (benchmarks/bench.py --startup-only is).
"""
from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT

from torchdevlint import syntax
from torchdevlint.rules import registry

# Runs the command line in-process, then reports what it imported.
_PROBE = textwrap.dedent("""
    import contextlib, io, json, sys
    from torchdevlint.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(sys.argv[1:])
    print(json.dumps({"code": code, "out": out.getvalue(), "libcst": "libcst" in sys.modules,
                      "rules": "torchdevlint.rules.base" in sys.modules,
                      "pool": "concurrent.futures" in sys.modules}))
""")


def probe(*args, cwd=None) -> dict:
    result = subprocess.run([sys.executable, "-c", _PROBE, *map(str, args)], cwd=cwd,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


BUGGY = "import torch\nx = torch.ones(2)\nx.to('cpu')\n"
CLEAN = "import torch\n\n\ndef f(x, device):\n    return x.to(device)\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "buggy.py").write_text(BUGGY)
    (tmp_path / "pkg" / "clean.py").write_text(CLEAN)
    (tmp_path / "pkg" / "plain.py").write_text("def add(a, b):\n    return a + b\n")
    return tmp_path


@pytest.mark.parametrize("args", [["--version"], ["--list-rules"], ["--explain", "TDL001"],
                                  ["--help"], ["rule", "--all"], ["--explain", "unmoved-batch"],
                                  ["--show-settings", "train.py"], ["--show-files"]],
                         ids=" ".join)
def test_commands_that_analyse_nothing_do_not_import_libcst(args):
    seen = probe(*args)
    assert seen["code"] == 0
    assert not seen["libcst"] and not seen["rules"], seen
    assert seen["out"].strip()  # (and they did print something)


def test_list_rules_and_explain_read_the_same_rules_as_the_classes():
    from torchdevlint.docs import rule_doc
    from torchdevlint.rules import ALL_RULES
    listing = probe("--list-rules")["out"].splitlines()
    assert [line.split()[:2] for line in listing[1:]] == [[r.code, r.name] for r in ALL_RULES]
    assert probe("--explain", "tdl004")["out"].rstrip("\n") == rule_doc("TDL004")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_warm_run_does_not_import_libcst(project, jobs):
    cold = probe("--jobs", jobs, "pkg", cwd=project)
    # files were analysed (with 2 jobs, in worker processes): the probe sees that
    assert cold["libcst"] if jobs == "1" else cold["pool"]
    warm = probe("--jobs", jobs, "pkg", cwd=project)
    assert not warm["libcst"] and not warm["rules"], warm
    assert warm["out"] == cold["out"] and warm["code"] == cold["code"] == 1
    assert "pkg/buggy.py:3:1: TDL001" in warm["out"]
    # every file came from the cache: no worker process was started for them
    assert not warm["pool"]


def test_a_warm_run_with_one_changed_file_keeps_the_order(project):
    for index in range(6):
        (project / "pkg" / f"m{index}.py").write_text(BUGGY)
    probe("--jobs", "2", "pkg", cwd=project)
    (project / "pkg" / "m2.py").write_text("import torch\n\n" + BUGGY)
    (project / "pkg" / "m4.py").write_text(CLEAN + "# changed\n")
    mixed = probe("--jobs", "2", "pkg", cwd=project)
    assert mixed["pool"]  # the two changed files were analysed, by workers
    uncached = probe("--jobs", "2", "--no-cache", "pkg", cwd=project)
    assert mixed["out"] == uncached["out"]
    assert "pkg/m2.py:5:1: TDL001" in mixed["out"] and "pkg/m4.py" not in mixed["out"]


def test_files_the_prefilter_skips_do_not_import_libcst(project):
    (project / "pkg" / "buggy.py").unlink()
    # passes TDL001's text prefilter (``.to(``), not its ast one (no move as a statement)
    (project / "pkg" / "moves.py").write_text("def f(x, device):\n    y = x.to(device)\n"
                                              "    return y\n")
    (project / "pkg" / "notes.pyi").write_text("def g(x: int) -> int: ...\n")
    seen = probe("--no-cache", "pkg", cwd=project)
    assert seen["code"] == 0 and not seen["libcst"] and not seen["rules"], seen
    # and with the opt-in rules too, whose prefilters are no different
    seen = probe("--no-cache", "--select", "TDL001,TDL007,TDL009,TDL011", "pkg", cwd=project)
    assert seen["code"] == 0 and not seen["libcst"], seen


def test_a_syntax_error_is_reported_without_libcst(project):
    (project / "pkg" / "broken.py").write_text("def f(:\n")
    seen = probe("--no-cache", "pkg/broken.py", "pkg/plain.py", cwd=project)
    assert seen["code"] == 1 and "E999" in seen["out"] and not seen["libcst"], seen


# -- the registry -----------------------------------------------------------------------------


def test_the_catalog_is_generated_from_the_rule_classes():
    classes = tuple(registry.classes_by_code().values())
    assert registry.CATALOG_PATH.read_text(encoding="utf-8") == registry.render_catalog(classes), \
        f"torchdevlint/rules/_catalog.py is out of date: run `{registry.REGENERATE}`"
    assert registry.ALL_RULES == tuple(registry.describe(rule) for rule in classes)
    assert registry.OPT_IN_CODES == {r.code for r in classes if not r.default_enabled}


def test_each_description_has_its_rules_prefilters():
    for info in registry.ALL_RULES:
        rule = registry.classes_by_code()[info.code]
        assert info.required_text == rule.required_text
        if rule.could_report_in is None:
            assert info.could_report_in is None
        else:
            assert info.could_report_in.resolve() is rule.could_report_in


def test_a_stale_catalog_is_refused(monkeypatch):
    first = registry.ALL_RULES[0]
    narrower = registry.RuleInfo(**{**vars(first), "required_text": "never"})
    monkeypatch.setattr(registry, "RULES_BY_CODE", {**registry.RULES_BY_CODE, first.code: narrower})
    monkeypatch.setattr(registry, "_classes", None)
    with pytest.raises(ImportError, match=f"out of date for {first.code}: run"):
        registry.classes_by_code()


def test_descriptions_lint_like_the_classes():
    from torchdevlint.engine import lint_source
    from torchdevlint.rules import ALL_RULES
    source = BUGGY + "torch.load('m.pt')\ny = torch.zeros(2).to('cuda')\n"
    by_info = lint_source(source, "m.py", registry.ALL_RULES).findings
    assert by_info == lint_source(source, "m.py", ALL_RULES).findings
    assert {f.code for f in by_info} >= {"TDL001", "TDL002", "TDL003"}


def test_newest_grammar_and_version_come_from_libcsts_metadata():
    import libcst
    assert syntax.libcst_version() == importlib.metadata.version("libcst")
    assert syntax.NEWEST == ((3, 14) if hasattr(libcst, "TemplatedString") else (3, 13))


# -- the benchmark's start-up section -----------------------------------------------------------


def test_benchmark_reads_import_times():
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.bench import imported
    finally:
        sys.path.remove(str(ROOT))
    text = ("import time: self [us] | cumulative | imported package\n"
            "import time:       120 |        120 |   libcst._nodes\n"
            "import time:      2000 |     512000 | libcst\n")
    assert imported(text) == {"libcst._nodes": 0.00012, "libcst": 0.512}
