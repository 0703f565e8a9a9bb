"""Parsing a document again after an edit: only the top-level statements the edit touched.

An editor sends a new version of a document for every keystroke, and a keystroke changes one
top-level statement. LibCST's parse is the largest part of a lint (a third of a 500-line
script's); LibCST trees are immutable and hold no parent links, so every top-level statement
the edit did not touch can be reused as it is, and only the text of the others is parsed.

The previous version's text, tree and the offset at which each top-level statement starts are
kept (one tree per document, replaced by each version: memory does not grow with edits). For
the new text:

- the edit is the span between the longest common prefix and suffix of the two texts;
- the statements it overlaps are parsed again, with one unchanged statement on each side:
  the lines between two statements belong to the first one's block or to the second one's
  leading lines depending on both, so the neighbours are parsed with the edit. A span that
  reaches the first or the last statement runs to the start or the end of the file, so the
  module's header, footer and trailing newline are the parser's own;
- the span is parsed as a module with the file's indentation and newline (a block indented as
  the file's default keeps the default's representation), its leading comment lines (which a
  module takes as its header) go back to its first statement's leading lines, where the whole
  file's parse puts them, and its statements replace the old ones.

The result is the tree a full parse gives, statement for statement (tests/test_reparse.py
checks it on every fixture under random edits); its code is the new text by construction,
which a length check confirms. Anything unexpected (a span with a footer of its own, a
length that does not add up, a parse error) falls back to a full parse.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

import libcst as cst

from torchdevlint.positions import FastCodegenState


@dataclass
class _Parsed:
    text: str
    module: cst.Module
    starts: List[int]  # offset of each top-level statement (its leading lines included)
    body_end: int  # offset after the last statement (where the footer starts)


def _pieces(module: cst.Module, state: FastCodegenState, nodes) -> List[int]:
    """The length of the code of each node, generated in sequence on ``state``."""
    lengths = []
    for node in nodes:
        before = len(state.tokens)
        node._codegen(state)
        lengths.append(sum(len(token) for token in state.tokens[before:]))
    return lengths


def _starts(offset: int, lengths: List[int]) -> Tuple[List[int], int]:
    """Where pieces of these lengths start when the first starts at ``offset``, and where the
    last ends."""
    starts = []
    for length in lengths:
        starts.append(offset)
        offset += length
    return starts, offset


def _common_length(same: Callable[[int], bool], limit: int) -> int:
    """The largest ``n <= limit`` for which ``same(n)`` holds, ``same`` being true up to some
    length and false beyond it: found by halving, each test a slice comparison in C (a loop
    over characters took 24 ms of each edit of a 5,000-line file)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if same(middle):
            low = middle
        else:
            high = middle - 1
    return low


class Reparser:
    """Parses successive versions of one document; ``parse(text)`` is ``cst.parse_module``."""

    def __init__(self) -> None:
        self._last: Optional[_Parsed] = None
        self.reused = 0  # statements reused by the last parse (for tests and benchmarks)

    def parse(self, text: str) -> cst.Module:
        last, self._last, self.reused = self._last, None, 0
        parsed = None
        if last is not None and len(last.module.body) >= 3:
            parsed = self._reparse(last, text)
        if parsed is None:
            parsed = self._full(text)
        self._last = parsed
        return parsed.module

    def _full(self, text: str) -> _Parsed:
        from torchdevlint.engine import _parse
        module = _parse(text)
        state = FastCodegenState(default_indent=module.default_indent,
                                 default_newline=module.default_newline)
        header = sum(_pieces(module, state, module.header))
        starts, end = _starts(header, _pieces(module, state, module.body))
        return _Parsed(text, module, starts, end)

    def _reparse(self, last: _Parsed, text: str) -> Optional[_Parsed]:
        old, module, starts = last.text, last.module, last.starts
        if text == old:
            self.reused = len(module.body)
            return last
        limit = min(len(old), len(text))
        prefix = _common_length(lambda n: old[:n] == text[:n], limit)
        suffix = _common_length(lambda n: old[len(old) - n:] == text[len(text) - n:],
                                limit - prefix)
        changed_end = len(old) - suffix  # the edit is old[prefix:changed_end]
        count = len(module.body)
        ends = starts[1:] + [last.body_end]
        # the statements the edit overlaps (an insertion between two: the one after it)
        first = next((i for i in range(count) if ends[i] > prefix), count)
        last_index = max((i for i in range(count) if starts[i] < max(changed_end, prefix + 1)),
                         default=first)
        first, last_index = first - 1, max(last_index, first) + 1  # one neighbour each side
        if first <= 0:
            first, start = 0, 0  # from the start of the file: the header is the parser's
        else:
            start = starts[first]
        to_end = last_index >= count - 1
        delta = len(text) - len(old)
        end = len(text) if to_end else ends[last_index] + delta
        if not 0 <= start <= prefix or end < start:
            return None
        try:
            span = cst.parse_module(text[start:end], config=cst.PartialParserConfig(
                default_indent=module.default_indent, default_newline=module.default_newline))
        except (cst.ParserSyntaxError, RecursionError):
            return None  # the full parse reports it as it always does
        if not span.body or (span.footer and not to_end) or \
                (not span.has_trailing_newline and not to_end):
            return None
        body = list(span.body)
        if span.header and start > 0:
            body[0] = body[0].with_changes(leading_lines=[*span.header, *body[0].leading_lines])
        reused_before = list(module.body[:first])
        reused_after = [] if to_end else list(module.body[last_index + 1:])
        new_module = module.with_changes(
            header=span.header if start == 0 else module.header,
            body=reused_before + body + reused_after,
            footer=span.footer if to_end else module.footer,
            has_trailing_newline=span.has_trailing_newline if to_end else
            module.has_trailing_newline)
        state = FastCodegenState(default_indent=module.default_indent,
                                 default_newline=module.default_newline)
        if start == 0:
            offset = sum(_pieces(new_module, state, new_module.header))
        else:
            offset = start
        span_starts, offset = _starts(offset, _pieces(new_module, state, body))
        new_starts = starts[:first] + span_starts
        if to_end:
            body_end = offset
            footer = sum(_pieces(new_module, state, new_module.footer))
            expected = len(text) + (0 if new_module.has_trailing_newline or not state.tokens
                                    else len(state.tokens[-1]))
            if offset + footer != expected:
                return None
        else:
            if offset != ends[last_index] + delta:
                return None
            new_starts += [s + delta for s in starts[last_index + 1:]]
            body_end = last.body_end + delta
        self.reused = len(reused_before) + len(reused_after)
        return _Parsed(text, new_module, new_starts, body_end)
