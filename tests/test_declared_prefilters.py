"""Prefilters as declared data (issue 26): a rule names the calls a file must make for it to
report (``required_calls``), and the engine checks them against the one index of the file's
ast that every ast prefilter reads, before the rule's finer ``could_report_in``."""
from __future__ import annotations

import ast

from torchdevlint import engine
from torchdevlint.rules import RULES_BY_CODE, registry
from torchdevlint.rules.prefilter import forget_walk, has_ast_prefilter, passes_ast_prefilter


def candidates(source: str, code: str) -> list:
    info = RULES_BY_CODE[code]
    return [rule.code for rule in engine.candidate_rules(source, [info], ast.parse(source))]


def test_tdl003_is_prefiltered_by_its_declared_calls_and_map_location():
    info = RULES_BY_CODE["TDL003"]
    assert info.required_calls == ("load", "load_state_dict_from_url", "load_url")
    assert info.could_report_in is not None and has_ast_prefilter(info)
    # the text says torch and load, the ast has no call of it: not parsed
    assert candidates("import torch\n# torch.load(path) is documented here\n", "TDL003") == []
    assert candidates("import torch\nstate = torch.load(path)\n", "TDL003") == ["TDL003"]
    # an import alias of a declared name is a call of it
    assert candidates("from torch import load as L\nstate = L(path)\n", "TDL003") == ["TDL003"]
    assert candidates("import torch.jit as J\nm = J.load(path)\n", "TDL003") == ["TDL003"]
    # a load not reached through torch, or given map_location (or maybe, through **kwargs)
    assert candidates("import json\nimport torch\nconfig = json.load(f)\n", "TDL003") == []
    assert candidates("import torch\ns = torch.load(p, map_location='cpu')\n", "TDL003") == []
    assert candidates("import torch\ns = torch.load(p, **options)\n", "TDL003") == []


def test_declared_calls_come_before_the_finer_test():
    info = RULES_BY_CODE["TDL012"]
    assert info.required_calls == ("current_accelerator",)
    no_call = ast.parse("import torch\nx = current_accelerator.type\n")
    try:
        assert not passes_ast_prefilter(info, no_call, "")
        called = ast.parse("import torch\nx = torch.accelerator.current_accelerator().type\n")
        assert passes_ast_prefilter(info, called, "")
    finally:
        forget_walk()


def test_the_catalog_carries_the_declared_calls():
    for code, rule in registry.classes_by_code().items():
        assert RULES_BY_CODE[code].required_calls == tuple(rule.required_calls)
