"""Questions about a file's text, asked before (or instead of) a parse: the one place that
searches source text with regular expressions. The rules declare what they look for (the
patterns of ``required_text``, the names below); they search no text themselves
(``tests/test_torch_names_in_one_place.py``)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Optional, Pattern, Set

# What Python allows between two tokens: whitespace, line continuations and comments. (A
# comment must end in a newline to be followed by a token; requiring it keeps the pattern
# linear: a comment cannot be split into several.)
TOKEN_GAP = r"(?:[\s\\]|#[^\r\n]*[\r\n])*"

_FROM_TORCH_IMPORT = re.compile(r"\bfrom\s+torch\s+import\b")


def method_call_text(*names: str) -> str:
    """Text of a call of one of these methods: ``x.to(``, ``x . cuda  (``."""
    return rf"\.{TOKEN_GAP}(?:{'|'.join(names)})\b{TOKEN_GAP}\("


# A CUDA tensor type (``torch.cuda.FloatTensor``): ``x.type(torch.cuda.FloatTensor)`` moves
# ``x`` as ``x.cuda()`` does (``Placement.device_of_move``), so a rule that needs a move in
# the file finds one in this text too.
CUDA_TENSOR_TYPE_TEXT = rf"\bcuda{TOKEN_GAP}\.{TOKEN_GAP}[A-Z][A-Za-z]*Tensor\b"


def words(names: Iterable[str], alternative: str = "") -> Pattern:
    """A pattern that finds any of these names as a word (or the text ``alternative``)."""
    pattern = r"\b(?:%s)\b" % "|".join(sorted(names))
    return re.compile(pattern + ("|" + alternative if alternative else ""))


def method_calls(names: Iterable[str], alternative: str = "") -> Pattern:
    """A pattern that finds a call of one of these methods (or the text ``alternative``)."""
    return re.compile(method_call_text(*sorted(names)) + ("|" + alternative if alternative else ""))


_IDENTIFIER = re.compile(r"\w+")


def identifiers(text: str) -> list:
    """The words of ``text``: its maximal runs of letters, digits and underscores. Every name
    the code of ``text`` refers to is one of them (``x.train(`` holds ``train``)."""
    return _IDENTIFIER.findall(text)


def word_counts(text: str) -> Counter:
    """How often each word of ``text`` appears (``identifiers``), in code, strings and
    comments alike: at least as often as the code refers to each name (``Analysis.mentions``).
    One pass over the text for every name asked about. (A regular expression for the word,
    compiled per name, cost 10 ms a question on torch's largest files, more than the walk it
    spares; a substring count, ``text.count(name)``, also counted ``train`` in every
    ``train_loader`` and ``pretrained``, and so spared the walk less often.)"""
    return Counter(identifiers(text))


# ``requires_grad = False`` in a file's text, parenthesised or continued too (TDL010: a file
# that freezes parameters)
_ASSIGNS_REQUIRES_GRAD_FALSE = re.compile(r"requires_grad\s*=[\s(\\]*False\b")


def assigns_requires_grad_false(text: str) -> bool:
    return _ASSIGNS_REQUIRES_GRAD_FALSE.search(text) is not None


_GPU_WORDS = re.compile(r"\b(gpus?|cuda)\b", re.IGNORECASE)


def names_a_gpu(prose: str) -> bool:
    """Whether prose (a README, a notebook's markdown) names a GPU or CUDA: what a project or
    a notebook that never chooses its device says of the machines it runs on."""
    return _GPU_WORDS.search(prose) is not None


# A sentence that states a GPU requirement (issue 28, the GPU-only criterion's README part):
# a need for a GPU ("requires an NVIDIA GPU", "you'll also need an NVIDIA GPU and NCCL", "a
# GPU is required"), what it runs on ("runs on a GPU with at least 10GB VRAM", "1+ high-end
# NVIDIA GPU", "GPUs with at least 12 GB of memory"). Not a mention of GPU memory, of
# multi-GPU support or of how many GPUs a run used ("on 8 GPUs for 100 epochs"), and not a
# sentence that names the CPU (it says what runs where) or negates the need.
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]|\n|$)")
_GPU = r"(?:gpus?|cuda|nvidia)\b"
_GPU_REQUIREMENT = re.compile(
    r"\b(?:requires?|need|needs|must\s+have)\s+(?:an?|one|at\s+least|\d+)\b[^.]{0,30}?\b" + _GPU
    + r"|\b(?:gpus?|cuda)\b[^.]{0,20}?\b(?:is|are)\s+(?:required|needed|necessary)\b"
    + r"|\bruns?\s+on\s+(?:an?|one|\d+)\s+(?:[\w-]+\s+){0,2}?gpus?\b"
    + r"|\bgpus?\s+with\s+at\s+least\b"
    + r"|(?<![\w-])\d+\s*\+\s+(?:high-end\s+)?(?:nvidia\s+)?gpus?\b",
    re.IGNORECASE)
_NOT_ONLY_GPU = re.compile(r"\bcpus?\b|\bmps\b|\bnot\b|\bno\b|n't\b|\bwithout\b",
                           re.IGNORECASE)


def states_a_gpu_requirement(prose: str) -> Optional[str]:
    """The first sentence of prose (a README) that says the code needs a GPU or CUDA, or
    None: stronger than ``names_a_gpu``, which any mention of a GPU satisfies."""
    for match in _SENTENCE.finditer(prose):
        sentence = match.group(0)
        if _GPU_REQUIREMENT.search(sentence) and not _NOT_ONLY_GPU.search(sentence):
            return " ".join(sentence.split())
    return None


def imports_from_torch(source: str) -> bool:
    """Whether the text may hold ``from torch import ...``."""
    return _FROM_TORCH_IMPORT.search(source) is not None


_CLASS_NAME = re.compile(r"\s*class\s+(\w+)")


def constructs_class(class_text: str, text: str) -> bool:
    """Whether ``text`` calls the class whose source is ``class_text`` (its name and ``(``)."""
    match = _CLASS_NAME.match(class_text)
    return match is not None and re.search(rf"\b{match.group(1)}{TOKEN_GAP}\(", text) is not None


def attribute_mentions(text: str, owner: str, names: Iterable[str], suffix: str = "") -> Set[str]:
    """Which of ``names`` the text mentions as ``owner.NAME`` (followed by the pattern
    ``suffix``)."""
    pattern = r"\b%s\s*\.\s*(%s)\b%s" % (
        re.escape(owner), "|".join(map(re.escape, sorted(names))), suffix)
    return {match.group(1) for match in re.finditer(pattern, text)}


# -- the rules' required text, searched fast ----------------------------------------------------

class TextTest:
    """Whether a text holds a match of a rule's ``required_text`` pattern
    (``found(text)``), the same answer as ``re.search``, found sooner.

    Python's regular expressions find a pattern that starts with a literal by a fast scan for
    that literal; a leading ``\\b`` or an alternation of branches turns the scan off, and the
    pattern is tried at every position of the text. On torch's ``testing``, ``_dynamo``,
    ``distributed`` and ``nn`` (727 files) ``\\bcurrent_accelerator\\b`` took 0.40 s and
    ``current_accelerator\\b`` 0.015 s; the rules' patterns together took 3.2 s of a 34 s run.
    So each top-level branch of the pattern is searched on its own, and a branch that starts
    with ``\\b`` and then a word character is searched without the ``\\b``, each match's
    start then checked to follow no word character (the next search starts one character
    later, so an overlapping match is not lost)."""

    __slots__ = ("pattern", "_branches")

    def __init__(self, text: str) -> None:
        self.pattern = re.compile(text)
        flags, body = _inline_flags(text)
        self._branches = []
        for branch in _top_level_branches(body):
            bounded = branch.startswith(r"\b") and _starts_with_word_character(branch[2:])
            self._branches.append((re.compile(flags + (branch[2:] if bounded else branch)),
                                   bounded))

    def found(self, text: str) -> bool:
        for compiled, bounded in self._branches:
            if not bounded:
                if compiled.search(text) is not None:
                    return True
                continue
            match = compiled.search(text)
            while match is not None:
                start = match.start()
                if start == 0 or not _is_word_character(text[start - 1]):
                    return True
                match = compiled.search(text, start + 1)
        return False


def _is_word_character(char: str) -> bool:
    return char.isalnum() or char == "_"


def _inline_flags(text: str):
    """``(?i)`` and the rest of the pattern."""
    match = re.match(r"\(\?[aiLmsux]+\)", text)
    return (match.group(), text[match.end():]) if match else ("", text)


def _structure(text: str):
    """(index, character) of each character of pattern ``text`` that gives it structure: not
    escaped, and not inside a character class (``[|)]``, ``[]...]``, ``[^]...]``)."""
    i, in_class = 0, False
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if text[i + 1:i + 2] == "]" or text[i + 1:i + 3] == "^]":
                i += 2 if text[i + 1] == "]" else 3  # a literal first bracket
                continue
        else:
            yield i, char
        i += 1


def _top_level_branches(text: str) -> list:
    """The pattern's alternatives at the top level (not inside a group or a character class),
    or the pattern whole."""
    branches, depth, start = [], 0, 0
    for i, char in _structure(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            branches.append(text[start:i])
            start = i + 1
    branches.append(text[start:])
    return branches


def _starts_with_word_character(text: str) -> bool:
    """Whether every match of ``text`` starts with a word character: a letter, a digit or an
    underscore, or a non-capturing group, not optional, each of whose branches starts with
    one."""
    if not text:
        return False
    if text[0].isalnum() or text[0] == "_":
        return True
    if not text.startswith("(?:"):
        return False
    depth = 0
    for i, char in _structure(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                break
    else:
        return False  # (unbalanced: not a pattern re compiles)
    quantified = text[i + 1:i + 2] in ("?", "*", "{")
    return not quantified and all(
        branch and (branch[0].isalnum() or branch[0] == "_")
        for branch in _top_level_branches(text[3:i]))
