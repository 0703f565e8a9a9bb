"""What a rule is: a small class with its code, its message and a check over the analysis."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterator, Optional

import libcst as cst

from torchdevlint.analysis import Analysis


@dataclass
class Violation:
    """A finding before positions are known: the node it points at and its message."""

    node: cst.CSTNode
    message: str
    fix: Optional[Any] = field(default=None)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, as in ruff
    summary: ClassVar[str]  # one line, for --list-rules
    # Prefilter: a file whose text this pattern does not match cannot hold a finding of this
    # rule, so it is not parsed at all when only such rules are selected.
    required_text: ClassVar[str]

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        raise NotImplementedError


_SNIPPET = cst.Module(body=[])


def source_of(node: cst.CSTNode, limit: int = 40) -> str:
    """Short source text of an expression, for messages."""
    text = " ".join(_SNIPPET.code_for_node(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
