"""What a fix is, and what a rule builds one with: the fix model (``fixes.model``: edits,
fixes, plans, options; plain data that findings and the cache carry) and the context a rule's
``FixPlan`` builds its edits in (``fixes.context``). Each rule's fix lives with the rule.

Applying fixes is not here: the loop that lints, builds and applies fixes until nothing changes
is ``torchdevlint.applier``, above the engine, beside the fix command (``torchdevlint.fixer``).
"""

from torchdevlint.fixes.model import AppliedFix, Edit, EditLocation, Fix, FixOptions, FixPlan, \
    FixResult

__all__ = ["AppliedFix", "Edit", "EditLocation", "Fix", "FixOptions", "FixPlan", "FixResult"]
