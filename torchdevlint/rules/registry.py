"""Every rule, described without importing it: what the command line needs before a file must
be analysed.

The rule classes import LibCST and the analysis (half a second). A run whose files are all
cached or skipped by the prefilter, ``--version``, ``--list-rules`` and ``--explain`` need only
each rule's code, name, summary, defaults and prefilter: ``RuleInfo`` here. The rule classes
are imported when a file must be analysed (``rule_classes``), and not before.

The rule modules stay the one source of all of it: ``_catalog.py`` is generated from their
classes (``python -m torchdevlint.rules.registry``), and it is checked against them when
they are imported and by the tests, so that a stale copy (a narrower prefilter would lose
findings) cannot go unnoticed.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Callable, Dict, Optional, Sequence, Tuple, Union

from torchdevlint.docs import PAGES, page_text

CATALOG_PATH = Path(__file__).resolve().parent / "_catalog.py"
REGENERATE = "python -m torchdevlint.rules.registry"


class Lazy:
    """A function named by ``module:qualified.name``, imported on its first call: a rule's
    ast prefilter. Compared and pickled by that name."""

    __slots__ = ("reference",)
    _resolved: Dict[str, Callable] = {}

    def __init__(self, reference: str) -> None:
        self.reference = reference

    def resolve(self) -> Callable:
        function = self._resolved.get(self.reference)
        if function is None:
            module, _, qualified = self.reference.partition(":")
            function = importlib.import_module(module)
            for part in qualified.split("."):
                function = getattr(function, part)
            self._resolved[self.reference] = function
        return function

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)

    def __eq__(self, other) -> bool:
        return isinstance(other, Lazy) and other.reference == self.reference

    def __hash__(self) -> int:
        return hash(self.reference)

    def __repr__(self) -> str:
        return f"Lazy({self.reference!r})"

    def __getstate__(self):
        return self.reference

    def __setstate__(self, state) -> None:
        self.reference = state

    @classmethod
    def of(cls, function: Callable) -> "Lazy":
        return cls(f"{function.__module__}:{function.__qualname__}")


@dataclass(frozen=True)
class RuleInfo:
    """What a front end knows of a rule without importing it (the attributes of ``Rule`` of
    the same names); ``rule_classes`` turns it into the rule."""

    code: str
    name: str
    summary: str
    default_enabled: bool
    fixable: bool
    required_text: Union[str, Tuple[str, ...]]
    could_report_in: Optional[Lazy]
    required_calls: Tuple[str, ...] = ()


# -- the rule classes, imported on demand ---------------------------------------------------

_classes: Optional[Dict[str, type]] = None


def _discover() -> Dict[str, type]:
    """Every module ``tdlNNN_*.py`` of this package is imported and its ``Rule`` subclasses
    with a code are the rules: adding a rule is adding its module (and regenerating the
    catalog)."""
    from torchdevlint.rules import base
    package = Path(__file__).resolve().parent
    found: Dict[str, type] = {}
    for info in pkgutil.iter_modules([str(package)]):
        if not info.name.startswith("tdl"):
            continue
        module = importlib.import_module(f"{__package__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, base.Rule) and value is not base.Rule \
                    and value.__module__ == module.__name__ and getattr(value, "code", None):
                if value.code in found:
                    raise ImportError(f"two rules have the code {value.code}: "
                                      f"{found[value.code].__name__} and {value.__name__}")
                found[value.code] = value
    return {code: found[code] for code in sorted(found)}


def describe(rule: type) -> RuleInfo:
    """A rule class's ``RuleInfo``: what the catalog must hold for it."""
    check = rule.could_report_in
    return RuleInfo(**{f.name: getattr(rule, f.name) for f in fields(RuleInfo)
                       if f.name != "could_report_in"},
                    could_report_in=Lazy.of(check) if check is not None else None)


def classes_by_code() -> Dict[str, type]:
    """The rule classes by code (imports them, and LibCST, on the first call)."""
    global _classes
    if _classes is None:
        found = _discover()
        stale = sorted(set(found) ^ set(RULES_BY_CODE)) or \
            [code for code, rule in found.items() if describe(rule) != RULES_BY_CODE[code]]
        if stale:
            raise ImportError(f"torchdevlint/rules/_catalog.py is out of date for "
                              f"{', '.join(stale)}: run `{REGENERATE}`")
        _classes = found
    return _classes


