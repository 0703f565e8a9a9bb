"""TDL012 (issue 28): a dereferenced ``torch.accelerator.current_accelerator()``, the guards
that silence it (each shown to matter: the same code without it is flagged), its fix, and what
TDL002 says about the ``"cuda"`` fallback of ``hasattr(torch, "accelerator")``."""
from __future__ import annotations

import ast
import textwrap

import pytest

from torchdevlint.engine import lint_source
from torchdevlint.applier import fix_source
from torchdevlint.fixes import FixOptions
from torchdevlint.rules import DEFAULT_RULES, RULES_BY_CODE

TDL012 = RULES_BY_CODE["TDL012"]
HASATTR_IDIOM = ('import torch\n'
                 'device = torch.accelerator.current_accelerator().type '
                 'if hasattr(torch, "accelerator") else "cuda"\n'
                 'x = torch.zeros(2, device=device)\n')


def findings(source: str, rules=(TDL012,), torch_version=(2, 0)) -> list:
    result = lint_source(textwrap.dedent(source), "snippet.py", rules, torch_version=torch_version)
    assert result.error is None, result.error
    return [(f.code, f.line, f.column) for f in result.findings]


def fixed(source: str, unsafe: bool = False) -> str:
    result = fix_source(textwrap.dedent(source), "snippet.py", DEFAULT_RULES,
                        FixOptions(unsafe=unsafe))
    assert result.error is None, result.error
    return result.fixed


# (guarded, the same code without the guard): the first is silent, the second flagged
GUARDS = {
    "is_available ternary": (
        "import torch\nd = torch.accelerator.current_accelerator().type "
        "if torch.accelerator.is_available() else 'cpu'\n",
        "import torch\nd = torch.accelerator.current_accelerator().type if True else 'cpu'\n"),
    "if block": (
        "import torch\nif torch.accelerator.is_available():\n"
        "    d = torch.accelerator.current_accelerator().type\n",
        "import torch\nif torch.backends.cudnn.enabled:\n"
        "    d = torch.accelerator.current_accelerator().type\n"),
    "early exit": (
        "import torch\n\n\ndef f():\n    if not torch.accelerator.is_available():\n        return 'cpu'\n"
        "    return torch.accelerator.current_accelerator().type\n",
        "import torch\n\n\ndef f():\n    if not torch.backends.cudnn.enabled:\n        return 'cpu'\n"
        "    return torch.accelerator.current_accelerator().type\n"),
    "assert": (
        "import torch\nassert torch.accelerator.device_count() > 0\n"
        "d = torch.accelerator.current_accelerator().type\n",
        "import torch\nassert torch.get_num_threads() > 0\n"
        "d = torch.accelerator.current_accelerator().type\n"),
    "availability in a name": (
        "import torch\nok = hasattr(torch, 'accelerator') and torch.accelerator.is_available()\n"
        "d = torch.accelerator.current_accelerator().type if ok else 'cpu'\n",
        "import torch\nok = hasattr(torch, 'accelerator')\n"
        "d = torch.accelerator.current_accelerator().type if ok else 'cpu'\n"),
    "is not None": (
        "import torch\nacc = torch.accelerator.current_accelerator()\n"
        "if acc is not None:\n    print(acc.type)\n",
        "import torch\nacc = torch.accelerator.current_accelerator()\nprint(acc.type)\n"),
    "truthiness": (
        "import torch\nacc = torch.accelerator.current_accelerator()\nd = acc.type if acc else 'cpu'\n",
        "import torch\nacc = torch.accelerator.current_accelerator()\nd = acc.type\n"),
    "walrus": (
        "import torch\nif (acc := torch.accelerator.current_accelerator()):\n    print(acc.type)\n",
        "import torch\nprint((acc := torch.accelerator.current_accelerator()).type)\n"),
    "rebound": (
        "import torch\nacc = torch.accelerator.current_accelerator()\n"
        "acc = acc or torch.device('cpu')\nprint(acc.type)\n",
        "import torch\nacc = torch.accelerator.current_accelerator()\nprint(acc.type)\n"),
    "or a default": (
        "import torch\nd = (torch.accelerator.current_accelerator() or torch.device('cpu')).type\n",
        "import torch\nd = (torch.accelerator.current_accelerator()).type\n"),
    "try AttributeError": (
        "import torch\ntry:\n    d = torch.accelerator.current_accelerator().type\n"
        "except AttributeError:\n    d = 'cpu'\n",
        "import torch\ntry:\n    d = torch.accelerator.current_accelerator().type\n"
        "except KeyError:\n    d = 'cpu'\n"),
    "pytest.raises": (
        "import pytest\nimport torch\n\n\ndef test_none():\n    with pytest.raises(AttributeError):\n"
        "        torch.accelerator.current_accelerator().type\n",
        "import pytest\nimport torch\n\n\ndef test_none():\n    with pytest.warns(UserWarning):\n"
        "        torch.accelerator.current_accelerator().type\n"),
    "skip decorator": (
        "import pytest\nimport torch\n\n\n"
        "@pytest.mark.skipif(not torch.accelerator.is_available(), reason='no accelerator')\n"
        "def test_type():\n    assert torch.accelerator.current_accelerator().type\n",
        "import pytest\nimport torch\n\n\n@pytest.mark.slow\n"
        "def test_type():\n    assert torch.accelerator.current_accelerator().type\n"),
    "helper only called guarded": (
        "import torch\n\n\ndef _name():\n    return torch.accelerator.current_accelerator().type\n\n\n"
        "if torch.accelerator.is_available():\n    print(_name())\n",
        "import torch\n\n\ndef _name():\n    return torch.accelerator.current_accelerator().type\n\n\n"
        "print(_name())\n"),
    "fixture only GPU tests request": (
        "import pytest\nimport torch\n\n\n@pytest.fixture\ndef onload():\n"
        "    return torch.accelerator.current_accelerator().type\n\n\n"
        "@requires_gpu\ndef test_onload(onload):\n    assert onload\n",
        "import pytest\nimport torch\n\n\n@pytest.fixture\ndef onload():\n"
        "    return torch.accelerator.current_accelerator().type\n\n\n"
        "def test_onload(onload):\n    assert onload\n"),
    "fixture requested nowhere here (conftest.py)": (
        "import pytest\nimport torch\n\n\n@pytest.fixture\ndef onload():\n"
        "    return torch.accelerator.current_accelerator().type\n",
        "import pytest\nimport torch\n\n\n@pytest.fixture(autouse=True)\ndef onload():\n"
        "    return torch.accelerator.current_accelerator().type\n"),
}


