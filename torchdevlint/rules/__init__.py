"""The rule registry: every rule, in code order."""

from __future__ import annotations

from typing import Dict, Iterable, List, Sequence

from torchdevlint.rules.base import Rule, Violation
from torchdevlint.rules.tdl001_discarded_move import DiscardedTensorMove
from torchdevlint.rules.tdl002_hardcoded_cuda import HardcodedCudaDevice
from torchdevlint.rules.tdl003_load_map_location import LoadWithoutMapLocation
from torchdevlint.rules.tdl004_unmoved_batch import UnmovedBatch

ALL_RULES: Sequence[type] = (DiscardedTensorMove, HardcodedCudaDevice, LoadWithoutMapLocation,
                             UnmovedBatch)
RULES_BY_CODE: Dict[str, type] = {rule.code: rule for rule in ALL_RULES}


class UnknownCodeError(ValueError):
    pass


def _matches(code: str, prefixes: Iterable[str]) -> bool:
    return any(code.startswith(prefix) for prefix in prefixes)


def select_rules(select: Iterable[str] = ("TDL",), ignore: Iterable[str] = ()) -> List[type]:
    """Rules whose code starts with a ``select`` prefix and with no ``ignore`` prefix.

    A prefix that matches no rule is an error: a typo must not silently disable linting.
    """
    select, ignore = [s.strip().upper() for s in select if s.strip()], \
        [s.strip().upper() for s in ignore if s.strip()]
    for prefix in (*select, *ignore):
        if prefix != "ALL" and not any(code.startswith(prefix) for code in RULES_BY_CODE):
            raise UnknownCodeError(prefix)
    select = ["TDL" if s == "ALL" else s for s in select]
    ignore = ["TDL" if s == "ALL" else s for s in ignore]
    return [rule for rule in ALL_RULES if _matches(rule.code, select) and not _matches(rule.code, ignore)]


__all__ = ["ALL_RULES", "RULES_BY_CODE", "Rule", "Violation", "select_rules", "UnknownCodeError"]
