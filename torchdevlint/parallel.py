"""Running a function over many files on several processes, results in input order.

Generic on purpose: linting and fixing both go through ``run_per_file``. ``func`` and its
results cross process boundaries, so both must be picklable (a top-level function or a
``functools.partial`` of one; plain data back, never a LibCST tree).
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterator, Optional, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Below this many items a pool costs more to start than it saves.
_MIN_ITEMS_FOR_POOL = 2


def default_jobs() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def _chunksize(items: int, jobs: int) -> int:
    # Small chunks keep the workers evenly loaded (file sizes vary a hundredfold) and results
    # streaming in order; a few items per chunk are enough to amortise the pickling.
    return max(1, min(8, items // (jobs * 8)))


def run_per_file(func: Callable[[T], R], items: Sequence[T], jobs: int = 1,
                 on_crash: Optional[Callable[[T, str], R]] = None) -> Iterator[R]:
    """``func(item)`` for every item, yielded in the order of ``items`` as they complete.

    ``jobs <= 1`` runs in this process. If a worker process dies (killed for memory, a crash
    in native code), the items without a result get ``on_crash(item, reason)``, so that no
    item is ever silently lost; without ``on_crash`` the error propagates.
    """
    jobs = min(jobs, len(items))
    if jobs <= 1 or len(items) < _MIN_ITEMS_FOR_POOL:
        for item in items:
            yield func(item)
        return
    done = 0
    executor = ProcessPoolExecutor(max_workers=jobs)
    try:
        for result in executor.map(func, items, chunksize=_chunksize(len(items), jobs)):
            yield result
            done += 1
    except BrokenProcessPool as exc:
        if on_crash is None:
            raise
        reason = str(exc) or "a worker process terminated abruptly"
        for item in items[done:]:
            yield on_crash(item, reason)
    finally:
        # Also reached when the consumer stops early (Ctrl-C, generator closed): do not wait
        # for work nobody will read.
        executor.shutdown(wait=True, cancel_futures=True)
