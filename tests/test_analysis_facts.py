"""The analysis facts behind the facade, asked directly: grad mode and module classes (the
facts the coming rules start from), and the declaration contract (a file builds only the
facts its rules declare, and asking for another one fails)."""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchdevlint.analysis import Analysis, UndeclaredFact, exclusive_branches
from torchdevlint.analysis.placement import HeldInList
from torchdevlint.engine import lint_source
from torchdevlint.rules import ALL_RULES


def analysis_of(source: str, facts=None) -> Analysis:
    return Analysis(cst.parse_module(textwrap.dedent(source)), facts=facts)


def recording_at_calls(source: str, callee: str) -> list:
    """grad_recording where each call of ``callee`` is, in source order."""
    analysis = analysis_of(source)
    sites = sorted(analysis.collected.calls_by_name[callee], key=lambda site: site.order)
    return [analysis.grad_recording(site.ctx) for site in sites]


# -- grad mode ------------------------------------------------------------------------------

def test_grad_mode_of_with_blocks_decorators_and_functions():
    source = """
        import torch

        probe()                                   # module level: on by default
        with torch.no_grad():
            probe()                               # off
            with torch.enable_grad():
                probe()                           # on again
            def later():
                probe()                           # runs when called: the caller's mode
        with torch.set_grad_enabled(False):
            probe()                               # off
        with torch.inference_mode(False):
            probe()                               # inference_mode(False) sets nothing here

        @torch.inference_mode()
        def evaluate():
            probe()                               # off
            values = [probe() for _ in range(2)]  # a comprehension runs right there: off

        def train():
            probe()                               # the caller's mode: unknown here
    """
    assert recording_at_calls(source, "probe") == [
        True, False, True, None, False, True, False, False, None]


# -- module classes -------------------------------------------------------------------------

MODULE = """
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.w = nn.Parameter(torch.zeros(3))
            self.register_buffer("mask", torch.ones(3))
            self.b = nn.Buffer(torch.ones(1))
            self.add_module("extra", nn.ReLU())
            self.scale = torch.linspace(0, 1, 3)
            self.heads = [nn.Linear(4, 4) for _ in range(n)]
            self.table = {"a": nn.Linear(2, 2)}
            self.names = ["a", "b"]
            self.count = 0

        def forward(self, x):
            return self._inner(x) * self.scale

        def _inner(self, x):
            return self._deeper(x)

        def _deeper(self, x):
            return x

        def unused(self):
            return self.count


    class Moves(nn.Module):
        def __init__(self):
            super().__init__()
            self.cache = torch.zeros(2)

        def _apply(self, fn, recurse=True):
            self.cache = fn(self.cache)
            return super()._apply(fn, recurse)


    class Sampler:
        def __init__(self):
            self.weights = torch.ones(10)
"""


def test_module_state_registered_and_unregistered():
    analysis = analysis_of(MODULE)
    block, moves, sampler = analysis.collected.classes
    state = analysis.module_state(block)
    assert state.is_module is True
    assert (state.parameters, state.buffers, state.submodules) == ({"w"}, {"mask", "b"}, {"lin", "extra"})
    assert set(state.tensor_attributes) == {"scale"}
    assert set(state.module_containers) == {"heads", "table"}  # not the list of strings
    assert state.forward_reaches == {"forward", "_inner", "_deeper"}
    assert not state.overrides_moving
    assert analysis.module_state(moves).overrides_moving
    assert set(analysis.module_state(moves).tensor_attributes) == {"cache"}
    assert analysis.module_state(sampler).is_module is False
    assert analysis.module_state(block) is state  # worked out once


# -- the declaration contract ---------------------------------------------------------------

def test_asking_for_an_undeclared_fact_fails():
    analysis = analysis_of("import torch\n", facts=frozenset({"kinds"}))
    analysis.kinds  # declared
    for fact in ("guards", "placement", "devices", "targets", "grad", "modules"):
        with pytest.raises(UndeclaredFact):
            getattr(analysis, fact)


def test_unknown_fact_names_are_refused():
    with pytest.raises(ValueError):
        analysis_of("x = 1\n", facts=frozenset({"kinds", "colour"}))


def test_a_file_builds_only_what_its_rules_ask():
    from torchdevlint.rules import RULES_BY_CODE
    source = "import torch\nx = torch.ones(2)\nx.to('cpu')\n"
    result = lint_source(source, "s.py", [RULES_BY_CODE["TDL001"]])
    assert [f.code for f in result.findings] == ["TDL001"]
    analysis = result.analysis
    assert analysis.facts == RULES_BY_CODE["TDL001"].facts
    # TDL001 asks kinds and placement; nothing built the others
    assert analysis._guards is None and analysis._devices is None and analysis._targets is None
    assert analysis._modules is None and analysis._grad is None


def test_tdl005_ast_prefilter_knows_every_origin_the_rule_accepts():
    """The ast prefilter looks for a factory call in the method; every torch call the rule's
    creation test starts from must be on its list, or the prefilter would lose findings."""
    from torchdevlint.rules import tdl005_unregistered_tensor_attribute as rule
    from torchdevlint.rules.classfacts import FACTORY_CALLS

    # the rule takes a factory only from the prefilter's own list (``tail in FACTORY_CALLS``)
    assert rule.FACTORY_CALLS is FACTORY_CALLS
    assert rule._OF_FIRST_ARGUMENT | {"from_numpy"} <= FACTORY_CALLS



def _kept(code: str, source: str) -> bool:
    import ast as python_ast

    from torchdevlint.engine import candidate_rules
    from torchdevlint.rules import RULES_BY_CODE
    rule = RULES_BY_CODE[code]
    source = textwrap.dedent(source)
    return candidate_rules(source, [rule], python_ast.parse(source)) == [rule]


@pytest.mark.parametrize("source, kept", [
    # a CPU tensor and a move in the same function
    ("""
     import torch
     def f(device):
         return torch.randn(3, device=device) + torch.randn(3)
     """, True),
    # a model moved at module level, called in a function with a CPU tensor
    ("""
     import torch
     model = torch.nn.Linear(3, 3).to("cuda")
     def predict():
         return model(torch.randn(2, 3))
     """, True),
    # a model given by every caller, moved there
    ("""
     import torch
     def predict(net):
         return net(torch.randn(2, 3))
     def main(device):
         model = torch.nn.Linear(3, 3)
         model.to(device)
         predict(model)
     """, True),
    # library code: created on another tensor's device in one function, a CPU factory in
    # another with nothing moved there
    ("""
     import torch
     def f(x):
         return torch.zeros(3, device=x.device) + x
     def g(n):
         return torch.arange(n) * 2
     """, False),
    # the only CPU tensor is 0-dim: it combines with any device
    ("""
     import torch
     def f(device):
         return torch.randn(3, device=device) * torch.tensor(2.0)
     """, False),
    # one call cannot be both sides: a move, or a copy to the CPU (the file says "cpu")
    ("""
     import torch
     def f(x, device):  # not to the cpu
         return x.to(device) + x
     """, False),
    # two calls whose device is the same name are on the same side, whichever that is
    ("""
     import torch
     def f(x, y, device):  # "cpu" somewhere
         return x.to(device) + y.to(device)
     """, False),
    # ... unless a comprehension binds that name for itself
    ("""
     import torch
     def f(x, device, devices):  # "cpu" somewhere
         return [x.to(device) + x.to(device) for device in devices]
     """, True),
    # two names may differ
    ("""
     import torch
     def f(x, device, other):  # "cpu" somewhere
         return x.to(device) + x.to(other)
     """, True),
    # a name deciding one call and a CPU factory in another
    ("""
     import torch
     def f(x, device):
         return x.to(device) + torch.ones(3)
     """, True),
    # a dtype conversion and another value's device are no evidence of their own
    ("""
     import torch
     def f(x):
         return x.to(torch.float16) + torch.zeros(3, device=x.device) + x.to(x.device)
     def g(n):
         return torch.arange(n)
     """, False),
    # Python's range, and a function of the file that happens to be called zeros
    ("""
     import torch
     def zeros(n):
         return [0] * n
     def f(x, device):
         return x.to(device), zeros(3), range(3)
     """, False),
    # ... but zeros imported from torch, under any name, is torch's
    ("""
     from torch import zeros as z
     def f(x, device):
         return x.to(device) + z(3)
     """, True),
    # device= of a call that is no factory says nothing (its tensors do)
    ("""
     import torch
     def f(device):
         return make_input(device=device) + torch.ones(3)
     """, False),
    # a moved tensor's methods are no model's output
    ("""
     import torch
     def f(x, device):
         y = x.to(device)
         return y.size(), y.contiguous()
     def g():
         y = torch.ones(3)
         return y.flatten()
     """, False),
    # a module's method is (``model.encode(x)``)
    ("""
     import torch
     model = Net().to("cuda")
     def g():
         return model.encode(torch.ones(3))
     """, True),
    # a method given a CPU tensor by its call, and moving another parameter itself
    ("""
     import torch
     class Tracker:
         def match(self, features, labels, device):
             return features.to(device) * labels
     tracker = Tracker()
     tracker.match(torch.randn(3, 1), torch.tensor([0, 1, 0]), "cuda")
     """, True),
    # the same method given nothing on the CPU
    ("""
     import torch
     class Tracker:
         def match(self, features, labels, device):
             return features.to(device) * labels
     tracker = Tracker()
     tracker.match(features, labels, "cuda")
     """, False),
    # a method that calls nothing itself, given a CPU tensor (its scope has no calls to ask
    # for a moved model's: it was a KeyError)
    ("""
     import torch
     class Keeper:
         def keep(self, value):
             return value
     def place(net, device):
         return net.to(device)
     Keeper().keep(torch.zeros(3))
     """, False),
])
def test_tdl011_ast_prefilter_keeps_scopes_with_both_sides(source, kept):
    assert _kept("TDL011", source) is kept


