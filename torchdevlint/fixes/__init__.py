"""Autofix: what each rule's fix does (one module per rule) and the loop that applies them.

The entry points take plain data and return plain data (a ``FixResult``), so that a parallel
runner can call them in worker processes.
"""

from torchdevlint.fixes.applier import BUILDERS, MAX_PASSES, fix_bytes, fix_source
from torchdevlint.fixes.model import AppliedFix, Edit, Fix, FixOptions, FixResult

FIXABLE_CODES = frozenset(BUILDERS)

__all__ = ["AppliedFix", "Edit", "Fix", "FixOptions", "FixResult", "FIXABLE_CODES", "MAX_PASSES",
           "fix_bytes", "fix_source"]
