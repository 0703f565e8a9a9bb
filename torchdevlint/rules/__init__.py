"""The rule registry: every rule, in code order.

Rules are found, not listed: every module ``tdlNNN_*.py`` in this package is imported and its
``Rule`` subclasses with a code are registered. Adding a rule is adding its module (with its
fix and its examples), its page under docs/rules/ and its runtime proof; nothing here changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Dict, Sequence

from torchdevlint.rules.base import Rule, Violation


def _discover() -> Sequence[type]:
    found = {}
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("tdl"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule \
                    and value.__module__ == module.__name__ and getattr(value, "code", None):
                if value.code in found:
                    raise ImportError(f"two rules have the code {value.code}: "
                                      f"{found[value.code].__name__} and {value.__name__}")
                found[value.code] = value
    return tuple(found[code] for code in sorted(found))


ALL_RULES: Sequence[type] = _discover()
RULES_BY_CODE: Dict[str, type] = {rule.code: rule for rule in ALL_RULES}
# The rules that run when nothing names them (``Rule.default_enabled``); the others are opt-in.
DEFAULT_RULES: Sequence[type] = tuple(rule for rule in ALL_RULES if rule.default_enabled)
OPT_IN_CODES = frozenset(rule.code for rule in ALL_RULES if not rule.default_enabled)


__all__ = ["ALL_RULES", "DEFAULT_RULES", "OPT_IN_CODES", "RULES_BY_CODE", "Rule", "Violation"]