@pytest.mark.parametrize("source, kept", [
    ("""
     import torch
     class M(torch.nn.Module):
         def forward(self, x):
             return x * torch.ones(x.size(1))
     """, True),
    # imported from torch under another name
    ("""
     import torch
     from torch import ones as make_ones
     class M(torch.nn.Module):
         def forward(self, x):
             return x * make_ones(x.size(1))
     """, True),
    # every factory is given a device (or keyword arguments that may hold one)
    ("""
     import torch
     class M(torch.nn.Module):
         def forward(self, x, **kw):
             return x * torch.ones(x.size(1), device=x.device) + torch.zeros(3, **kw)
     """, False),
    # no forward: not a module TDL007 follows
    ("""
     import torch
     class Helper:
         def make(self, x):
             return x * torch.ones(x.size(1))
     """, False),
])
def test_tdl007_ast_prefilter(source, kept):
    assert _kept("TDL007", source) is kept


@pytest.mark.parametrize("source, kept", [
    ("import torch\nx = torch.zeros(3).to('cuda')\n", True),
    ("from torch import rand as r\nx = r(3).cuda()\n", True),
    # a move of another call's result, a pinned buffer, host data
    ("import torch\nx = f(3).to('cuda')\ny = torch.zeros(2).pin_memory().to('cuda')\n"
     "z = torch.tensor(data).to('cuda')\n", False),
])
def test_tdl009_ast_prefilter(source, kept):
    assert _kept("TDL009", source) is kept


@pytest.mark.parametrize("source, kept", [
    ("""
     def f(model, loader):
         total = 0
         for x in loader:
             total = total + model(x)
     """, True),
    ("""
     def f(model, loader):
         outs = []
         for x in loader:
             outs.append(model(x))
     """, True),
    # loops over a loader that accumulate nothing
    ("""
     def f(model, loader):
         for x in loader:
             model(x).backward()
         return [x for x in loader] + []
     """, False),
])
def test_tdl010_ast_prefilter(source, kept):
    assert _kept("TDL010", source) is kept

# -- placement: where a tensor lives where it is read ---------------------------------------

PLACED = '''
import numpy as np
import torch
import torch.nn as nn


def f(device, arr, helper):
    net = nn.Linear(3, 3).to(device)
    a = torch.zeros(3)
    observe(a)
    b = a * 2 + 1
    c = torch.from_numpy(arr)
    d = torch.randn(3).to(device)
    e = torch.cat([a, b])
    g = net(a)
    h = d.cpu()
    k = helper(d)
    m = torch.ones(2, device="cpu")
    n = torch.ones(2, device=device).to(torch.float16)
    a = a.to(device)
    observe(a, b, c, d, e, g, h, k, m, n, [a for a in arr])
'''


def _placements_at_observe():
    analysis = analysis_of(PLACED)
    sites = sorted(analysis.collected.calls_by_name["observe"], key=lambda site: site.order)
    answers = []
    for site in sites:
        row = {}
        for arg in site.call.args:
            value = arg.value
            name = value.value if isinstance(value, cst.Name) else "comprehension"
            cpu = analysis.on_cpu(value, site.ctx.scope)
            accelerator = analysis.on_accelerator(value, site.ctx.scope)
            row[name] = "cpu" if cpu else "accelerator" if accelerator else None
            assert not (cpu and accelerator)
        answers.append(row)
    return answers


def test_placement_follows_each_name_in_the_order_the_code_runs():
    before, after = _placements_at_observe()
    assert before == {"a": "cpu"}  # read before the move below
    assert after == {
        "a": "accelerator",  # moved since
        "b": "cpu", "c": "cpu", "e": "cpu",  # arithmetic, from_numpy, cat of CPU tensors
        "d": "accelerator", "g": "accelerator",  # moved; the output of a moved model
        "h": "cpu",  # .cpu()
        "k": None,  # what an unknown helper returns is unknown
        "m": "cpu", "n": "accelerator",  # device= decides; .to(dtype) keeps the place
        "comprehension": None,
    }


PLACED_FURTHER = '''
import torch
import torch.nn as nn
from tools import helper


def f(device, x, y, helpers, Metric, load):
    net = nn.Linear(3, 3).to(device)
    a, b = x.to(device), y
    values, idx = net(x).max(1)
    rows, cols = a.shape
    out = helper(net, x)
    size = helper(len(x), x)
    chosen = helpers["eval"]
    picked = chosen(net, x)
    metric = Metric(device=device)
    host_metric = Metric(device="cpu")
    result = metric.compute()
    host_result = host_metric.compute()
    c = x.to(device)
    c, extra = load()
    assert observe(a, b, values, idx, rows, out, size, result, host_result, c, picked)
'''


def test_placement_follows_unpacking_helpers_given_moved_models_and_objects_built_on_a_device():
    analysis = analysis_of(PLACED_FURTHER)
    (site,) = analysis.collected.calls_by_name["observe"]  # read in an ``assert``
    placed = {arg.value.value: analysis.on_accelerator(arg.value, site.ctx.scope)
              for arg in site.call.args}
    assert {name for name, found in placed.items() if found} == {
        "a",  # ``a, b = x.to(device), y``: each name its own value
        "values", "idx",  # the parts of a device tensor
        "out",  # a helper given the moved model
        "result",  # a method's result of an object built with ``device=device``
    }
    # rows: sizes; b: never moved; size: the helper was given no model; host_result: built on
    # the CPU; c: rebound by an unpacking the analysis cannot see into; picked: a function
    # chosen while the program runs (which one, and what it returns, is unknown)
    assert "given `net`, a model moved to a device" in placed["out"].describe()
    assert "an object built with `device=device`" in placed["result"].describe()


def test_a_binding_that_runs_before_the_call_on_every_pass_hides_later_ones_in_the_loop():
    analysis = analysis_of('''
        import torch

        def f(frames, mode, g):
            for frame in frames:
                if mode == "a":
                    inp = torch.tensor(frame)
                    probe(inp)
                elif mode == "b":
                    inp = None
                if g:
                    other = torch.tensor(frame)
                probe(other)
                other = None
    ''')
    first, second = sorted(analysis.collected.calls_by_name["probe"], key=lambda s: s.order)
    kinds = [analysis.kind_at(site.call.args[0].value, site) for site in (first, second)]
    assert repr(kinds[0]) == "TENSOR"  # ``inp = None`` in the elif never reaches it
    assert repr(kinds[1]) == "UNKNOWN"  # ``other = None`` reaches it on the next pass


def test_a_later_assignment_in_the_same_branch_hides_an_earlier_one():
    analysis = analysis_of('''
        import numpy as np
        import torch

        def f(x, flag):
            if x is not None:
                x = np.asarray(x)
                if flag:
                    x = x.tolist()
                x = torch.from_numpy(x)
            probe(x)
            y = np.zeros(3)
            if flag:
                y = torch.zeros(3)
                if x is None:
                    y = np.ones(3)
            probe(y)
    ''')
    first, second = sorted(analysis.collected.calls_by_name["probe"], key=lambda s: s.order)
    # (the array and the list never reach the first probe: the last assignment of the branch
    # runs whenever they do; the parameter does)
    kinds = sorted(repr(analysis.kinds.binding_kind(b)) for b in analysis.reaching_bindings("x", first))
    assert kinds == ["TENSOR", "UNKNOWN"]
    # the inner ``y = np.ones(3)`` runs only under another test: the tensor still reaches
    kinds = [repr(analysis.kinds.binding_kind(b)) for b in analysis.reaching_bindings("y", second)]
    assert len(kinds) == 3 and "TENSOR" in kinds


def test_what_a_helper_returns_is_what_reaches_its_return():
    analysis = analysis_of('''
        import numpy as np
        import torch

        def to_tensor(x):
            x = np.asarray(x)
            x = torch.from_numpy(x)
            return x

        def maybe_tensor(x):
            if x is not None:
                x = torch.from_numpy(np.asarray(x))
            return x

        def maybe_other(x, flag):
            if flag:
                x = torch.from_numpy(np.asarray(x))
            return x

        def mixed(x):
            x = torch.from_numpy(x)
            x = x.numpy()
            return x
    ''')
    functions = {f.name: f for f in analysis.collected.functions}
    kinds = {name: repr(analysis.kinds.return_kind(info)) for name, info in functions.items()}
    assert kinds["to_tensor"] == "TENSOR"
    assert kinds["maybe_tensor"] == "TENSOR"  # None or a tensor, as ``Optional[Tensor]``
    assert kinds["maybe_other"] == "UNKNOWN"  # the parameter as it came, when not ``flag``
    assert kinds["mixed"] != "TENSOR"


