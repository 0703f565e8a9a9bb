"""Autofix: the loop that applies fixes, and what a fix is. Each rule's fix lives with the rule
(a ``FixPlan`` its findings carry); this package only builds and applies them.

The entry points take plain data and return plain data (a ``FixResult``), so that a parallel
runner can call them in worker processes. They are imported on first use: rules import
``fixes.model`` and ``fixes.context``, and the applier imports the engine, which imports the
rules, so importing the applier here would make a circle.
"""

from torchdevlint.fixes.model import AppliedFix, Edit, EditLocation, Fix, FixOptions, FixPlan, \
    FixResult

__all__ = ["AppliedFix", "Edit", "EditLocation", "Fix", "FixOptions", "FixPlan", "FixResult",
           "MAX_PASSES", "fix_bytes", "fix_source"]


def __getattr__(name: str):
    if name in ("MAX_PASSES", "fix_bytes", "fix_source"):
        from torchdevlint.fixes import applier
        return getattr(applier, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
