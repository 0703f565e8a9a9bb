"""Test code: whether a file is a pytest or unittest module, and whether a point in it is test
code (a test, its helpers and fixtures), asked by the rules that stay silent there."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchdevlint.analysis.builder import Collected, has_main_entry
from torchdevlint.analysis.model import Ctx, last_name

_TEST_FRAMEWORKS = ("pytest", "unittest")


def is_test_module(collected: Collected, path: Optional[str] = None) -> bool:
    """A pytest or unittest module: it imports either (``import pytest``, ``from unittest
    import mock``), or pytest collects it without (``collected_by_pytest``). A ``test_*``
    function alone does not make one: scripts name functions so (``def test_on_image(path)``
    called from ``__main__``)."""
    return any(framework in collected.module_scope.bindings for framework in _TEST_FRAMEWORKS) \
        or any(name.startswith(_TEST_FRAMEWORKS) for name in collected.imported_as) \
        or (path is not None and collected_by_pytest(collected, path))


def collected_by_pytest(collected: Collected, path: str) -> bool:
    """A file pytest's default discovery runs though it imports no test framework: named
    ``test_*.py`` or ``*_test.py``, in a ``tests`` (or ``test``) folder, with a top-level
    ``test*`` function, and no ``__main__`` entry point (mammoth's
    ``tests/test_scheduler.py``, plain asserts, is a suite; an evaluation script
    ``tools/test_net.py`` with ``def test(cfg)``, or esm's ``tests/test_readme.py``, whose
    ``__main__`` block runs its comparison too, is a program)."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    if not (name.startswith("test_") and name.endswith(".py") or name.endswith("_test.py")):
        return False
    if not any(part in ("tests", "test") for part in parts[:-1]):
        return False
    if not any(info.cls is None and info.ctx.func is None and info.name.startswith("test")
               for info in collected.functions):
        return False
    return not has_main_entry(collected.module_scope.node)


def in_test_code(collected: Collected, ctx: Ctx) -> bool:
    """Code of a test module (the caller asks ``is_test_module``, which may need the file's
    path) that a test runs: in a ``test*`` / ``_test*`` function, a pytest fixture (or a
    function nested in one), or a ``Test*`` class."""
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