def test_a_star_import_gives_the_torch_a_file_reads_without_importing_it():
    analysis = analysis_of('''
        from models.common import *

        model = torch.load(path)["model"]
    ''')
    site = analysis.collected.calls_by_name["load"][0]
    assert analysis.qualname(site.call.func, site.ctx.scope) == "torch.load"
    analysis = analysis_of('''
        from torch import *

        model = torch.load(path)
    ''')
    site = analysis.collected.calls_by_name["load"][0]
    assert analysis.qualname(site.call.func, site.ctx.scope) is None


def _placed_at_observe(source: str) -> dict:
    """What each name given to ``observe(...)`` holds there: "cpu", "accelerator" or None."""
    analysis = analysis_of(source)
    site = analysis.collected.calls_by_name["observe"][0]
    row = {}
    for arg in site.call.args:
        cpu = analysis.on_cpu(arg.value, site.ctx.scope)
        accelerator = analysis.on_accelerator(arg.value, site.ctx.scope)
        row[arg.value.value] = "cpu" if cpu else "accelerator" if accelerator else None
    return row


def test_placement_after_if_else_holds_what_either_branch_left():
    # issue 28 (DiT's token_drop): the else branch no longer erases the if branch's tensor
    assert _placed_at_observe("""
        import torch
        def f(p, n, force, x, device):
            if force is None:
                drop = torch.rand(n) < p          # a comparison keeps its tensor's place
                moved = x.to(device)
            elif force:
                drop = force == 1
                moved = x.to(device)
            else:
                drop = force == 1
                moved = x.to(device)
            flag = x is None                      # ``is`` gives a Python bool
            observe(drop, moved, flag)
        """) == {"drop": "cpu", "moved": "accelerator", "flag": None}


@pytest.mark.parametrize("setting, branch, placed", [
    # issue 28 (dino's eval_knn.py): moved under ``if args.use_cuda:``, read in the ``else``
    # of a later ``if args.use_cuda:``: the move did not happen there
    ("args.use_cuda", "else", "cpu"),
    ("use_cuda", "else", "cpu"),
    ("not args.cpu", "else", "cpu"),
    # ... in the body of the later ``if``, it did
    ("args.use_cuda", "body", "accelerator"),
    # a test that may read otherwise the next time (a call): the move counts after it
    ("cuda_ready()", "else", "accelerator"),
])
def test_a_move_under_a_setting_does_not_reach_the_other_branch_of_a_later_test_of_it(
        setting, branch, placed):
    body, orelse = ("observe(features)", "pass") if branch == "body" else ("pass", "observe(features)")
    assert _placed_at_observe(f"""
        import torch
        def f(args, use_cuda, n):
            features = torch.zeros(n, 4)
            if {setting}:
                features = features.cuda()
            for i in range(3):
                if {setting}:
                    {body}
                else:
                    {orelse}
        """) == {"features": placed}


def test_a_setting_assigned_again_is_a_new_test():
    assert _placed_at_observe("""
        import torch
        def f(use_cuda, n):
            features = torch.zeros(n, 4)
            if use_cuda:
                features = features.cuda()
            use_cuda = False
            if use_cuda:
                pass
            else:
                observe(features)
        """) == {"features": "accelerator"}


def test_einops_reshapes_and_legacy_constructors_have_a_place():
    # issue 28 (DALLE-pytorch): rearrange keeps its input's place; torch.Tensor([...]) is a CPU
    # tensor, torch.cuda.FloatTensor(...) is not
    assert _placed_at_observe("""
        import torch
        from einops import rearrange
        def f(device):
            a = rearrange(torch.zeros(2, 3), "a b -> b a")
            b = rearrange(torch.zeros(2, 3, device=device), "a b -> b a")
            c = torch.Tensor([1.0]) * 2
            d = torch.cuda.FloatTensor([1.0])
            observe(a, b, c, d)
        """) == {"a": "cpu", "b": "accelerator", "c": "cpu", "d": None}


def test_a_top_level_function_that_returns_a_cpu_tensor_is_cpu_evidence_at_its_calls():
    # issue 28 (LLMs-from-scratch gpt_generate.py): ``text_to_token_ids(...)`` is a CPU tensor
    assert _placed_at_observe("""
        import torch
        def cpu_ids(tokens):
            return torch.tensor(tokens).unsqueeze(0)
        def maybe(tokens, device):
            if device is None:
                return torch.tensor(tokens)
            return torch.tensor(tokens, device=device)
        def given(ids):
            return ids
        def recursive(n):
            return recursive(n - 1) if n else torch.zeros(2)
        def f(device, x):
            a = cpu_ids([1, 2])
            b = maybe([1, 2], device)
            c = given(torch.zeros(2))
            d = cpu_ids([1, 2]).to(device)
            e = recursive(3)
            observe(a, b, c, d, e)
        """) == {"a": "cpu", "b": None, "c": "cpu", "d": "accelerator", "e": None}
    # (``given`` returns its parameter: at a call, what the call passes, ``returned_argument``)


def test_a_function_that_gives_back_its_argument_unmoved_keeps_its_placement():
    # issue 28's "a value rebound through a helper" (``x = utils.normalize(x)``)
    assert _placed_at_observe("""
        import torch
        def normalize(x):
            return (x - x.mean()) / (x.std() + 1e-6)
        def preprocess(batch):
            images, labels = batch
            return images.float() / 255, labels
        def moved(x, device):
            return x.to(device) * 2
        def mixed(x, y):
            return x + y
        def f(device):
            a = normalize(torch.zeros(2, 3))
            b = normalize(torch.zeros(2, 3, device=device))
            c = preprocess((torch.zeros(2), torch.ones(2)))
            d = moved(torch.zeros(2), device)
            e = mixed(torch.zeros(2), torch.ones(2, device=device))
            observe(a, b, c, d, e)
        """) == {"a": "cpu", "b": "accelerator", "c": None, "d": None, "e": "accelerator"}
    # (``moved`` and ``mixed`` give no argument back unmoved. ``moved`` moves it to the device
    # its caller passes, which may be the CPU; every ``return`` of ``mixed`` is on the
    # accelerator by its own body, ``placement.returned_on_accelerator``: ``x + y`` of a ``y``
    # that every call passes on one)


def test_a_top_level_function_that_returns_a_tensor_on_an_accelerator_is_evidence_at_its_calls():
    # issue 28: ``ys = predict(xs)`` of ``def predict(x): return model(x.to(device))``
    assert _placed_at_observe("""
        import torch
        import torch.nn as nn
        model = nn.Linear(2, 2).cuda()
        def predict(x):
            with torch.no_grad():
                return model(x.cuda())
        def on_host(x):
            return model(x.cuda()).cpu()
        def sometimes(x, keep):
            if keep:
                return x
            return model(x.cuda())
        def sample(n, device=None):
            return torch.arange(n, device=device)
        def f():
            a = predict(torch.zeros(2))
            b = on_host(torch.zeros(2))
            c = sometimes(torch.zeros(2), True)
            d = sample(3, device="cpu")
            observe(a, b, c, d)
        """) == {"a": "accelerator", "b": "cpu", "c": None, "d": None}
    # (``sample``'s device is its caller's: pytorch_geometric's negative sampling passes the CPU)


def test_fed_to_model_pairs_a_tensor_parameter_with_the_parameter_called_with_it():
    analysis = analysis_of("""
        import torch
        def generate(model, idx, n):
            for _ in range(n):
                logits = model(idx[:, -4:].long())
                idx = torch.cat((idx, logits.argmax(-1, keepdim=True)), dim=1)
            return idx
        def moving(model, idx):
            return model(idx.to(next(model.parameters()).device))
        def rebinding(model, idx):
            model = model.eval()
            return model(idx)
        def shapes(model, idx):
            return model(idx.shape)
        """)
    fed = {info.name: analysis.fed_to_model(info) for info in analysis.collected.functions}
    assert fed == {"generate": [("idx", "model")], "moving": [], "rebinding": [], "shapes": []}


def test_appended_to_gives_the_appends_of_a_list_built_in_the_function():
    analysis = analysis_of("""
        import torch
        def f(batches, cuda):
            jdict, stats = [], []
            kept = [torch.zeros(1)]
            for x in batches:
                if cuda:
                    stats.append(x)
                else:
                    stats.append(torch.zeros(1))
                kept.append(x)
                kept.pop()
            probe(stats, kept, jdict)
            stats = [s for s in stats]
            stats.append(1)
        """)
    scope = next(info.scope for info in analysis.collected.functions if info.name == "f")
    order = analysis.collected.calls_by_name["probe"][0].order
    first, second = analysis.appended_to("stats", scope, order)
    assert first.order < second.order
    assert exclusive_branches(first.ctx, second.ctx)
    assert not exclusive_branches(first.ctx, first.ctx)
    assert analysis.appended_to("kept", scope, order) is None  # not ``[]``, and popped
    assert analysis.appended_to("jdict", scope, order) == []
    assert analysis.appended_to("stats", scope, 10 ** 9) is None  # rebound by a comprehension


