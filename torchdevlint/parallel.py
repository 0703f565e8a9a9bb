"""Running a function over many files on several processes, results in input order.

Generic on purpose: linting and fixing both go through ``run_per_file``. ``func`` and its
results cross process boundaries, so both must be picklable (a top-level function or a
``functools.partial`` of one; plain data back, never a LibCST tree).
"""

from __future__ import annotations

import os
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
    in native code), only the item that killed it gets ``on_crash(item, reason)``: the items
    that were in flight with it are run again one per process, to find it, and the rest in a
    new pool. Without ``on_crash`` the error propagates.
    """
    jobs = min(jobs, len(items))
    if jobs <= 1 or len(items) < _MIN_ITEMS_FOR_POOL:
        for item in items:
            yield func(item)
        return
    pending = list(items)
    while pending:
        outcome = yield from _pool_round(func, pending, jobs)
        if outcome is None:
            return
        if on_crash is None:
            raise outcome[0]
        error, suspects, rest = outcome
        reason = str(error) or "a worker process terminated abruptly"
        for item in suspects:
            yield from _alone(func, item, on_crash, reason)
        pending = rest


def _pool_round(func, items: list, jobs: int):
    """Yield results in order until the pool breaks; then return (error, the items that may
    have been running when it did, the items after them), or None when all are done."""
    # (imported here: a run with nothing to analyse never starts a pool)
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    size = _chunksize(len(items), jobs)
    chunks = [items[start:start + size] for start in range(0, len(items), size)]
    executor = ProcessPoolExecutor(max_workers=jobs)
    try:
        futures = [executor.submit(_run_chunk, func, chunk) for chunk in chunks]
        for index, future in enumerate(futures):
            try:
                results = future.result()
            except BrokenProcessPool as exc:
                # Chunks go to the workers in order, ``jobs`` running and one queued: the
                # culprit is among the first 2 * jobs + 1 unfinished ones.
                unfinished = [i for i in range(index, len(chunks))
                              if not (futures[i].done() and futures[i].exception() is None)]
                # Everything up to the last suspect is run one per process, in order (a chunk
                # that finished among them is run again rather than reorder the output).
                last = unfinished[min(len(unfinished), 2 * jobs + 1) - 1]
                suspects = [item for chunk in chunks[index:last + 1] for item in chunk]
                rest = [item for chunk in chunks[last + 1:] for item in chunk]
                return exc, suspects, rest
            yield from results
        return None
    finally:
        # Also reached when the consumer stops early (Ctrl-C, generator closed): do not wait
        # for work nobody will read.
        executor.shutdown(wait=True, cancel_futures=True)


def _run_chunk(func, chunk):
    return [func(item) for item in chunk]


def _alone(func, item, on_crash, reason: str):
    """``func(item)`` in a process of its own: if it dies, only this item is lost."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    executor = ProcessPoolExecutor(max_workers=1)
    try:
        yield executor.submit(func, item).result()
    except BrokenProcessPool:
        yield on_crash(item, reason)
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
