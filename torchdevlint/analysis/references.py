"""Where a module names a name: one walk of the whole module, shared by every question of the
form "is this name referenced anywhere but here" (``Guards._only_referenced_at``: is a helper
only called where a guard holds; TDL010: is a function only called where grad is on).

Each of those questions used to walk the module itself; on torch's ``testing``, ``_dynamo``,
``distributed`` and ``nn`` the two walks were 1.8 and 3.2 s of a 78 s profile. Most questions
are answered without any walk, from the text's word counts (``Analysis.mentions``); this index
is for the rest, and it is built once per file.
"""
from collections import Counter
from typing import Dict, List, Optional, Set

import libcst as cst

from torchdevlint.analysis.builder import string_value, walk_code
from torchdevlint.textsearch import identifiers


_DOCUMENTED = (cst.Module, cst.FunctionDef, cst.ClassDef)


class References:
    """``names``: name -> ids of the Name nodes that read or bind it (definitions, calls,
    attributes' last names); ``strings``: the value of every string literal (``__all__``,
    ``getattr(self, "name")``); ``string_words``: how often each identifier appears as a word of
    a string that is not a docstring (``getattr(self, f"train_{phase}")`` names ``train``)."""

    __slots__ = ("names", "strings", "string_words")

    def __init__(self, module: cst.Module) -> None:
        self.names: Dict[str, List[int]] = {}
        self.strings: Set[str] = set()
        self.string_words: Counter = Counter()
        docstrings = set()  # (prose: a function a docstring names is not used by it)
        # (dispatch on the node's class: ``isinstance`` with libcst's abstract classes went
        # through the ABC machinery for every node of the module)
        for node in walk_code(module, into_functions=True):
            cls = type(node)
            if cls is cst.Name:
                self.names.setdefault(node.value, []).append(id(node))
            elif cls in _DOCUMENTED:
                docstring = docstring_node(node)
                if docstring is not None:
                    docstrings.add(id(docstring))
            elif cls is cst.SimpleString or cls is cst.ConcatenatedString \
                    or cls is cst.FormattedStringText:
                if cls is not cst.FormattedStringText:
                    value = string_value(node)
                    if value is not None:
                        self.strings.add(value)
                if cls is not cst.ConcatenatedString and id(node) not in docstrings:
                    self.string_words.update(identifiers(node.value))

    def uses(self, name: str) -> int:
        """How often the module names ``name``: as a name or attribute, or as a word of a
        string that is not a docstring."""
        return len(self.names.get(name, ())) + self.string_words[name]


def docstring_node(node) -> Optional[cst.SimpleString]:
    """The string of the docstring of a module, class or function, if it has one."""
    body = node.body if isinstance(node, cst.Module) else node.body.body \
        if isinstance(node.body, cst.IndentedBlock) else ()
    if not body or not isinstance(body[0], cst.SimpleStatementLine) or not body[0].body:
        return None
    first = body[0].body[0]
    if isinstance(first, cst.Expr) and isinstance(first.value, cst.SimpleString):
        return first.value
    return None