@pytest.mark.parametrize("expr, sequence", [
    ("[1, 2]", True), ("[v for v in levels]", True), ("[1] + levels[:-1]", True),
    ("levels", True), ("levels[:-1]", True), ("pairs", True), ("built", True),
    ("[]", False), ("scale", False), ("ids", False), ("levels[0]", False), ("empty", False),
])
def test_is_sequence_reads_literals_names_and_annotations(expr, sequence):
    analysis = analysis_of(f"""
        from typing import Sequence
        def f(levels: list[int], pairs: Sequence[tuple], scale: float, ids):
            built = [1, 2, 3]
            empty = []
            observe({expr})
        """)
    site = analysis.collected.calls_by_name["observe"][0]
    assert analysis.kinds.is_sequence(site.call.args[0].value, site.ctx.scope) is sequence


# -- prefilters of the rules whose findings sit on one kind of node -------------------------

_MODULE_WITH_MASK = """{imports}
class M({base}):
    def __init__(self):
        super().__init__()
        self.mask = torch.ones(4)
    def forward(self, x):
        return x * self.mask
"""


@pytest.mark.parametrize("imports, base, kept", [
    ("import torch\nimport torch.nn as nn", "nn.Module", True),
    ("import torch\nfrom torch import nn", "nn.Module", True),
    ("import torch\nimport pytorch_lightning as pl", "pl.LightningModule", True),
    ("import torch\nfrom torch.nn import Linear", "Linear", True),
    ("import torch\nimport torch.nn as nn\nclass Base(nn.Module): pass", "Base", True),
    # a base of another file in a class that defines forward: the analysis takes it for a
    # module when it registers weights (ModuleClasses.shows_it_is_a_module), so it is kept
    ("import torch\nfrom .module import Module", "Module", True),
    # the analysis cannot prove these are modules, so TDL005/TDL006 never report there
    ("import torch\nfrom torch.distributions import Distribution", "Distribution", False),
    ("import torch", "object", False),
    ("import torch\nfrom enum import Enum", "Enum", False),
    ("import torch\nclass Base: pass", "Base", False),
    # a base the analysis may still resolve another way: kept
    ("import torch\nimport torch.nn as nn\nBase = nn.Module", "Base", True),
    ("import torch\nimport torch.nn as nn", "make_base(nn)", True),
])
def test_tdl005_tdl006_ast_prefilter_keeps_classes_that_can_be_modules(imports, base, kept):
    source = _MODULE_WITH_MASK.format(imports=imports, base=base)
    assert _kept("TDL005", source) is kept, source
    if kept is False:  # the rule itself agrees: nothing to report there
        from torchdevlint.engine import lint_source
        from torchdevlint.rules import RULES_BY_CODE
        assert lint_source(source, "m.py", [RULES_BY_CODE["TDL005"]], prefilter=False).findings == []


@pytest.mark.parametrize("code, source, kept", [
    ("TDL002", "import torch\nx = torch.ones(2).to('cuda')\n", True),
    ("TDL002", "import torch\nm = torch.nn.Linear(2, 2)\nm.cuda()\n", True),
    ("TDL002", "import torch\nt = torch.cuda.FloatTensor(2)\n", True),
    ("TDL002", "def f(device='cuda:1'):\n    return x.to(device)\n", True),
    # "cuda" only in a docstring, a comparison or a membership test
    ("TDL002", 'def f(t):\n    """Moves t, e.g. ``t.to("cuda")``."""\n'
               '    return t.device.type == "cuda" or t.device.type in ("cuda", "xpu")\n', False),
    ("TDL003", "import torch\nstate = torch.load('w.pt')\n", True),
    ("TDL003", "from torch import load as read\nimport torch\nstate = read('w.pt')\n", True),
    ("TDL003", 'import torch\ndef f():\n    """Call torch.load(path) to load it."""\n', False),
    ("TDL012", "import torch\nd = torch.accelerator.current_accelerator().type\n", True),
    ("TDL012", "import torch\nacc = torch.accelerator.current_accelerator()\nd = acc.type\n", True),
    ("TDL012", "import torch\nif (a := torch.accelerator.current_accelerator()).type: pass\n", True),
    ("TDL012", "import torch\n# torch.accelerator.current_accelerator() may be None\n"
               "d = 'cpu'\n", False),
    # called, never dereferenced: ``device = torch.accelerator.current_accelerator()``
    ("TDL012", "import torch\nd = torch.accelerator.current_accelerator() or 'cpu'\n", False),
])
def test_single_node_rules_ast_prefilters(code, source, kept):
    assert _kept(code, source) is kept


def test_pre_0_4_idioms_variable_is_its_tensor_and_type_of_a_cuda_type_moves():
    # ``Variable(x)`` returns ``x`` itself since torch 0.4 (``KindInference.passed_through``);
    # ``x.type(torch.cuda.FloatTensor)``, also through a name chosen at runtime, copies ``x``
    # to the GPU (``Placement.device_of_move``); a CPU type or a dtype moves nothing
    assert _placed_at_observe("""
        import torch
        from torch.autograd import Variable
        cuda = torch.cuda.is_available()
        Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
        def f(x, device):
            a = Variable(torch.zeros(2, 3))
            b = Variable(torch.zeros(2, 3).to(device), requires_grad=False)
            c = x.type(Tensor)
            d = x.type(torch.cuda.LongTensor)
            e = torch.zeros(2).type(torch.float16)
            g = torch.zeros(2).type(torch.FloatTensor)
            observe(a, b, c, d, e, g)
        """) == {"a": "cpu", "b": "accelerator", "c": "accelerator", "d": "accelerator",
                 "e": "cpu", "g": "cpu"}


def test_methods_called_on_a_moved_instance_run_on_its_device():
    # ``ModuleState.called_reaches`` (issue 28: a VAE's ``sample``): a method the file calls
    # on an instance it moved first, and what that method calls on ``self``; not one called
    # before the move, nor one of an instance never moved
    analysis = analysis_of("""
        import torch
        import torch.nn as nn
        class VAE(nn.Module):
            def forward(self, x):
                return x
            def sample(self, n):
                return self.decode(torch.randn(n, 2))
            def decode(self, z):
                return z
            def warm_up(self):
                return self.decode(torch.zeros(1, 2))
            def inspect(self):
                return 0
        def main(device):
            model = VAE()
            model.warm_up()
            model.to(device)
            model.sample(4)
            moved = VAE().to(device)
            moved.sample(2)
            plain = VAE()
            plain.inspect()
    """)
    info = next(c for c in analysis.collected.classes if c.name == "VAE")
    assert analysis.module_state(info).called_reaches == {"sample", "decode"}


def test_what_a_plain_container_attribute_holds():
    # ``ModuleClasses.container_elements``: the items of a display or comprehension, or what
    # the method that binds ``[]`` appends; None when another method adds to it or the
    # items are assigned by key
    analysis = analysis_of("""
        import torch
        import torch.nn as nn
        class M(nn.Module):
            def __init__(self, sizes):
                super().__init__()
                self.shown = [torch.ones(2), torch.zeros(2)]
                self.filled = []
                for s in sizes:
                    self.filled.append(torch.ones(2) * s)
                self.elsewhere = []
                self.keyed = {}
                self.keyed["a"] = torch.ones(2)
            def grow(self):
                self.elsewhere.append(torch.ones(2))
    """)
    info = next(c for c in analysis.collected.classes if c.name == "M")
    state = analysis.module_state(info)
    contents = {name: analysis.modules.container_elements(bindings[0])
                for name, bindings in state.other_containers.items()}
    assert [cst.Module([]).code_for_node(e) for e, _ in contents["shown"]] == \
        ["torch.ones(2)", "torch.zeros(2)"]
    assert [cst.Module([]).code_for_node(e) for e, _ in contents["filled"]] == \
        ["torch.ones(2) * s"]
    assert contents["elsewhere"] is None and contents["keyed"] is None


