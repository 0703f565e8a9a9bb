"""The rules: every rule class, in code order.

Rules are found, not listed: every module ``tdlNNN_*.py`` in this package is imported and its
``Rule`` subclasses with a code are registered (``registry``). Adding a rule is adding its
module (with its fix and its examples), its page under docs/rules/ and its runtime proof, and
regenerating the catalog (``python -m torchdevlint.rules.registry``; a test says when).

The names below are imported on first use: the rule classes import LibCST. What only needs to
know the rules (codes, names, prefilters) uses ``registry``'s descriptions instead.
"""

from __future__ import annotations

__all__ = ["ALL_RULES", "DEFAULT_RULES", "OPT_IN_CODES", "RULES_BY_CODE", "Rule", "Violation"]


def __getattr__(name: str):
    if name in ("Rule", "Violation"):
        from torchdevlint.rules import base
        return getattr(base, name)
    if name == "OPT_IN_CODES":
        from torchdevlint.rules.registry import OPT_IN_CODES
        return OPT_IN_CODES
    if name in ("ALL_RULES", "RULES_BY_CODE", "DEFAULT_RULES"):
        from torchdevlint.rules.registry import classes_by_code
        by_code = classes_by_code()
        values = {
            "ALL_RULES": tuple(by_code.values()),
            "RULES_BY_CODE": dict(by_code),
            # The rules that run when nothing names them (``Rule.default_enabled``); the
            # others are opt-in.
            "DEFAULT_RULES": tuple(rule for rule in by_code.values() if rule.default_enabled),
        }
        globals().update(values)  # (computed once: later reads find them as attributes)
        return values[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
