"""How fast `torchdevlint server` answers an edit, and whether its memory stays flat.

A real LSP client (pygls's) starts the server as a subprocess and speaks JSON-RPC to it over
stdio, as an editor does:

- latency: for a generated training script (``generate_large.py``: a model, a loader loop,
  device code and findings every few lines) of 500 and of 5,000 lines, the time from sending
  ``textDocument/didChange`` to receiving the ``publishDiagnostics`` of that version; each
  edit waits for the previous one's diagnostics, so every figure is one whole lint;
- memory: the resident memory of the server and of its worker processes (Linux: /proc)
  before and after 1,000 edits of one document.

    python benchmarks/server_latency.py [--edits 30] [--memory-edits 1000]

Needs the server extra (pygls). Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lsprotocol import types  # noqa: E402
from pygls.lsp.client import BaseLanguageClient  # noqa: E402

from benchmarks.generate_large import generate  # noqa: E402


class Client:
    def __init__(self) -> None:
        self.lsp = BaseLanguageClient("server-latency", "1")
        self.arrived: Dict[tuple, float] = {}  # (uri, version) -> when
        self.waiters: Dict[tuple, asyncio.Future] = {}

        @self.lsp.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            key = (params.uri, params.version)
            self.arrived[key] = time.perf_counter()
            waiter = self.waiters.pop(key, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(len(params.diagnostics))

        @self.lsp.feature(types.WINDOW_LOG_MESSAGE)
        def logged(params: types.LogMessageParams) -> None:
            print(f"server: {params.message}", file=sys.stderr)

    async def start(self) -> None:
        await self.lsp.start_io(sys.executable, "-m", "torchdevlint", "server", cwd=str(ROOT))
        await self.lsp.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=ROOT.as_uri()))
        self.lsp.initialized(types.InitializedParams())

    def expect(self, uri: str, version: int) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        self.waiters[(uri, version)] = future
        return future

    async def open(self, uri: str, text: str) -> int:
        done = self.expect(uri, 1)
        self.lsp.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri, "python", 1, text)))
        return await asyncio.wait_for(done, 120)

    async def edit(self, uri: str, version: int, line: int, text: str) -> float:
        """Replace line ``line`` (0-based) with ``text``; seconds until its diagnostics."""
        done = self.expect(uri, version)
        sent = time.perf_counter()
        self.lsp.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=version, uri=uri),
            [types.TextDocumentContentChangePartial(
                types.Range(types.Position(line, 0), types.Position(line + 1, 0)), text)]))
        await asyncio.wait_for(done, 120)
        return self.arrived[(uri, version)] - sent

    def processes(self) -> List[int]:
        pid = self.lsp._server.pid
        found = [pid]
        for task in Path(f"/proc/{pid}/task").glob("*"):
            children = task / "children"
            if children.exists():
                found.extend(int(child) for child in children.read_text().split())
        return found

    async def stop(self) -> None:
        await self.lsp.shutdown_async(None)
        self.lsp.exit(None)
        await self.lsp.stop()


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def toggled(line: str, n: int) -> str:
    """The edited line: an added comment that changes on every edit (a keystroke's worth)."""
    return f"{line.rstrip()}  # edit {n}\n"


async def latency(client: Client, lines: int, edits: int) -> List[float]:
    text = generate(lines)
    uri = (ROOT / f"bench_{lines}.py").as_uri()  # never written: the document lives in memory
    count = await client.open(uri, text)
    source_lines = text.splitlines(keepends=True)
    target = next(i for i, line in enumerate(source_lines) if "labels.to(device)" in line)
    print(f"{len(source_lines)}-line file: {count} diagnostics", file=sys.stderr)
    times = []
    for n in range(edits):
        times.append(await client.edit(uri, n + 2, target, toggled(source_lines[target], n)))
        source_lines[target] = toggled(source_lines[target], n)
    return times


async def memory(client: Client, edits: int) -> List[tuple]:
    text = generate(500)
    uri = (ROOT / "bench_memory.py").as_uri()
    await client.open(uri, text)
    source_lines = text.splitlines(keepends=True)
    target = next(i for i, line in enumerate(source_lines) if "labels.to(device)" in line)
    samples = []
    for n in range(edits):
        await client.edit(uri, n + 2, target, toggled(source_lines[target], n))
        source_lines[target] = toggled(source_lines[target], n)
        if n in (9, edits // 2 - 1, edits - 1):
            pids = client.processes()
            samples.append((n + 1, rss_mib(pids[0]), sum(rss_mib(p) for p in pids[1:]), len(pids) - 1))
    return samples


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=30, help="edits per file size (latency)")
    parser.add_argument("--memory-edits", type=int, default=1000)
    args = parser.parse_args()
    client = Client()
    await client.start()
    try:
        for lines in (500, 5000):
            times = await latency(client, lines, args.edits)
            print(f"{lines:>5} lines: didChange -> publishDiagnostics median "
                  f"{statistics.median(times) * 1000:.0f} ms, min {min(times) * 1000:.0f} ms, "
                  f"max {max(times) * 1000:.0f} ms ({len(times)} edits)")
        if Path("/proc/self/status").exists():
            for n, server, workers, count in await memory(client, args.memory_edits):
                print(f"after {n:>4} edits: server {server:.1f} MiB, {count} worker(s) "
                      f"{workers:.1f} MiB")
    finally:
        await client.stop()


if __name__ == "__main__":
    asyncio.run(main())
