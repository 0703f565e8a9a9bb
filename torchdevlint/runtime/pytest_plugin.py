"""pytest plugin: run a test suite on a pretend accelerator (registered as ``torchdevlint``).

Inert unless asked, and torch is imported only then:

* ``pytest --fake-accelerator`` (``=cuda`` by default, or ``=mps``) and
  ``--fake-accelerator-count N``, or the ini options ``fake_accelerator = cuda`` and
  ``fake_accelerator_count = 2``: the whole session runs on the pretend accelerator, switched
  on before any test module is imported (a module-level
  ``device = "cuda" if torch.cuda.is_available() else "cpu"`` picks the GPU);
* ``@pytest.mark.fake_accelerator`` (``("mps")``, ``(count=2)``) runs one test on it, and
  ``@pytest.mark.fake_accelerator(enabled=False)`` runs one test without it;
* the ``fake_accelerator`` fixture gives a test the pretend accelerator (switching it on for
  that test if needed) and its CPU-only phase: ``with fake_accelerator.cpu_only(): ...``.

A failure's traceback ends in the user's code and torch's, never in this plugin's machinery.
"""
from __future__ import annotations

import sys

import pytest

from torchdevlint.runtime._traceback import prune_traceback

KINDS = ("cuda", "mps")


def pytest_addoption(parser):
    group = parser.getgroup("torchdevlint", "torchdevlint pretend accelerator")
    # no argparse choices: `--fake-accelerator tests/` must not read the path as the kind
    # (see pytest_load_initial_conftests); the value is checked in _session_setting
    group.addoption("--fake-accelerator", nargs="?", const="cuda", default=None,
                    metavar="cuda|mps",
                    help="run the tests as on a machine with this accelerator (default cuda); "
                         "device bugs fail with the errors a real GPU raises")
    group.addoption("--fake-accelerator-count", type=int, default=None, metavar="N",
                    help="how many pretend accelerators the machine has (default 1)")
    parser.addini("fake_accelerator", "run the tests on a pretend accelerator: cuda or mps "
                  "(empty: off)", default="")
    parser.addini("fake_accelerator_count", "how many pretend accelerators (default 1)", default="1")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """``--fake-accelerator`` followed by anything but a kind (a path, another option) means
    cuda: make it ``--fake-accelerator=cuda`` before pytest parses the command line."""
    for index, arg in enumerate(args):
        if arg == "--fake-accelerator" and (index + 1 == len(args) or args[index + 1] not in KINDS):
            args[index] = "--fake-accelerator=cuda"


def _session_setting(config):
    kind = config.getoption("fake_accelerator") or str(config.getini("fake_accelerator")).strip()
    if not kind:
        return None
    if kind not in KINDS:
        raise pytest.UsageError(f"fake_accelerator: expected one of {', '.join(KINDS)}, got {kind!r}")
    count = config.getoption("fake_accelerator_count")
    if count is None:
        try:
            count = int(str(config.getini("fake_accelerator_count")).strip() or "1")
        except ValueError:
            raise pytest.UsageError("fake_accelerator_count: expected a whole number") from None
    if count < 1:
        raise pytest.UsageError(f"--fake-accelerator-count: expected at least 1, got {count}")
    return kind, count


_SESSION_KEY = "_torchdevlint_fake_accelerator"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "fake_accelerator(kind='cuda', count=1, enabled=True): run this test on the "
                   "torchdevlint pretend accelerator (enabled=False: without it)")
    setting = _session_setting(config)
    if setting is None:
        return
    from torchdevlint.runtime import fake_accelerator
    context = fake_accelerator(*setting)
    context.__enter__()
    setattr(config, _SESSION_KEY, context)


def pytest_unconfigure(config):
    context = getattr(config, _SESSION_KEY, None)
    if context is not None:
        context.__exit__(None, None, None)
        delattr(config, _SESSION_KEY)


def pytest_report_header(config):
    setting = _session_setting(config)
    if setting is not None:
        return f"torchdevlint: pretend accelerator {setting[0]} x{setting[1]} (no real GPU used)"
    return None


def _marker_setting(item):
    marker = item.get_closest_marker("fake_accelerator")
    if marker is None:
        return None
    enabled = marker.kwargs.get("enabled", True)
    if not enabled:
        return False
    kind = marker.args[0] if marker.args else marker.kwargs.get("kind", "cuda")
    count = marker.args[1] if len(marker.args) > 1 else marker.kwargs.get("count", 1)
    return kind, count


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    setting = _marker_setting(item)
    if setting is None:
        yield
        return
    from torchdevlint.runtime import _fake
    if setting is False:
        context = _fake.suspended()
    elif _fake.is_active() and _fake.current_setting() == setting:
        context = None
    else:
        context = _fake.fake_accelerator(*setting) if not _fake.is_active() else _fake.replaced(*setting)
    if context is None:
        yield
        return
    with context:
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    outcome = yield
    _prune(outcome)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    outcome = yield
    _prune(outcome)


def _prune(outcome):
    """Only while the pretend accelerator is on: otherwise the plugin changes nothing."""
    error = outcome.excinfo[1] if outcome.excinfo else None
    fake = sys.modules.get("torchdevlint.runtime._fake")
    if error is not None and fake is not None and fake.is_active():
        prune_traceback(error)


class _Handle:
    """What the ``fake_accelerator`` fixture gives a test."""

    def __init__(self, kind, count):
        import torch
        self.kind = kind
        self.count = count
        self.device = torch.device(kind, 0)

    def cpu_only(self):
        """A phase in which the machine has no accelerator (see torchdevlint.runtime.cpu_only)."""
        from torchdevlint.runtime import cpu_only
        return cpu_only()


@pytest.fixture
def fake_accelerator():
    """The pretend accelerator for this test (switched on for it when the session is not)."""
    from torchdevlint.runtime import _fake
    if _fake.is_active():
        yield _Handle(*_fake.current_setting())
        return
    with _fake.fake_accelerator("cuda"):
        yield _Handle(*_fake.current_setting())
