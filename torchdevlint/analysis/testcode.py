"""Test code: whether a file is a pytest or unittest module, and whether a point in it is test
code (a test, its helpers and fixtures), asked by the rules that stay silent there."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchdevlint.analysis.builder import Collected
from torchdevlint.analysis.model import Ctx, last_name

_TEST_FRAMEWORKS = ("pytest", "unittest")


def is_test_module(collected: Collected) -> bool:
    """A pytest or unittest module: it imports either (``import pytest``, ``from unittest
    import mock``). A ``test_*`` function alone does not make one: scripts name functions so
    (``def test_on_image(path)`` called from ``__main__``)."""
    return any(framework in collected.module_scope.bindings for framework in _TEST_FRAMEWORKS) \
        or any(name.startswith(_TEST_FRAMEWORKS) for name in collected.imported_as)


def in_test_code(collected: Collected, ctx: Ctx) -> bool:
    """Code of a test module that a test runs: in a ``test*`` / ``_test*`` function, a pytest
    fixture (or a function nested in one), or a ``Test*`` class."""
    if not is_test_module(collected):
        return False
    func = ctx.func
    while func is not None:
        if func.name.startswith(("test", "_test")) or fixture_decorator(func.node) is not None:
            return True
        func = func.ctx.func
    return ctx.cls is not None and ctx.cls.name.startswith("Test")


def fixture_decorator(node: cst.FunctionDef) -> Optional[cst.BaseExpression]:
    """The ``@pytest.fixture`` (or ``@pytest.fixture(...)``, ``@fixture``) decorator of a def."""
    for decorator in node.decorators:
        expr = decorator.decorator
        callee = expr.func if isinstance(expr, cst.Call) else expr
        if last_name(callee) == "fixture":
            return expr
    return None
