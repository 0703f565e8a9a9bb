"""Each fact that rules used to decide their own way is answered by one provider of the
analysis, and the rules ask it (issue 26): one test per fact, on the case where the old answers
disagreed."""
from __future__ import annotations

import textwrap

import libcst as cst

from torchdevlint.analysis import GRAD_OFF, GRAD_ON, GRAD_RUNTIME, Analysis, grad_mode_set_by
from torchdevlint.config import select_rules
from torchdevlint.engine import lint_source


def analysis_of(source: str) -> Analysis:
    return Analysis(cst.parse_module(textwrap.dedent(source)))


def codes(source: str, select: str) -> list:
    """(code, line) of what rule ``select`` alone reports, with its prefilter."""
    result = lint_source(textwrap.dedent(source), "snippet.py", select_rules([select]))
    assert result.error is None
    return [(f.code, f.line) for f in result.findings]


def expression(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


# -- is gradient recording on ---------------------------------------------------------------

def test_grad_mode_set_by_reads_set_grad_enabled_of_a_variable_as_set_at_run_time():
    # analysis/model.py said None (sets nothing), TDL010's own reading said False (off)
    assert grad_mode_set_by(expression("torch.set_grad_enabled(train)")) == GRAD_RUNTIME
    assert grad_mode_set_by(expression("torch.set_grad_enabled(False)")) == GRAD_OFF
    assert grad_mode_set_by(expression("torch.set_grad_enabled(True)")) == GRAD_ON
    assert grad_mode_set_by(expression("torch.no_grad()")) == GRAD_OFF
    assert grad_mode_set_by(expression("torch.inference_mode(False)")) is None


def test_grad_recording_under_set_grad_enabled_of_a_variable_is_undecided_not_the_callers():
    analysis = analysis_of("""
        import torch
        with torch.set_grad_enabled(phase == "train"):
            probe()
        def f():
            probe()
    """)
    module_site, function_site = sorted(analysis.collected.calls_by_name["probe"],
                                        key=lambda site: site.order)
    assert analysis.grad_recording(module_site.ctx) is None
    assert not analysis.grad.callers_decide(module_site.ctx)
    assert analysis.grad_recording(function_site.ctx) is None
    assert analysis.grad.callers_decide(function_site.ctx)


def test_tdl010_is_silent_on_a_module_level_loop_under_set_grad_enabled_of_a_variable():
    loop = """
        import torch
        model = torch.nn.Linear(2, 2)
        outs = []
        {header}
            for x in loader:
                outs.append(model(x))
    """
    # the module level records by default; under set_grad_enabled(train) that is not proven
    assert codes(loop.format(header="if True:"), "TDL010") == [("TDL010", 7)]
    assert codes(loop.format(header="with torch.set_grad_enabled(train):"), "TDL010") == []


# -- small twins: one helper each, and no rule keeps its own copy -----------------------------

def test_number_literals_and_quoted_source_have_one_helper():
    from torchdevlint.analysis import is_number, source_of
    assert [is_number(expression(text)) for text in ("1", "-0.5", "+2", "x", "-x", "'1'")] == [
        True, True, True, False, False, False]
    assert source_of(expression("f(\n    a,\n    b)")) == "f( a, b)"
    assert source_of(expression("x" * 50)) == "x" * 37 + "..."
    from conftest import ROOT
    copies = [path.name for path in (ROOT / "torchdevlint").rglob("*.py")
              for name in ("def _is_number(", "def _short(", "def _root(")
              if name in path.read_text()]
    assert copies == []


# -- is this a loss ---------------------------------------------------------------------------

def test_is_loss_follows_self_attributes_for_every_rule():
    # TDL004 followed ``self.attr`` assignments, TDL010 only names: ``self.objective(...)``
    # was a model's output of unknown structure to TDL010 (an unsafe fix), a loss to TDL004
    source = """
        import torch.nn as nn
        objective = nn.L1Loss()
        class Trainer:
            def __init__(self):
                self.objective = nn.MSELoss()
                self.model = nn.Linear(2, 2)
            def run(self, x, y):
                self.objective(self.model(x), y)
                self.model(x)
                objective(x, y)
    """
    analysis = analysis_of(source)
    run = next(info for info in analysis.collected.functions if info.name == "run")
    calls = [line.body[0].value for line in run.node.body.body]
    assert [analysis.is_loss(call.func, run.scope) for call in calls] == [True, False, True]
    result = lint_source(textwrap.dedent("""
        import torch.nn as nn
        class Trainer:
            def __init__(self):
                self.objective = nn.MSELoss()
                self.model = nn.Linear(2, 2)
            def run(self, loader):
                total = 0
                for x, y in loader:
                    total += self.objective(self.model(x), y)
                return total.item()
        Trainer().run(train_loader)
    """), "snippet.py", select_rules(["TDL010"]))
    [finding] = result.findings
    assert finding.fix.safe  # a loss is a tensor: .detach() is safe on it


def test_is_loss_decides_by_provenance_before_names_and_says_which():
    # issue 28: a loss was what its name said (``criterion``, ``loss_fn``); renaming the file's
    # own names (``criterion`` -> ``alpha_1``) silenced TDL010. Provenance first: a torch.nn
    # loss module built in place, bound to a name, given to a parameter by every call of its
    # function, a class of the file deriving from one; names only where provenance is silent
    source = """
        import torch.nn as nn
        import torch.nn.functional as F
        class Focal(nn.modules.loss._Loss):
            pass
        def run(alpha_1, bravo_2, x, y):
            alpha_1(x, y)
            bravo_2(x, y)
            crit = Focal()
            crit(x, y)
            F.cross_entropy(x, y)
            criterion(x, y)
            other(x, y)
        run(nn.CrossEntropyLoss(), nn.Linear(2, 2), None, None)
    """
    analysis = analysis_of(source)
    run = next(info for info in analysis.collected.functions if info.name == "run")
    calls = [line.body[0].value for line in run.node.body.body
             if isinstance(line.body[0], cst.Expr)]
    assert [analysis.loss_evidence(call.func, run.scope) for call in calls] == [
        "`alpha_1` is given a loss by every call of `run`", None,
        "`crit` is a `Focal`, a loss class", "a torch.nn.functional loss",
        "`criterion` is named like a loss", None]


def test_a_parameter_takes_the_kind_every_call_passes():
    # issue 28: ``def train(model, loader)`` was a loop over a loader by the parameter's name;
    # a parameter is now what every call of its function in the file passes (loaders, modules,
    # devices, and tensors: ``self.weight = weight`` of ``WeightedLoss(torch.tensor([...]))``
    # is a tensor attribute; where a tensor is, the placement follows)
    source = """
        import torch
        from torch.utils.data import DataLoader
        def work(a, b, c, d, e):
            pass
        def one(a, b, c, d, e):
            pass
        work(DataLoader(ds), torch.nn.Linear(2, 2), torch.device("cuda"), torch.zeros(2), 3)
        one(DataLoader(ds), torch.nn.Linear(2, 2), torch.device("cuda"), torch.zeros(2), 3)
        one(DataLoader(ds), [], torch.device("cpu"), torch.zeros(2), 3)
    """
    analysis = analysis_of(source)
    kinds = {info.name: [repr(analysis.kinds.name_kind(name, info.scope))
                         for name in info.param_names] for info in analysis.collected.functions}
    assert kinds == {"work": ["LOADER", "MODULE", "DEVICE", "TENSOR", "UNKNOWN"],
                     "one": ["LOADER", "UNKNOWN", "DEVICE", "TENSOR", "UNKNOWN"]}


# -- is this a loop over a data loader ------------------------------------------------------

def test_loader_paths_is_one_answer_for_tdl004_tdl010_and_tdl011():
    analysis = analysis_of("""
        import torch
        for i, (x, y) in enumerate(tqdm(train_loader)):
            pass
        for a, b in zip(range(3), val_loader):
            pass
        for step in range(len(train_loader)):
            pass
    """)
    loops = [loop for loop, ctx, _ in analysis.collected.for_loops]
    scope = analysis.collected.module_scope
    assert [[(path, cst.Module([]).code_for_node(loader))
             for path, loader in analysis.loader_paths(loop.iter, scope)] for loop in loops] == [
        [((1,), "train_loader")], [((1,), "val_loader")], []]
    # TDL011 used to stay silent in any loop whose header names a loader (here, to count
    # steps); it now asks the same question as TDL004, which does not report in this loop
    source = """
        import torch
        def run(train_loader):
            w = torch.zeros(3).cuda()
            for step in range(len(train_loader)):
                b = torch.ones(3)
                print(w + b)
    """
    assert codes(source, "TDL011") == [("TDL011", 7)]
    assert codes(source, "TDL004") == []


# -- is this name a device ------------------------------------------------------------------

def test_is_device_name_is_one_convention():
    # analysis/devices.py took ``device`` / ``*_device``; TDL004 any name containing "device"
    # (``device_map``, ``num_devices``, ``per_device_train_batch_size``) and ``dev``, ``gpu``
    # (``args.gpu`` is an index: a fix writing ``map_location=gpu`` would fail)
    from torchdevlint.analysis import is_device_name
    named = ["device", "DEVICE", "target_device", "dev", "cuda_dev"]
    not_named = ["devices", "device_map", "device_type", "num_devices", "device_ids",
                 "per_device_train_batch_size", "develop", "gpu", "device_0"]
    assert [is_device_name(name) for name in named] == [True] * len(named)
    assert [is_device_name(name) for name in not_named] == [False] * len(not_named)


def test_tdl004_takes_a_helper_given_a_device_by_the_same_convention():
    loop = """
        import torch
        model = torch.nn.Linear(2, 2).cuda()
        loader = torch.utils.data.DataLoader(dataset)
        for x in loader:
            send(x, {device})
            model(x)
    """
    assert codes(loop.format(device="args.dev"), "TDL004") == []
    assert codes(loop.format(device="device_map"), "TDL004") == [("TDL004", 7)]


# -- is this test code ----------------------------------------------------------------------

def test_test_code_is_one_answer_inside_tdl003():
    # TDL003 had two answers in one file: a module defining a test_* function was a test
    # module for its round-trip evidence (a save in one test, read in another), but not for
    # its test-code exemption; now neither: a script names functions test_* too
    source = """
        import torch
        def test_save(path):
            torch.save(torch.nn.Linear(2, 2).cuda().state_dict(), "w.pt")
        def test_load():
            return torch.load("w.pt")
    """
    analysis = analysis_of(source)
    [site] = analysis.collected.calls_by_name["load"]
    assert not analysis.is_test_module() and not analysis.in_test_code(site.ctx)
    assert codes(source, "TDL003") == [("TDL003", 6)]
    with_pytest = "import pytest\n" + textwrap.dedent(source)
    assert codes(with_pytest, "TDL003") == []
    analysis = analysis_of(with_pytest)
    [site] = analysis.collected.calls_by_name["load"]
    assert analysis.is_test_module() and analysis.in_test_code(site.ctx)


def test_a_file_pytest_collects_is_test_code_without_importing_pytest():
    """mammoth's ``tests/test_scheduler.py``: plain ``assert``s in ``test_*`` functions of a
    ``test_*.py`` file under ``tests/``, which pytest's default discovery runs. The same
    functions in a file outside a tests folder, or beside a ``__main__`` entry point (an
    evaluation script; esm's ``tests/test_readme.py``), are a program's."""
    source = """
        import torch
        def check(path):
            return torch.load(path)
        def test_readme():
            assert check("emb.pt")
    """
    def judged(path, text=source):
        analysis = analysis_of(text)
        analysis.path = path
        [site] = analysis.collected.calls_by_name["load"]
        return analysis.is_test_module(), analysis.in_test_code(site.ctx), lint_source(
            textwrap.dedent(text), path, select_rules(["TDL003"])).findings != []
    assert judged("tests/test_readme.py") == (True, True, False)
    assert judged("pkg/tests/unit/readme_test.py") == (True, True, False)
    assert judged("tools/test_readme.py") == (False, False, True)
    assert judged("tests/readme.py") == (False, False, True)
    main = textwrap.dedent(source) + "if __name__ == '__main__':\n    test_readme()\n"
    assert judged("tests/test_readme.py", main) == (False, False, True)


# -- is this line expected to fail ------------------------------------------------------------

def test_expects_failure_is_one_reading_for_the_builder_and_tdl011():
    # the builder took every assertRaises*; TDL011 only raises/assertRaises/assertRaisesRegex
    from torchdevlint.analysis import with_item_expects_failure
    assert [with_item_expects_failure(expression(text)) for text in (
        "pytest.raises(RuntimeError)", "self.assertRaisesRegexp(RuntimeError, 'device')",
        "self.assertRaises(RuntimeError)", "torch.no_grad()", "raises")] == [
        True, True, True, False, False]
    source = """
        import torch
        def check(case):
            w = torch.zeros(3).cuda()
            b = torch.ones(3)
            with case.{manager}(RuntimeError, "device"):
                print(w + b)
    """
    assert codes(source.format(manager="assertRaisesRegexp"), "TDL011") == []
    assert codes(source.format(manager="subTest"), "TDL011") == [("TDL011", 7)]


# -- what device does a move go to ----------------------------------------------------------

def test_device_of_move_is_one_reading_for_placement_and_tdl004():
    # TDL004 read a collate function's moves by the first argument alone: ``.to(non_blocking=
    # True)`` moved, to it; placement.device_of_move reads the device argument
    analysis = analysis_of("""
        import torch
        a.to(non_blocking=True)
        a.to("cpu:0")
        a.to(torch.float16)
        a.to(device=dev, non_blocking=True)
        a.cuda()
    """)
    scope = analysis.collected.module_scope
    calls = [line.body[0].value for line in analysis.module.body[1:]]
    assert [analysis.placement.device_of_move(call, scope)[0] for call in calls] == [
        False, False, False, True, True]
    loop = """
        import torch
        def collate(items):
            return torch.stack(items).to({move})
        model = torch.nn.Linear(2, 2).cuda()
        loader = torch.utils.data.DataLoader(dataset, collate_fn=collate)
        for x in loader:
            model(x)
    """
    assert codes(loop.format(move="non_blocking=True"), "TDL004") == [("TDL004", 8)]
    assert codes(loop.format(move="'cuda', non_blocking=True"), "TDL004") == []


# -- TDL010 reads backward() from the tree, not from the text --------------------------------

def test_tdl010_finds_a_later_backward_through_any_expression_of_the_total():
    # a regular expression took ``total.mean().backward()`` but not ``(total / n).backward()``
    source = """
        import torch
        model = torch.nn.Linear(2, 2)
        total = 0
        for x, y in loader:
            total += criterion(model(x), y)
        {after}
    """
    assert codes(source.format(after="print(total)"), "TDL010") == [("TDL010", 6)]
    assert codes(source.format(after="(total / n).backward()"), "TDL010") == []
    assert codes(source.format(after="scaler.scale(total).backward()"), "TDL010") == []
    # a word in a comment or a string is no backward
    assert codes(source.format(after="log('total.backward()')"), "TDL010") == [("TDL010", 6)]


# -- is this a CPU tensor that is not 0-dim -------------------------------------------------

FACTORY_CALLS = [
    # (call, its answer: True a dimension, False may be 0-dim, None its arguments do not tell)
    ("torch.arange(5)", True), ("torch.tensor([1.0, 2.0])", True), ("torch.tensor(2.0)", False),
    ("torch.tensor([])", True), ("torch.as_tensor(step)", False),
    ("torch.tensor([x for x in xs])", True), ("torch.zeros(())", False),
    ("torch.zeros(3, 4)", True), ("torch.zeros((3, 4))", True), ("torch.zeros(n)", True),
    ("torch.zeros(len(names))", True), ("torch.zeros(x.shape[0])", True),
    ("torch.zeros(size=(2,))", True), ("torch.full((2,), 0.5)", True),
    ("torch.full((), 0.5)", False), ("torch.randint(10, (3,))", True),
    ("torch.randint(0, 10, ())", False), ("torch.randint(0, 10, shape)", None),
    ("torch.zeros_like(x)", None), ("torch.zeros(*shape)", None), ("torch.Tensor(3)", True),
    ("torch.Tensor()", None), ("torch.scalar_tensor(1)", False), ("torch.from_numpy(a)", False),
]


def test_one_answer_for_a_factory_in_libcst_and_in_the_ast_prefilter():
    import ast

    from torchdevlint.analysis import factory_dimensions
    from torchdevlint.rules import prefilter
    from torchdevlint import torch_api as api

    for text, answer in FACTORY_CALLS:
        name = text.split("(")[0].rpartition(".")[2]
        assert factory_dimensions(expression(text), name) is answer, text
        call = ast.parse(text, mode="eval").body
        assert prefilter._scalar_made(name, call) is (answer is False) or \
            name not in api.SCALAR_FACTORIES | api.SIZED_FACTORIES, text


def test_one_answer_for_data_of_unknown_shape_in_libcst_and_in_the_ast_prefilter():
    # TDL011 takes ``torch.from_numpy(obs)`` given to a model for a batch (issue 28); the
    # prefilter must keep the files where it does, or the finding is lost unparsed
    import ast

    from torchdevlint.analysis import data_of_unknown_shape
    from torchdevlint.rules import prefilter

    cases = [("torch.from_numpy(obs)", True), ("torch.tensor(batch, dtype=torch.float32)", True),
             ("torch.as_tensor(env.reset())", True), ("torch.tensor(x[0])", True),
             ("torch.tensor(3.0)", False), ("torch.tensor([1, 2])", False),
             ("torch.tensor()", False), ("torch.zeros(n)", False), ("torch.ones_like(x)", False)]
    for text, answer in cases:
        name = text.split("(")[0].rpartition(".")[2]
        assert data_of_unknown_shape(expression(text), name) is answer, text
        call = ast.parse(text, mode="eval").body
        assert prefilter._data_of_unknown_shape(name, call) is answer, text


def test_tdl005_and_tdl007_take_a_size_computed_by_a_call_for_a_dimension():
    # TDL007 counted ``torch.ones(x.size(1))`` as a tensor with a dimension, TDL005 did not
    # count ``torch.ones(len(names))``
    in_init = """
        import torch
        import torch.nn as nn
        class M(nn.Module):
            def __init__(self, names):
                super().__init__()
                self.mask = torch.ones(len(names))
            def forward(self, x):
                return x.unsqueeze(0) * self.mask
    """
    in_forward = """
        import torch
        import torch.nn as nn
        class M(nn.Module):
            def forward(self, x):
                mask = torch.ones(x.size(1))
                return x * mask
    """
    assert codes(in_init, "TDL005") == [("TDL005", 7)]
    assert codes(in_forward, "TDL007") == [("TDL007", 6)]
