"""Worker processes for the language server, driven from its asyncio event loop.

Each worker (``torchdevlint.server.worker``) runs one job at a time. The pool starts workers
as jobs need them, up to ``size``; when every worker is busy with a slow job (a huge file),
one more is started, so that one slow document never holds up the others. A job can be
cancelled (its worker is killed and replaced): that is how a superseded lint of a huge file
stops using the CPU. A worker that dies costs its job only.
"""

from __future__ import annotations

import asyncio
import collections
import os
import pickle
import sys
from pathlib import Path
from typing import Any, Deque, List, Optional, Set

from torchdevlint.server.worker import _HEADER, frame

# A job running this long is "slow": it does not count against the pool's size.
SLOW_S = 2.0
# The most workers ever, slow jobs included.
MAX_WORKERS = 8
# How the worker is started: the same interpreter, with this copy of torchdevlint first on
# its path (a server run from a source checkout must not get an installed copy's workers).
_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from torchdevlint.server.worker import main; sys.exit(main())")
_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent.parent)


class Cancelled(Exception):
    """The job was cancelled (superseded) and its worker stopped."""


class WorkerDied(Exception):
    """The worker exited during the job (a crash in the analysis, or killed by the system)."""


class JobFailed(Exception):
    """The job raised in the worker (a bug); ``str(err)`` says what, and the worker goes on."""


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.owner: Optional[str] = None
        self.started = 0.0
        self.cancelled = False

    async def call(self, job: Any) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(frame(job))
        await self.process.stdin.drain()
        header = await self.process.stdout.readexactly(_HEADER.size)
        body = await self.process.stdout.readexactly(_HEADER.unpack(header)[0])
        return pickle.loads(body)

    def kill(self) -> None:
        if self.process.returncode is None:
            try:
                self.process.kill()
            except ProcessLookupError:
                pass


class Pool:
    def __init__(self, size: Optional[int] = None) -> None:
        self.size = size or max(2, min(4, os.cpu_count() or 1))
        self._idle: List[_Worker] = []
        self._busy: Set[_Worker] = set()
        self._waiting: Deque[asyncio.Future] = collections.deque()
        self._starting = 0
        self._closed = False

    # -- workers -------------------------------------------------------------------------

    async def _start(self) -> _Worker:
        self._starting += 1
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-c", _BOOT, _PACKAGE_ROOT,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        finally:
            self._starting -= 1
        return _Worker(process)

    def warm(self) -> None:
        """Start a worker ahead of the first job (its imports take a few hundred ms)."""
        if not self._idle and not self._busy and not self._starting:
            asyncio.ensure_future(self._add_idle())

    async def _add_idle(self) -> None:
        try:
            worker = await self._start()
        except OSError:
            return  # the next job starts one, and reports why it cannot
        self._release(worker)

    def _can_start(self) -> bool:
        total = len(self._busy) + self._starting
        if total < self.size:
            return True
        now = asyncio.get_running_loop().time()
        slow = sum(1 for worker in self._busy if now - worker.started >= SLOW_S)
        return total < MAX_WORKERS and total - slow < self.size

    async def _acquire(self) -> _Worker:
        while self._idle:
            worker = self._idle.pop()
            if worker.process.returncode is None:
                return worker
        if self._can_start():
            return await self._start()
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        return await waiter

    def _release(self, worker: _Worker) -> None:
        worker.owner, worker.cancelled = None, False
        if self._closed or worker.process.returncode is not None:
            worker.kill()
            return
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(worker)
                return
        if len(self._idle) + len(self._busy) >= self.size:
            self._stop(worker)  # an extra worker started for slow jobs: not kept
            return
        self._idle.append(worker)

    def _stop(self, worker: _Worker) -> None:
        if worker.process.stdin is not None:
            worker.process.stdin.close()  # the worker exits when its input closes

    def _wake_one(self) -> None:
        """A worker went away: a job waiting for one may now start its own."""
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                asyncio.ensure_future(self._start_for(waiter))
                return

    async def _start_for(self, waiter: asyncio.Future) -> None:
        try:
            worker = await self._start()
        except OSError as exc:
            if not waiter.done():
                waiter.set_exception(exc)
            return
        if waiter.done():
            self._release(worker)
        else:
            waiter.set_result(worker)

    # -- jobs ----------------------------------------------------------------------------

    async def run(self, owner: str, job: Any) -> Any:
        """The reply of a worker to ``job``. Raises ``Cancelled`` when ``cancel(owner)``
        stopped it, ``WorkerDied`` when the worker died."""
        if self._closed:
            raise Cancelled
        worker = await self._acquire()
        worker.owner, worker.started = owner, asyncio.get_running_loop().time()
        self._busy.add(worker)
        try:
            reply = await worker.call(job)
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            self._busy.discard(worker)
            worker.kill()
            self._wake_one()
            if worker.cancelled or self._closed:
                raise Cancelled from None
            code = await worker.process.wait()
            raise WorkerDied(f"exit status {code}") from exc
        except BaseException:  # the caller went away mid-job (asyncio cancellation)
            self._busy.discard(worker)
            worker.kill()
            self._wake_one()
            raise
        self._busy.discard(worker)
        self._release(worker)
        ok, value = reply
        if not ok:
            raise JobFailed(value)
        return value

    def cancel(self, owner: str, running_for: float = 0.0) -> bool:
        """Stop ``owner``'s job if it has run at least ``running_for`` seconds (a shorter one
        costs less to finish than a new worker costs to start)."""
        now = asyncio.get_running_loop().time()
        for worker in list(self._busy):
            if worker.owner == owner and now - worker.started >= running_for:
                worker.cancelled = True
                worker.kill()
                return True
        return False

    def running(self, owner: str) -> bool:
        return any(worker.owner == owner for worker in self._busy)

    async def close(self) -> None:
        self._closed = True
        workers = [*self._idle, *self._busy]
        self._idle.clear()
        for worker in workers:
            self._stop(worker)
        for worker in workers:
            try:
                await asyncio.wait_for(worker.process.wait(), 2)
            except asyncio.TimeoutError:
                worker.kill()
        for waiter in self._waiting:
            if not waiter.done():
                waiter.set_exception(Cancelled())
