"""The sealed split of the precision corpora (benchmarks/split.py, issue 28) and
``precision.py --set``: split.tsv must be exactly what the script computes from corpora.tsv, so
no repository can be moved between the tuning and the test set by hand."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT))

from benchmarks import split  # noqa: E402
from benchmarks.precision import read_corpora, read_split  # noqa: E402

DATA = ROOT / "benchmarks" / "precision"
SPLIT = ROOT / "benchmarks" / "split.py"
PRECISION = ROOT / "benchmarks" / "precision.py"


def test_split_tsv_is_what_split_py_computes():
    names = [corpus.name for corpus in read_corpora(DATA)]
    expected = split.compute_split(names)
    assert read_split(DATA) == expected
    # byte for byte: the order and the header comment too
    assert (DATA / "split.tsv").read_text(encoding="utf-8") == split.split_text(expected, names)
    done = subprocess.run([sys.executable, str(SPLIT), "--check"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def test_the_test_set_is_big_enough_and_untuned():
    names = [corpus.name for corpus in read_corpora(DATA)]
    chosen = read_split(DATA)
    test = {name for name, kind in chosen.items() if kind == "test"}
    assert len(names) >= 70
    assert len(test) >= split.MIN_TEST
    # the corpora tuned on before the split are all kept, and all in the tuning set
    assert split.TUNED_BEFORE_SPLIT <= set(names)
    assert not test & split.TUNED_BEFORE_SPLIT
    # no verdict was written for a test repository before the set was judged, once, at the
    # end (judged.tsv); once it was, the verdicts are kept like the tuning set's
    verdicts = {path.stem for path in (DATA / "verdicts").glob("*.tsv")}
    judged = read_judged()
    if "test" not in judged:
        assert not verdicts & test
    else:
        commit, _, _ = judged["test"]
        assert len(commit) == 40 and all(c in "0123456789abcdef" for c in commit)


def read_judged() -> dict:
    """``judged.tsv``: set -> (commit, date, reviewers) of each set judged."""
    rows = {}
    for line in (DATA / "judged.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        if line.strip() and not line.startswith("#"):
            name, commit, date, reviewers = line.split("\t")
            assert name not in rows, f"{name} judged twice"
            rows[name] = (commit, date, reviewers)
    return rows


def test_compute_split_is_seeded_and_order_independent():
    names = [f"owner+repo{i}" for i in range(40)]
    tuned = frozenset(names[:8])
    first = split.compute_split(names, seed=1, tuned=tuned)
    assert first == split.compute_split(list(reversed(names)), seed=1, tuned=tuned)
    assert all(first[name] == "tuning" for name in tuned)
    assert sum(kind == "test" for kind in first.values()) == 24  # ceil(0.75 * 32)
    others = [split.compute_split(names, seed=seed, tuned=tuned) for seed in (2, 3)]
    assert any(other != first for other in others)  # the seed decides, not the names' order


def write_data(tmp_path, sets):
    data = tmp_path / "data"
    (data / "verdicts").mkdir(parents=True)
    rows = "".join(f"{name}\thttps://github.com/{name.replace('+', '/')}\t{'0' * 40}\tdemo\n"
                   for name in sets)
    (data / "corpora.tsv").write_text("name\trepository\tcommit\tkind\n" + rows)
    (data / "split.tsv").write_text(
        "name\tset\n" + "".join(f"{name}\t{kind}\n" for name, kind in sets.items() if kind))
    return data


def test_check_fails_when_a_repository_is_moved_by_hand(tmp_path):
    names = [f"demo+r{i}" for i in range(4)]
    data = write_data(tmp_path, {name: "" for name in names})
    written = subprocess.run([sys.executable, str(SPLIT), "--data-dir", str(data), "--write"],
                             capture_output=True, text=True)
    # written, but a test set of three (ceil(0.75 * 4)) is flagged: fewer than 25
    assert written.returncode == 1 and "fewer than 25" in written.stderr
    text = (data / "split.tsv").read_text()
    ok = subprocess.run([sys.executable, str(SPLIT), "--data-dir", str(data), "--check"],
                        capture_output=True, text=True)
    assert ok.returncode == 1 and "fewer than 25" in ok.stderr
    moved_name = next(name for name in names if f"{name}\ttest" in text)
    (data / "split.tsv").write_text(text.replace(f"{moved_name}\ttest", f"{moved_name}\ttuning"))
    moved = subprocess.run([sys.executable, str(SPLIT), "--data-dir", str(data), "--check"],
                           capture_output=True, text=True)
    assert moved.returncode == 1
    assert f"differs from the computed split for: {moved_name}" in moved.stderr


def lint_sets(tmp_path, data, chosen):
    report = tmp_path / f"{chosen}.json"
    done = subprocess.run(
        [sys.executable, str(PRECISION), "--corpora", str(tmp_path / "corpora"), "--data-dir",
         str(data), "--set", chosen, "--report-only", "--json", str(report)],
        capture_output=True, text=True, cwd=tmp_path)
    return done, (json.loads(report.read_text()) if report.exists() else None)


def test_precision_reports_one_set_at_a_time(tmp_path):
    sets = {"demo+tuned": "tuning", "demo+sealed": "test", "demo+other": "tuning"}
    for name in sets:
        checkout = tmp_path / "corpora" / name
        checkout.mkdir(parents=True)
        (checkout / "a.py").write_text('import torch\nx = torch.zeros(3)\nx.to("cpu")\n')
    data = write_data(tmp_path, sets)

    done, result = lint_sets(tmp_path, data, "test")
    assert done.returncode == 0, done.stderr
    assert result["set"] == "test" and set(result["corpora"]) == {"demo+sealed"}
    assert "Precision review (test set)" in done.stdout
    assert result["rules"]["TDL001"]["findings"] == 1

    done, result = lint_sets(tmp_path, data, "tuning")
    assert set(result["corpora"]) == {"demo+tuned", "demo+other"}
    assert result["rules"]["TDL001"]["findings"] == 2

    done, result = lint_sets(tmp_path, data, "all")
    assert set(result["corpora"]) == set(sets)

    # without --set only the tuning set is linted: the sealed set needs to be named
    report = tmp_path / "default.json"
    subprocess.run([sys.executable, str(PRECISION), "--corpora", str(tmp_path / "corpora"),
                    "--data-dir", str(data), "--report-only", "--json", str(report)],
                   capture_output=True, text=True, cwd=tmp_path)
    assert json.loads(report.read_text())["set"] == "tuning"
    only = subprocess.run([sys.executable, str(PRECISION), "--corpora", str(tmp_path / "corpora"),
                           "--data-dir", str(data), "--only", "demo+sealed"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert only.returncode == 2 and "not in the tuning set of split.tsv: demo+sealed" in only.stderr


def test_precision_set_needs_every_corpus_in_split_tsv(tmp_path):
    data = write_data(tmp_path, {"demo+a": "tuning", "demo+b": ""})
    (tmp_path / "corpora").mkdir()
    done, result = lint_sets(tmp_path, data, "test")
    assert done.returncode == 2 and result is None
    assert "no set for demo+b" in done.stderr and "Traceback" not in done.stderr
    (data / "split.tsv").write_text("name\tset\ndemo+a\ttuning\ndemo+b\tsealed\n")
    done, _ = lint_sets(tmp_path, data, "tuning")
    assert done.returncode == 2 and "neither tuning nor test" in done.stderr


def test_a_judged_set_is_tuned_on_and_the_next_is_sealed():
    """The first split's test set was judged (judged.tsv ``test-1``) and is tuned on since:
    its repositories are all in TUNED_BEFORE_SPLIT, so the test set of split.tsv now is the
    second split's, none of which has a verdict until it is judged."""
    judged = read_judged()
    assert "test-1" in judged
    chosen = read_split(DATA)
    test = {name for name, kind in chosen.items() if kind == "test"}
    assert len(test) >= split.MIN_TEST and not test & split.TUNED_BEFORE_SPLIT
    verdicts = {path.stem for path in (DATA / "verdicts").glob("*.tsv")}
    allowed = {name for name, kind in chosen.items() if kind == "tuning"}
    if "test" in judged:
        allowed |= test
    assert verdicts <= allowed, sorted(verdicts - allowed)