def test_a_cpu_tensor_indexed_on_the_device_is_a_meeting_with_its_own_error():
    # ``self.alpha[targets]`` and ``self.alpha.gather(0, targets)`` meet the device (the
    # CPU input refuses device indices); ``x[:, self.keep]`` (a CPU index into a device
    # tensor) does not
    found = lint_source(textwrap.dedent("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        class Loss(nn.Module):
            def __init__(self):
                super().__init__()
                self.alpha = torch.ones(3)
                self.beta = torch.ones(3)
                self.keep = torch.tensor([0, 2])
            def forward(self, logits, targets):
                ce = F.cross_entropy(logits, targets, reduction="none")
                return (self.alpha[targets] * self.beta.gather(0, targets) * ce).mean() \\
                    + logits[:, self.keep].sum()
        model = Loss().to("cuda")
    """), "snippet.py", [r for r in ALL_RULES if r.code == "TDL005"]).findings
    errors = {f.line: f.message for f in found}
    assert sorted(errors) == [8, 9]
    assert "indices should be either on cpu or on the same device" in errors[8]
    assert "passes it to `.gather()` with an index" in errors[9]
    assert "Expected all tensors to be on the same device" in errors[9]


def _function_and_nodes(source: str):
    """The first function of ``source``, the ``self.m = ...`` assignments in it, and the
    reads of ``self.m`` that are operands of arithmetic."""
    analysis = analysis_of(source)
    function = analysis.collected.functions[0]
    stores, reads = [], []
    for node in walk_nodes(function.node.body):
        if isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Attribute):
            stores.append(node.target)
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.right, cst.Attribute) \
                and node.right.attr.value == "m":
            reads.append(node.right)
    return function, stores, reads


def walk_nodes(root):
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


@pytest.mark.parametrize("body, reached", [
    # stored only in a branch that may be skipped: the first call in eval mode skips it
    ("if self.training:\n        self.m = x\n    return x - self.m", True),
    ("for _ in range(n):\n        self.m = x\n    return x - self.m", True),
    ("with ctx:\n        if self.training:\n            self.m = x\n    return x - self.m", True),
    ("y = x - self.m\n    self.m = x\n    return y", True),  # stored after the read
    # stored on every path before the read
    ("self.m = x\n    return x - self.m", False),
    ("if self.training:\n        self.m = x\n    else:\n        self.m = -x\n    return x - self.m",
     False),
    ("with ctx:\n        self.m = x\n    return x - self.m", False),
    # the read in the branch exclusive with the store: an earlier call may have stored it
    ("if self.count == 0:\n        self.m = x\n    else:\n        return x - self.m", False),
])
def test_reached_without_a_store(body, reached):
    from torchdevlint.analysis import reached_without

    source = f"def forward(self, x, n=1, ctx=None):\n    {body}\n"
    function, stores, reads = _function_and_nodes(source)
    assert stores and reads
    assert reached_without(function.node.body, reads[0], stores) is reached


def test_a_registered_buffer_taken_whole_is_a_buffer_snapshot():
    analysis = analysis_of("""
        import torch
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("scale", torch.ones(3))
                for i in range(2):
                    self.register_buffer(f"w{i}", torch.ones(3))
                self.weight = nn.Parameter(torch.ones(3))
                a = self.scale
                b = getattr(self, "scale")
                c = getattr(self, f"w{0}")
                d = self.weight
                e = getattr(self, "weight")
    """)
    info = analysis.collected.classes[0]
    state = analysis.module_state(info)
    assert state.buffers == {"scale"} and state.computed_buffers
    init = info.methods["__init__"]
    values = {b.node.value: b.value for b in (
        init.scope.bindings[name][0] for name in "abcde")}
    snapshot = {name: analysis.modules.buffer_snapshot(state, value, "self")
                for name, value in values.items()}
    assert snapshot == {"a": True, "b": True, "c": True, "d": False, "e": False}


METHOD_CALLS = '''
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Tracker:
    def match(self, features, labels):
        return self._norms(features, labels)

    def _norms(self, features, labels):
        return features * labels

    @torch.no_grad()
    def decorated(self, features, labels):
        return features * labels

    @staticmethod
    def static(features, labels):
        return features * labels

    def fit(self, features, labels, epochs):
        return features * labels

    def shared(self, features, labels):
        return features * labels

    def __call__(self, features, labels):
        return features * labels


class Other:
    def seen(self, features, labels):
        return features


def elsewhere(obj, features, labels):
    obj.fit()  # (no call of ``Tracker.fit``: its arguments do not fit it)
    return obj.shared(features, labels)


head = nn.Linear(8, 4).to(device)
tracker = Tracker()
features = head(torch.randn(3, 8).to(device))
tracker.match(features, labels=torch.tensor([0, 1, 0]))
tracker.decorated(features, torch.tensor([0, 1, 0]))
Tracker.static(features, torch.tensor([0, 1, 0]))
tracker.static(features, labels=torch.zeros(3))
tracker.fit(features, torch.ones(3), 2)
tracker.shared(features, torch.tensor([0, 1, 0]))
Other().seen(features.cpu(), torch.zeros(3))
tracker(features, torch.tensor([0, 1, 0]))
'''


def _method(analysis: Analysis, cls: str, name: str):
    return next(c for c in analysis.collected.classes if c.name == cls).methods[name]


def _passed(analysis: Analysis, cls: str, method: str, parameter: str):
    func = _method(analysis, cls, method)
    binding = next(b for b in func.scope.bindings[parameter] if b.how == "param")
    passed = analysis.kinds.caller_arguments(binding)
    return None if passed is None else [cst.Module([]).code_for_node(a) for a, _ in passed]


def test_caller_arguments_of_a_method_are_its_calls_through_instances_of_its_class():
    analysis = analysis_of(METHOD_CALLS)
    # ``tracker.match(...)`` on ``tracker = Tracker()``, by position and by keyword
    assert _passed(analysis, "Tracker", "match", "features") == ["features"]
    assert _passed(analysis, "Tracker", "match", "labels") == ["torch.tensor([0, 1, 0])"]
    # ``self._norms(...)`` in a method of the class
    assert _passed(analysis, "Tracker", "_norms", "labels") == ["labels"]
    # another class's method of its own name is not this one's call
    assert _passed(analysis, "Other", "seen", "features") == ["features.cpu()"]
    # a decorated method, a dunder, and a method also called on an object of unknown kind
    # (``obj.shared(...)``: it may be this method, given other values) are not matched
    assert _passed(analysis, "Tracker", "decorated", "labels") is None
    # a static method: called through its class and through an instance, given no ``self``
    assert _passed(analysis, "Tracker", "static", "labels") == [
        "torch.tensor([0, 1, 0])", "torch.zeros(3)"]
    assert _passed(analysis, "Tracker", "static", "features") == ["features", "features"]
    # ``obj.fit()`` on an object of unknown kind cannot be ``Tracker.fit``: it passes nothing
    # for the parameters without defaults (``kinds.method_call_sites``)
    assert _passed(analysis, "Tracker", "fit", "labels") == ["torch.ones(3)"]
    assert _passed(analysis, "Tracker", "__call__", "labels") is None
    assert _passed(analysis, "Tracker", "shared", "labels") is None


def test_method_parameters_placed_by_every_call():
    analysis = analysis_of(METHOD_CALLS)
    placement = analysis.placement
    match = _method(analysis, "Tracker", "match").scope
    norms = _method(analysis, "Tracker", "_norms").scope
    assert set(placement.parameters_on_accelerator(match)) == {"features"}
    assert set(placement.parameters_on_cpu(match)) == {"labels"}
    # followed on through ``self._norms(features, labels)``
    assert set(placement.parameters_on_accelerator(norms)) == {"features"}
    assert set(placement.parameters_on_cpu(norms)) == {"labels"}
    evidence = placement.parameters_on_cpu(norms)["labels"]
    assert cst.Module([]).code_for_node(evidence.origin) == "torch.tensor([0, 1, 0])"
    shared = _method(analysis, "Tracker", "shared").scope
    assert placement.parameters_on_cpu(shared) == {}
    assert placement.parameters_on_accelerator(shared) == {}


def test_a_list_of_device_tensors_is_no_tensor_but_its_items_and_joins_are():
    analysis = analysis_of("""
        import torch

        def f(model, batches, device):
            model = model.to(device)
            preds, kept = [], []
            for x in batches:
                preds.append(model(x.to(device)))
                kept.append(model(x.to(device)).cpu())
            observe(preds, torch.cat(preds), preds[0], torch.stack(kept))
        """)
    call = next(site.call for site in analysis.collected.calls_by_name["observe"])
    scope = next(f for f in analysis.collected.functions if f.name == "f").scope
    placed = [analysis.on_accelerator(arg.value, scope) for arg in call.args]
    assert placed[0] is None  # the list itself: NumPy's readers ask its appends
    assert placed[1] is not None and placed[2] is not None
    assert type(placed[1]).__name__ == "OnAccelerator"
    assert placed[3] is None  # appended after ``.cpu()``


def test_the_items_of_a_list_of_device_tensors_are_on_the_device_where_iterated():
    analysis = analysis_of("""
        import torch

        def f(model, batches, device):
            model = model.to(device)
            preds = []
            for x in batches:
                preds.append(model(x.to(device)))
            made = [model(torch.zeros(2, 4).to(device)) for _ in range(3)]
            own = [model(b) for b in batches]
            for p in preds:
                observe(p)
            for q in made:
                observe(q)
            for r in own:
                observe(r)
            observe([s for s in preds], [t for t in [u.cpu() for u in preds]])
        """)
    scope = next(f for f in analysis.collected.functions if f.name == "f").scope
    calls = [site.call for site in analysis.collected.calls_by_name["observe"]]
    # ``for p in preds`` of an appended list, ``for q in made`` of a comprehension of outputs
    assert analysis.on_accelerator(calls[0].args[0].value, scope) is not None
    assert analysis.on_accelerator(calls[1].args[0].value, scope) is not None
    # a comprehension whose element reads its own variable is no evidence
    assert analysis.on_accelerator(calls[2].args[0].value, scope) is None
    # the target read in a comprehension over such a list; not over a list of host copies
    first, second = (arg.value for arg in calls[3].args)
    assert analysis.on_accelerator(first.elt, scope) is not None
    assert analysis.on_accelerator(second.elt, scope) is None


@pytest.mark.parametrize("code, rank", [
    ("torch.zeros(4, 2)", 2), ("torch.zeros((4, 2, 3))", 3), ("torch.zeros(4)", 1),
    ("torch.zeros(shape)", None), ("torch.zeros(*shape)", None),
    ("torch.tensor([[1, 2], [3, 4]])", 2), ("torch.tensor([1, 2])", 1),
    ("torch.tensor([[1, 2], 3])", None), ("torch.tensor(data)", None),
    ("torch.from_numpy(np.array([[10, 13], [16, 30]], dtype=np.float32))", 2),
    ("torch.tensor([0.5, 0.5, 0.5]).view(1, 3, 1, 1)", 4),
    ("torch.zeros(4, 2).unsqueeze(0).float()", 3), ("torch.zeros(4, 2).sum(0)", None),
])
def test_tdl005_knows_how_many_dimensions_a_tensor_is_made_with(code, rank):
    from torchdevlint.rules.tdl005_unregistered_tensor_attribute import UnregisteredTensorAttribute
    analysis = analysis_of(f"""
        import numpy as np
        import torch

        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.value = {code}
        """)
    rule = UnregisteredTensorAttribute()
    rule.analysis, rule.kinds = analysis, analysis.kinds
    binding = analysis.collected.classes[0].attributes["value"][0]
    assert rule._rank(binding.value, binding) == rank


@pytest.mark.parametrize("index, left", [
    ("[0]", 1), ("[0, 1]", 0), ("[:, 0]", 1), ("[None, 0]", 2), ("[i]", 1), ("[..., 0]", None),
])
def test_rank_after_index(index, left):
    from torchdevlint.analysis import rank_after_index
    subscript = cst.parse_expression(f"t{index}")
    assert rank_after_index(2, subscript) == left


def test_a_preprocessor_asked_for_torch_tensors_makes_them_on_the_cpu():
    analysis = analysis_of("""
        import torch

        def f(tokenizer, text):
            a = tokenizer(text, return_tensors="pt")
            b = tokenizer(text, return_tensors="np")
            c = tokenizer.encode(text, return_tensors="pt").to("cuda")
            observe(a, b, c, a["input_ids"])
        """)
    call = next(site.call for site in analysis.collected.calls_by_name["observe"])
    scope = next(f for f in analysis.collected.functions if f.name == "f").scope
    assert [analysis.on_cpu(arg.value, scope) is not None for arg in call.args] == \
        [True, False, False, True]
    assert _kept("TDL011", """
        import torch
        def f(model, tokenizer, device):
            model = model.to(device)
            return model.generate(**tokenizer("hi", return_tensors="pt"))
        """)


def test_a_model_takes_as_rnn_state_what_its_forward_hands_a_recurrent_layer_as_state():
    # the seq2seq tutorial's ``encoder(word, hidden)``: TDL011 names the layer's error
    analysis = analysis_of("""
        import torch
        import torch.nn as nn
        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(4, 4)
                self.fc = nn.Linear(4, 4)
            def forward(self, x, h, c, other=None):
                other = self.fc(other)
                return self.lstm(x, (h, c))
        class Plain(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
            def forward(self, x, h):
                return self.fc(x) + h
        enc = Encoder().cuda()
        plain = Plain().cuda()
        enc(x, h, c, other=o)
        plain(x, h)
    """)
    calls = {cst.Module([]).code_for_node(site.call.func): site
             for site in analysis.collected.calls_by_name["enc"] +
             analysis.collected.calls_by_name["plain"]}
    enc, plain = calls["enc"], calls["plain"]
    takes = analysis.model_takes_as_rnn_state
    assert [takes(enc.call, i, None, enc.ctx.scope) for i in range(4)] == [False, True, True, False]
    assert takes(enc.call, -1, "c", enc.ctx.scope) and not takes(enc.call, -1, "other", enc.ctx.scope)
    assert not takes(plain.call, 1, None, plain.ctx.scope)


SELFLESS = """
import torch


class Trainer:
    def train(model, loader, device):
        model.train()
        Trainer.epoch(model, loader, device)

    def epoch(model, loader, device):
        for x in loader:
            model(x.to(device))

    def bound(runner, x):
        return x

    def named_self(self, loader):
        return loader


class Base:
    def explicit(me, x):
        return x


class Child(Base):
    def explicit(this, x):
        return Base.explicit(this, x)


def main(model, loader, device, obj):
    Trainer.train(model, loader, device)
    obj.bound(3)
    Trainer.bound(model, 3)
    Trainer.named_self(model, loader)
"""


def test_a_method_called_only_through_its_class_has_no_self():
    analysis = analysis_of(SELFLESS)
    # chexnet's trainer: called as ``Trainer.train(model, ...)`` only (``model.train()`` passes
    # no arguments, so it cannot be ``Trainer.train`` through an object), so ``model`` is the
    # caller's model; ``Trainer.epoch(model, ...)`` then passes no ``self`` either
    assert _method(analysis, "Trainer", "train").self_name is None
    assert _method(analysis, "Trainer", "epoch").self_name is None
    assert _passed(analysis, "Trainer", "epoch", "model") == ["model"]
    # ``Trainer.explicit(this, x)`` passes the caller's own ``self``: an unbound call
    assert _method(analysis, "Base", "explicit").self_name == "me"
    # ``obj.bound(3)`` on an object of unknown kind fits it: it may run with ``runner`` bound
    assert _method(analysis, "Trainer", "bound").self_name == "runner"
    # a first parameter named ``self`` stays ``self``
    assert _method(analysis, "Trainer", "named_self").self_name == "self"


def test_module_constants_on_the_cpu_as_functions_read_them():
    analysis = analysis_of("""
        import torch

        MEAN = torch.tensor([0.5, 0.5, 0.5]).view(1, 3, 1, 1)
        MOVED = torch.zeros(3).cuda()
        TWICE = torch.zeros(3)
        TWICE = TWICE + 1
        RESET = torch.ones(3)

        def reset():
            global RESET
            RESET = None

        def f(x):
            return MEAN, MOVED, TWICE, RESET

        def g(x):
            MEAN = x
            return MEAN
        """)
    functions = {info.name: info for info in analysis.collected.functions}
    placement = analysis.placement
    # bound once to a CPU tensor, never declared ``global``: what ``f`` reads
    assert set(placement.module_constants_on_cpu(functions["f"].scope)) == {"MEAN"}
    # ``g`` binds its own ``MEAN``
    assert placement.module_constants_on_cpu(functions["g"].scope) == {}
    mean = functions["f"].node.body.body[0].body[0].value.elements[0].value
    assert analysis.on_cpu(mean, functions["f"].scope) is not None


def test_bases_that_name_each_other_give_no_inherited_attributes_and_no_crash():
    # (Python refuses such classes at run time; the analysis must still end, not recurse:
    # ``ModuleClasses._inherit`` skips a base whose state is being built)
    from torchdevlint.rules import RULES_BY_CODE
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn


        class A(B):
            def __init__(self):
                super().__init__()
                self.w = torch.ones(3)

            def forward(self, x):
                return x * self.v


        class B(A):
            def __init__(self):
                super().__init__()
                self.v = torch.ones(3)

            def forward(self, x):
                return x * self.w


        model = A().to("cuda")
        """)
    result = lint_source(source, "m.py", [RULES_BY_CODE["TDL005"], RULES_BY_CODE["TDL002"]],
                         prefilter=False)
    assert result.error is None
    assert [(f.code, f.line) for f in result.findings] == [("TDL002", 24)]


@pytest.mark.parametrize("calls, sequence", [
    ("Loss()", True),  # the default, a tuple
    ("Loss((0.1, 0.9)); Loss()", True),
    ("Loss(0.5)", False),  # a number passed: the default does not count
    ("Loss(); Loss(*args)", False),  # (what ``*args`` passes is not seen)
    ("", False),  # no construction: nothing says what it is given
])
def test_is_sequence_takes_a_literal_default_that_a_construction_leaves(calls, sequence):
    analysis = analysis_of(f"""
        class Loss:
            def __init__(self, alpha=(0.25, 0.75), beta=SIZES):
                observe(alpha)
        {calls}
        """)
    site = analysis.collected.calls_by_name["observe"][0]
    assert analysis.kinds.is_sequence(site.call.args[0].value, site.ctx.scope) is sequence


@pytest.mark.parametrize("use, tensor", [
    ("self.alpha.gather(0, target)", True),  # the index of a tensor-only method
    ("self.alpha.index_select(0, index=target)", True),
    ("self.alpha.gather(target, index)", False),  # the dimension, not the index
    ("target.view(-1, 1)", True),  # sizes: numpy's ``view`` takes a dtype
    ("target.view(dtype)", False),
    ("self.table.take(target)", False),  # numpy arrays have ``take`` too
])
def test_a_module_parameter_is_a_tensor_by_the_index_it_gives_and_its_view(use, tensor):
    analysis = analysis_of(f"""
        import torch
        import torch.nn as nn
        class Loss(nn.Module):
            def __init__(self):
                super().__init__()
                self.alpha = torch.ones(2)
            def forward(self, target, index, dtype):
                return {use}
        """)
    info = next(i for i in analysis.collected.classes if i.name == "Loss")
    state = analysis.module_state(info)
    forward = info.methods["forward"]
    assert analysis.modules.parameter_is_tensor(state, forward, "target") is tensor


@pytest.mark.parametrize("call, index, keyword, state", [
    ("rnn(x, (h0, c0))", 1, None, True),  # a torch.nn LSTM, moved, given its state
    ("rnn(x, hx=h0)", -1, "hx", True),
    ("rnn(x)", 0, None, False),  # its input
    ("lin(x, h0)", 1, None, False),  # no recurrent layer
])
def test_a_torch_recurrent_layer_takes_its_second_argument_as_its_state(call, index, keyword, state):
    analysis = analysis_of(f"""
        import torch.nn as nn
        def main(device, x, h0, c0):
            rnn = nn.LSTM(3, 5).to(device)
            lin = nn.Linear(3, 5).cuda()
            return {call}
        """)
    name = call.partition("(")[0]
    site = analysis.collected.calls_by_name[name][0]
    assert analysis.model_takes_as_rnn_state(site.call, index, keyword, site.ctx.scope) is state


@pytest.mark.parametrize("callee, moved", [
    ("model.embed", True),  # a registered submodule with weights of a moved model
    ("model.act", False),  # no weights: where it runs is its input's
    ("model.table", False),  # a plain tensor attribute, no submodule
    ("other.embed", False),  # the same class, an instance never moved
])
def test_a_weighted_submodule_of_a_moved_model_is_moved(callee, moved):
    analysis = analysis_of(f"""
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(10, 4)
                self.act = nn.ReLU()
                self.table = torch.ones(3)
        def main(device):
            model = Net().to(device)
            other = Net()
            probe({callee})
        """)
    site = analysis.collected.calls_by_name["probe"][0]
    found = analysis.placement.moved_model(site.call.args[0].value, site.ctx.scope)
    assert (found is not None) is moved


RUNNER = """\
import torch
import torch.nn as nn
class Runner({base}):
    def __init__(self, device):
        self.net = nn.Linear(4, 2).to(device)
        self.loss = None
    def step(self, x):
        self.loss = self.net(x).mean()
    def report(self):
        probe(self.loss)
"""


@pytest.mark.parametrize("extra, base, placed", [
    ("", "", True),  # every store (``None`` aside) is on the accelerator
    ("    def reset(self):\n        self.loss = torch.zeros(1)\n", "", False),  # one on the CPU
    ("    def __getattr__(self, name):\n        return 0\n", "", False),  # decides reads itself
    ("", "nn.Module", False),  # a module's state: ``.to()`` moves it, ``modules`` judges it
])
def test_object_state_stored_on_an_accelerator_by_another_method(extra, base, placed):
    analysis = analysis_of(RUNNER.format(base=base) + extra)
    site = analysis.collected.calls_by_name["probe"][0]
    found = analysis.placement.on_accelerator(site.call.args[0].value, site.ctx.scope)
    assert (found is not None) is placed
    if placed:
        assert found.describe().startswith("stored in `self.loss` by `step()`: the output of")


@pytest.mark.parametrize("start, update, placed", [
    ("total = 0.", "total += out.mean()", True),  # a number, given a tensor on the device
    ("total = 0.", "total += out.mean().item()", False),  # given a number
    ("total = torch.zeros(1)", "total += out.mean()", False),  # a CPU tensor: TDL011's
])
def test_an_in_place_update_of_a_number_with_a_device_tensor_places_it(start, update, placed):
    analysis = analysis_of(f"""
        import torch
        def f(model, x, device):
            model.to(device)
            out = model(x.to(device))
            {start}
            {update}
            probe(total)
        """)
    site = analysis.collected.calls_by_name["probe"][0]
    found = analysis.placement.on_accelerator(site.call.args[0].value, site.ctx.scope)
    assert (found is not None) is placed


def test_an_in_place_extension_of_a_list_with_device_rows_holds_them():
    analysis = analysis_of("""
        import numpy as np
        def f(model, x, device):
            model.to(device)
            rows = []
            rows += model(x.to(device))
            probe(rows)
        """)
    site = analysis.collected.calls_by_name["probe"][0]
    expr = site.call.args[0].value
    assert analysis.placement.on_accelerator(expr, site.ctx.scope) is None  # a list, not a tensor
    assert isinstance(analysis.placement._placed_at(expr, site.ctx.scope, "accelerator"),
                      HeldInList)


@pytest.mark.parametrize("base, placed", [("", True), ("nn.Module", False)])
def test_what_a_method_of_a_plain_object_returns_is_placed_by_its_returns(base, placed):
    analysis = analysis_of(f"""
        import torch
        import torch.nn as nn
        class Evaluator({base}):
            def __init__(self, model):
                self.model = model
            def _forward(self, x):
                with torch.no_grad():
                    return self.model(x)
            def run(self, x):
                probe(self._forward(x))
        def main(device):
            model = nn.Linear(4, 2).to(device)
            return Evaluator(model).run(torch.randn(1, 4))
        """)
    site = analysis.collected.calls_by_name["probe"][0]
    found = analysis.placement.on_accelerator(site.call.args[0].value, site.ctx.scope)
    assert (found is not None) is placed
    if placed:
        assert found.describe().startswith("what `_forward()` returns, the output of `self.model`")


@pytest.mark.parametrize("assigned, sequence", [
    ("[1.0, 2.0]", True), ("scales", True),  # a list, or a parameter every construction gives one
    ("None", False), ("scale", False),
])
def test_is_sequence_reads_an_attribute_of_self_by_its_assignments(assigned, sequence):
    analysis = analysis_of(f"""
        class Head:
            def __init__(self, scales, scale):
                self.scales = {assigned}
            def forward(self, x):
                observe(self.scales)
        Head([0.5, 1.5], 2.0)
        """)
    site = analysis.collected.calls_by_name["observe"][0]
    assert analysis.kinds.is_sequence(site.call.args[0].value, site.ctx.scope) is sequence


@pytest.mark.parametrize("built, moved", [
    ("Net().cuda() if use_cuda else Net()", True),  # moved in the branch that runs on a GPU
    ("Net() if use_cuda else Net().to(device)", True),
    ("Net() if use_cuda else Net()", False),
])
def test_a_model_moved_in_one_branch_of_a_choice_is_moved(built, moved):
    analysis = analysis_of(f"""
        import torch.nn as nn
        Net = nn.Linear
        def main(device, use_cuda):
            model = {built}
            probe(model)
        """)
    site = analysis.collected.calls_by_name["probe"][0]
    found = analysis.placement.moved_model(site.call.args[0].value, site.ctx.scope)
    assert (found is not None) is moved


@pytest.mark.parametrize("init, update, placed", [
    ("torch.zeros(3)", "", True),  # made on the CPU, kept
    ("torch.zeros(3)", "self.total = self.total + x", True),  # an update of itself keeps it
    ("torch.zeros(3, device=device)", "", False),  # made where its construction says
    ("torch.zeros(3)", "self.total = x.clone()", False),  # stored from an unknown value too
])
def test_object_state_kept_on_the_cpu(init, update, placed):
    analysis = analysis_of(f"""
        import torch
        class Stats:
            def __init__(self, device):
                self.total = {init}
            def add(self, x):
                {update or "pass"}
            def report(self):
                probe(self.total)
        """)
    site = analysis.collected.calls_by_name["probe"][0]
    found = analysis.placement.on_cpu(site.call.args[0].value, site.ctx.scope)
    assert (found is not None) is placed


EVALUATORS = """\
import torch
import torch.nn as nn
class Base:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        probe(self._forward(x))
class Evaluator(Base):
    def _forward(self, x):
        return self.model(x)
{more}
def main(device):
    model = nn.Linear(4, 2).to(device)
    return Evaluator(model).evaluate(torch.randn(1, 4, device=device))
"""


@pytest.mark.parametrize("more, placed", [
    ("", True),  # the one subclass defines it; its constructions run Base.__init__
    ("class Other(Base):\n    def _forward(self, x):\n        return x.cpu()\n", False),  # two
    ("class Own(Evaluator):\n    def __init__(self, model):\n        self.model = model.cpu()\n",
     False),  # a derived class builds its own: Base's constructions are not all seen
])
def test_a_base_class_method_reaches_its_subclass_and_its_constructions(more, placed):
    analysis = analysis_of(EVALUATORS.format(more=more))
    site = analysis.collected.calls_by_name["probe"][0]
    found = analysis.placement.on_accelerator(site.call.args[0].value, site.ctx.scope)
    assert (found is not None) is placed


@pytest.mark.parametrize("loop, placed", [
    ("for k, v in out.items():", True),
    ("for v in out.values():", True),
    ("for v in out.keys():", False),
    ("for k, v in {}.items():", False),
])
def test_the_values_of_a_moved_models_output_dict_are_on_the_accelerator(loop, placed):
    analysis = analysis_of(f"""
        def f(model, x, device):
            model.to(device)
            out = model(x.to(device))
            {loop}
                probe(v)
        """)
    site = analysis.collected.calls_by_name["probe"][0]
    found = analysis.placement.on_accelerator(site.call.args[0].value, site.ctx.scope)
    assert (found is not None) is placed


def test_attribute_bindings_follow_the_class_chain_of_the_file():
    analysis = analysis_of("""
        class Base:
            def __init__(self):
                self.scales = [1.0, 2.0]
        class Head(Base):
            def reset(self):
                self.scales = [0.5]
            def forward(self, x):
                observe(self.scales)
        class Other:
            def forward(self):
                observe(self.scales)
        """)
    classes = {info.name: info for info in analysis.collected.classes}
    assert len(analysis.kinds.attribute_bindings(classes["Head"], "scales")) == 2
    assert len(analysis.kinds.attribute_bindings(classes["Base"], "scales")) == 1
    assert analysis.kinds.attribute_bindings(classes["Other"], "scales") == []
    head, other = analysis.collected.calls_by_name["observe"]
    assert analysis.kinds.is_sequence(head.call.args[0].value, head.ctx.scope)
    assert not analysis.kinds.is_sequence(other.call.args[0].value, other.ctx.scope)


HELPER_CALLS = '''
import torch
import torch.nn as nn

class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)

    def reparameterize(self, mu, logvar):
        return mu + torch.exp(0.5 * logvar)

    def jitter(self, mu, scale):
        return mu * scale

    def hooked(self, mu):
        return mu + 1

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = h.chunk(2, dim=-1)
        self.callback = self.hooked
        return self.reparameterize(mu, logvar) + self.jitter(mu, 0.1) + self.hooked(mu)

    def prior(self, n):
        return self.jitter(torch.zeros(n, 2), 0.1)
'''


def test_a_helper_parameter_that_every_call_on_self_gives_a_device_tensor_is_on_the_device():
    analysis = analysis_of(HELPER_CALLS)
    info = next(c for c in analysis.collected.classes if c.name == "VAE")
    state = analysis.module_state(info)

    def on_device(method: str) -> set:
        return analysis.modules.on_module_device(state, info.methods[method]).names

    # ``self.reparameterize(mu, logvar)`` of the encoder's output: both parameters (``logvar``
    # is used only in arithmetic, which alone says nothing of a parameter's device)
    assert {"mu", "logvar"} <= on_device("reparameterize")
    # one call of ``jitter`` gives a CPU tensor (and ``scale`` is a number at every call)
    assert not {"mu", "scale"} & on_device("jitter")
    # ``self.hooked`` is also read as a callback: its callers are unknown
    assert "mu" not in on_device("hooked")
    # the fact is asked once per method: the same object
    assert analysis.modules.on_module_device(state, info.methods["reparameterize"]) is \
        analysis.modules.on_module_device(state, info.methods["reparameterize"])


GRID = '''
import torch

def grid(nx, ny, device):
    yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
    gy, gx = torch.meshgrid(torch.arange(ny, device=device), torch.arange(nx, device=device))
    a, b = torch.broadcast_tensors(torch.zeros(3, 1), torch.ones(1, 4))
    return xv, gx, a
'''


def test_the_parts_of_meshgrid_are_where_its_tensors_are():
    analysis = analysis_of(GRID)
    func = next(f for f in analysis.collected.functions if f.name == "grid")
    returned = func.node.body.body[-1].body[0].value.elements
    xv, gx, a = (element.value for element in returned)
    assert analysis.on_cpu(xv, func.scope) is not None
    assert analysis.on_accelerator(xv, func.scope) is None
    assert analysis.on_accelerator(gx, func.scope) is not None
    assert analysis.on_cpu(gx, func.scope) is None
    assert analysis.on_cpu(a, func.scope) is not None


DEVICE_NAMES = """\
import torch
import torch.nn as nn


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def parts(self, x):
        return self.proj(x), x.size(0)

    def forward(self, x, use_ssim):
        spec_loss, ssim_loss = 0, 0
        if use_ssim:
            spec_loss = self.proj(x)
        mag, count = self.parts(x)
        return spec_loss, mag, count
"""


def test_names_on_the_module_device_through_tuples():
    """A name a tuple of numbers starts (``spec_loss, ssim_loss = 0, 0``) and a later
    assignment puts on the device is there; so is an item of the tuple a method returns where
    it computed it there (``mag, count = self.parts(x)``), not its number."""
    analysis = analysis_of(DEVICE_NAMES)
    (loss,) = analysis.collected.classes
    state = analysis.module_state(loss)
    names = analysis.modules.on_module_device(state, loss.methods["forward"]).names
    assert {"spec_loss", "mag"} <= names and not {"ssim_loss", "count"} & names


def test_fixed_paths_are_what_no_run_chooses():
    """``Targets.fixed_path``: the relative path of a checkpoint a project may ship, and
    whether it is relative to the file's own folder; None where a run chooses it."""
    analysis = analysis_of("""
        import os
        import torch
        from pathlib import Path

        HERE = os.path.dirname(os.path.abspath(__file__))
        NAME = "models/a.pt"

        def load(args, d):
            torch.load(os.path.join(HERE, "models", "b.pt"))
            torch.load(NAME)
            torch.load(Path(__file__).resolve().parent / "c" / "d.pt")
            torch.load(str(Path(__file__).parent / "e.pt"))
            torch.load("./data/f.pth")
            torch.load("models/" + "g.pt")
            torch.load(args.checkpoint)
            torch.load(os.path.join(d, "h.pt"))
            torch.load("/data/i.pt")
            torch.load("../j.pt")
            torch.load(os.path.join(HERE, "..", "k.pt"))
            torch.load(os.path.join(HERE, "l.pt", extra=1))
        """, facts=frozenset(("targets", "kinds")))
    sites = sorted(analysis.call_sites({"load"}, ()), key=lambda site: site.order)
    found = [analysis.targets.fixed_path(site.call.args[0].value, site.ctx.scope,
                                         analysis.kinds.qualname) for site in sites]
    assert found == [("models/b.pt", True), ("models/a.pt", False), ("c/d.pt", True),
                     ("e.pt", True), ("./data/f.pth", False), ("models/g.pt", False),
                     None, None, None, None, None, None]


def test_released_urls_of_tables_and_a_table_with_an_unknown_host_is_reported():
    """``Targets.released_urls``: every URL a subscript of a dict display may give; TDL003
    stays silent only when each is a known CPU release (fixtures/TDL003/negative/
    release_tables.py), and reports a table that also names another host."""
    source = textwrap.dedent("""
        import torch.utils.model_zoo as model_zoo

        model_urls = {
            "resnet18": "https://download.pytorch.org/models/resnet18-5c106cde.pth",
            "dla34": "http://dl.yf.io/dla/models/imagenet/dla34-ba72cf86.pth",
        }
        nested = {"a": {"b": {"url": "https://download.pytorch.org/models/x.pth"}}, "c": 3}

        def weights(name, key):
            model_zoo.load_url(model_urls[name])
            model_zoo.load_url(model_urls["resnet18"])
            model_zoo.load_url(nested["a"][key]["url"])
            model_zoo.load_url(nested[key]["url"])
        """)
    analysis = analysis_of(source, facts=frozenset(("targets", "kinds")))
    sites = sorted(analysis.call_sites({"load_url"}, ()), key=lambda site: site.order)
    found = [analysis.targets.released_urls(site.call.args[0].value, site.ctx.scope)
             for site in sites]
    assert found == [["https://download.pytorch.org/models/resnet18-5c106cde.pth",
                      "http://dl.yf.io/dla/models/imagenet/dla34-ba72cf86.pth"],
                     ["https://download.pytorch.org/models/resnet18-5c106cde.pth"],
                     ["https://download.pytorch.org/models/x.pth"],
                     None]  # ("c" is no table: nothing known)
    from torchdevlint.rules import RULES_BY_CODE
    reported = [(f.line, f.code) for f in
                lint_source(source, "w.py", [RULES_BY_CODE["TDL003"]]).findings]
    assert reported == [(11, "TDL003"), (14, "TDL003")]