def rule_classes(rules: Sequence[Union[RuleInfo, type]]) -> Tuple[type, ...]:
    """The rule classes of ``rules`` (descriptions or classes already), in their order."""
    if all(not isinstance(rule, RuleInfo) for rule in rules):
        return tuple(rules)
    by_code = classes_by_code()
    return tuple(by_code[rule.code] if isinstance(rule, RuleInfo) else rule for rule in rules)


# -- the catalog -----------------------------------------------------------------------------


def render_catalog(rules: Sequence[type]) -> str:
    """The text of ``_catalog.py``: plain data, one dict per rule (``RuleInfo``'s fields; the
    ast prefilter as ``module:name``), so that reading it imports nothing."""
    lines = ['"""Generated by `%s` from the rule classes: do not edit."""' % REGENERATE, "",
             "CATALOG = ("]
    for rule in rules:
        info = describe(rule)
        lines.append("    {")
        for field in fields(RuleInfo):
            value = getattr(info, field.name)
            if isinstance(value, Lazy):
                value = value.reference
            lines.append(f"        {field.name!r}: {value!r},")
        lines.append("    },")
    lines.append(")")
    return "\n".join(lines) + "\n"


def _load_catalog() -> Tuple[RuleInfo, ...]:
    from torchdevlint.rules._catalog import CATALOG
    return tuple(RuleInfo(**{**entry, "could_report_in": Lazy(entry["could_report_in"])
                             if entry["could_report_in"] is not None else None})
                 for entry in CATALOG)


ALL_RULES: Tuple[RuleInfo, ...] = _load_catalog()
RULES_BY_CODE: Dict[str, RuleInfo] = {rule.code: rule for rule in ALL_RULES}
DEFAULT_RULES: Tuple[RuleInfo, ...] = tuple(rule for rule in ALL_RULES if rule.default_enabled)
OPT_IN_CODES = frozenset(rule.code for rule in ALL_RULES if not rule.default_enabled)


def rule_page(rule: type) -> str:
    """The text of a rule's page, ``docs/rules/CODE.md``: generated from its docstring."""
    if not rule.__doc__:
        raise ValueError(f"{rule.__name__} ({rule.code}) has no docstring: its docs page")
    return page_text(rule.code, rule.name, rule.__doc__)


# The package's summary and the pre-commit hook's description name every rule (a test checks
# them): lines of these files, in a source checkout, that the command rewrites.
CHECKOUT = PAGES.parent.parent
DESCRIPTIONS = (
    ("pyproject.toml", 'description = "A static analyzer for PyTorch device-management bugs: ',
     '."'),
    (".pre-commit-hooks.yaml", 'description: "Find PyTorch device-management bugs: ', '."'),
)


def rule_names(rules: Sequence[type]) -> str:
    """The rules by name, as the descriptions list them."""
    return ", ".join(rule.name + ("" if rule.default_enabled else " (opt-in)") for rule in rules)


def _write_descriptions(rules: Sequence[type], root: Path) -> None:
    for name, start, end in DESCRIPTIONS:
        path = root / name
        if not path.is_file():
            continue
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        for index, line in enumerate(lines):
            stripped = line.lstrip()
            if stripped.startswith(start):
                indent = line[:len(line) - len(stripped)]
                lines[index] = f"{indent}{start}{rule_names(rules)}{end}\n"
        text = "".join(lines)
        if text != path.read_text(encoding="utf-8"):
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")


def main() -> int:
    """Write ``_catalog.py`` and, in a source checkout, the rule pages and the descriptions
    that name every rule, from the rule classes."""
    rules = tuple(_discover().values())
    CATALOG_PATH.write_text(render_catalog(rules), encoding="utf-8")
    print(f"wrote {CATALOG_PATH}")
    if PAGES.is_dir():
        _write_descriptions(rules, CHECKOUT)
        for rule in rules:
            page = PAGES / f"{rule.code}.md"
            text = rule_page(rule)
            if not page.is_file() or page.read_text(encoding="utf-8") != text:
                page.write_text(text, encoding="utf-8")
                print(f"wrote {page}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
