"""The rule registry: every rule, in code order."""

from __future__ import annotations

from typing import Dict, Sequence

from torchdevlint.rules.base import Rule, Violation
from torchdevlint.rules.tdl001_discarded_move import DiscardedTensorMove
from torchdevlint.rules.tdl002_hardcoded_cuda import HardcodedCudaDevice
from torchdevlint.rules.tdl003_load_map_location import LoadWithoutMapLocation
from torchdevlint.rules.tdl004_unmoved_batch import UnmovedBatch

ALL_RULES: Sequence[type] = (DiscardedTensorMove, HardcodedCudaDevice, LoadWithoutMapLocation,
                             UnmovedBatch)
RULES_BY_CODE: Dict[str, type] = {rule.code: rule for rule in ALL_RULES}


__all__ = ["ALL_RULES", "RULES_BY_CODE", "Rule", "Violation"]