@pytest.mark.parametrize("guarded, unguarded", GUARDS.values(), ids=list(GUARDS))
def test_a_guard_silences_and_its_absence_is_flagged(guarded, unguarded):
    assert findings(guarded) == []
    assert [code for code, _, _ in findings(unguarded)] == ["TDL012"]


def test_the_message_names_the_dereference_and_the_missing_check():
    result = lint_source("import torch\nacc = torch.accelerator.current_accelerator()\n"
                         "print(acc.index)\n", "snippet.py", (TDL012,))
    (finding,) = result.findings
    assert (finding.line, finding.column) == (3, 11)
    assert "`acc.index` dereferences `acc`, which holds `torch.accelerator.current_accelerator()`" \
        in finding.message
    assert "without a `torch.accelerator.is_available()` check" in finding.message
    assert "AttributeError: 'NoneType' object has no attribute 'index'" in finding.message


def test_only_torch_accelerator_current_accelerator_counts():
    assert findings("def f(state):\n    return state.current_accelerator().type\n") == []
    assert findings("import torch as T\nprint(T.accelerator.current_accelerator().type)\n") == \
        [("TDL012", 2, 43)]


# -- the fix --------------------------------------------------------------------------------

def test_the_fix_falls_back_to_the_cpu_in_the_file_quote_style():
    single = "import torch\nname = 'x'\nd = torch.accelerator.current_accelerator().type\n"
    assert fixed(single) == ("import torch\nname = 'x'\nd = (torch.accelerator.current_accelerator() "
                             "or torch.device('cpu')).type\n")
    double = 'import torch\nname = "x"\nd = torch.accelerator.current_accelerator().type\n'
    assert fixed(double).endswith('or torch.device("cpu")).type\n')


def test_the_fix_of_a_name_a_walrus_and_a_file_without_import_torch():
    assert fixed("import torch\nacc = torch.accelerator.current_accelerator()\nprint(acc.type)\n") \
        .endswith('print((acc or torch.device("cpu")).type)\n')
    out = fixed("from torch.accelerator import current_accelerator\n"
                "print((acc := current_accelerator()).type)\n")
    assert out == ("from torch.accelerator import current_accelerator\nimport torch\n"
                   'print(((acc := current_accelerator()) or torch.device("cpu")).type)\n')


@pytest.mark.parametrize("source", [guarded for guarded, _ in GUARDS.values()] +
                         [unguarded for _, unguarded in GUARDS.values()])
def test_the_fix_is_safe_parses_and_leaves_nothing(source):
    out = fixed(source)  # safe fixes only
    ast.parse(out)
    assert findings(out) == []


def test_the_fixed_code_runs_without_an_accelerator():
    torch = pytest.importorskip("torch")
    if torch.accelerator.current_accelerator() is not None:
        pytest.skip("this torch is built with an accelerator")
    source = "import torch\nacc = torch.accelerator.current_accelerator()\nd = acc.type\n"
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'type'"):
        exec(source, {})
    scope: dict = {}
    exec(fixed(source), scope)
    assert scope["d"] == "cpu"


# -- the "cuda" fallback of hasattr(torch, "accelerator"), TDL002's --------------------------

def test_tdl002_reports_the_fallback_only_where_the_project_torch_may_lack_the_api():
    both = (RULES_BY_CODE["TDL002"], TDL012)
    before_26 = findings(HASATTR_IDIOM, both, torch_version=(2, 0))
    assert sorted(code for code, _, _ in before_26) == ["TDL002", "TDL012"]
    assert ("TDL002", 2, 93) in before_26  # the "cuda" literal
    assert findings(HASATTR_IDIOM, both, torch_version=(2, 6)) == \
        [code for code in before_26 if code[0] == "TDL012"]  # dead code from torch 2.6 on


def test_a_negated_api_test_makes_the_body_the_dead_branch():
    source = ('import torch\n'
              'device = "cuda" if not hasattr(torch, "accelerator") else "cpu"\n'
              'x = torch.zeros(2, device=device)\n')
    tdl002 = (RULES_BY_CODE["TDL002"],)
    assert findings(source, tdl002, torch_version=(2, 0)) == [("TDL002", 2, 10)]
    assert findings(source, tdl002, torch_version=(2, 6)) == []


def test_a_try_catching_attribute_error_guards_no_cuda_code():
    """The AttributeError guard is TDL012's: CUDA failures raise other errors."""
    source = ("import torch\ntry:\n    x = torch.zeros(2, device='cuda')\n"
              "except AttributeError:\n    x = None\n")
    assert [code for code, _, _ in findings(source, (RULES_BY_CODE["TDL002"],))] == ["TDL002"]
