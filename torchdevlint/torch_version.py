"""The torch version a project targets (``torch-version``): which device idiom a fix writes.

From PyTorch 2.6 on, ``torch.accelerator`` names whichever accelerator the machine has (CUDA,
Apple MPS, Intel XPU, ...); PyTorch's own tutorials choose the device with it. Below 2.6 a fix
can only ask for CUDA. The default is read, as ruff reads ``requires-python``, from the
project's ``torch`` requirement: the lowest version it allows.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Optional, Tuple

Version = Tuple[int, int]

DEFAULT: Version = (2, 0)
# The first release with ``torch.accelerator.is_available()`` and ``current_accelerator()``.
ACCELERATOR_API: Version = (2, 6)

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.\d+)?")
# A PEP 508 requirement: name, extras, then the specifier up to a URL, a marker or the end.
_REQUIREMENT = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([^;@]*)(@?)")
# One clause of a specifier: operator and a release number (``2.6``, ``2.7.1``, ``2.7.*``,
# pre-releases and local versions tolerated: ``2.6.0rc1``, ``2.6.0+cu124``).
_CLAUSE = re.compile(r"\s*(===|==|~=|>=|>|<=|<|!=)\s*v?(\d+)(?:\.(\d+))?[0-9a-zA-Z.*+!_-]*\s*")


class TorchVersionError(ValueError):
    """Not a torch version (``str(err)`` says what is expected)."""


def parse(text: str) -> Version:
    """``"2.6"`` or ``"2.6.1"`` -> ``(2, 6)``: the API level is the minor release."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        raise TorchVersionError(f"invalid torch version {text!r}: expected MAJOR.MINOR, "
                                f"such as \"2.6\"")
    return int(match.group(1)), int(match.group(2))


def name(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


def has_accelerator_api(version: Version) -> bool:
    return version >= ACCELERATOR_API


def lowest_allowed(specifier: str) -> Optional[Version]:
    """The lowest minor release a specifier allows (``>=2.6`` -> 2.6, ``==2.7.1`` -> 2.7,
    ``~=2.6.0`` -> 2.6, ``>2.5`` -> 2.5, whose patch releases it allows); None when it sets no
    lower bound (``<2.6``, ``!=2.5.0``, empty) or cannot be read."""
    lowest: Optional[Version] = None
    for clause in specifier.split(","):
        if not clause.strip():
            continue
        match = _CLAUSE.fullmatch(clause)
        if match is None:
            return None
        operator, major, minor = match.group(1), int(match.group(2)), int(match.group(3) or 0)
        if operator in ("<", "<=", "!="):
            continue
        if lowest is None or (major, minor) > lowest:  # every clause holds: the highest bound
            lowest = (major, minor)
    return lowest


def requirement_bound(requirement: str) -> Tuple[bool, Optional[Version]]:
    """(whether ``requirement`` is torch's, the lowest version it allows)."""
    match = _REQUIREMENT.match(requirement)
    if match is None or re.sub(r"[-_.]+", "-", match.group(1).lower()) != "torch":
        return False, None
    if match.group(3):  # ``torch @ https://...``: a URL says no version
        return True, None
    specifier = match.group(2).strip()
    if specifier.startswith("(") and specifier.endswith(")"):
        specifier = specifier[1:-1]
    return True, lowest_allowed(specifier)


def _torch_bounds(requirements: Any) -> Iterable[Tuple[str, Optional[Version]]]:
    if isinstance(requirements, list):
        for requirement in requirements:
            if isinstance(requirement, str):
                is_torch, bound = requirement_bound(requirement)
                if is_torch:
                    yield requirement.strip(), bound


def from_project(project: Mapping[str, Any]) -> Optional[Tuple[Version, str]]:
    """(the lowest torch version ``[project]`` allows, the requirement that says so), or None
    when it names no torch requirement with a lower bound.

    ``dependencies`` always hold: all of their torch requirements apply (the highest bound
    wins). Without one there, an install may pick any extra of ``optional-dependencies``, so
    the lowest of their bounds applies, and an unbounded one means no bound."""
    required = list(_torch_bounds(project.get("dependencies")))
    if required:
        bounded = [(bound, text) for text, bound in required if bound is not None]
        if not bounded:
            return None
        bound, text = max(bounded)
        return bound, f"[project] dependencies {text!r}"
    extras = project.get("optional-dependencies")
    optional = [(bound, extra, text) for extra, group in sorted(extras.items())
                for text, bound in _torch_bounds(group)] if isinstance(extras, dict) else []
    if not optional or any(bound is None for bound, _, _ in optional):
        return None
    bound, extra, text = min(optional)
    return bound, f"[project.optional-dependencies] {extra} {text!r}"
