"""Fixes as reports and the cache keep them: built once per file whatever the configuration
says (``EVERY_FIX``, by ``engine.attach_located_fixes``), placed in the file's rows and columns, and narrowed to the configuration
when reported (``resolve``). So a cached result answers every output format and every
fixable / unfixable / unsafe-fixes setting without parsing the file again.

Importing this module is cheap (no LibCST): a run answered from the cache resolves fixes
with it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import List, Optional

from torchdevlint.findings import Finding
from torchdevlint.fixes.model import Fix, FixOptions


def resolve(findings: List[Finding], options: FixOptions) -> List[Finding]:
    """The findings with their fixes as ``options`` (one file's configuration) allow them:
    none for a rule that is not fixable, ``applicable`` (``[*]``) only where plain ``--fix``
    applies it."""
    out = []
    for finding in findings:
        fix: Optional[Fix] = finding.available_fix
        if fix is not None:
            if not options.allows(replace(fix, safe=True)):
                finding = replace(finding, available_fix=None)
            elif fix.applicable != options.allows(fix):
                finding = replace(finding, available_fix=replace(fix, applicable=not fix.applicable))
        out.append(finding)
    return out
