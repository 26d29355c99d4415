"""`prewrite bench-lsp --memory-docs N`: the server's memory with N documents drafted at once.

Each document opens with its docstring typed but for one character, then gets that character:
a spec, a request, a draft. Once every draft is done, the server's RSS is read (Linux: /proc),
then the oldest document and the newest are triggered: the cost of coming back to a document
whose cache was evicted, next to one whose cache is there.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types

from lsp_server.client import Editor, last_trigger, open_params, position_of
from lsp_server.lab.benchlsp.sessions import Session
from lsp_server.lab.benchlsp.typist import Typist

INLINE = "textDocument/inlineCompletion"


@dataclass(frozen=True)
class MemoryResult:
    """The server's memory with `documents` drafted, and the cost of returning to the oldest."""

    documents: int
    rss_before_mib: float | None  # after the model loaded, no document open
    rss_mib: float | None  # with every document drafted
    memory: dict[str, Any]  # prewrite.stats' memory (cache bytes, budget, evictions)
    drafting_s: float
    return_oldest_ms: float  # trigger on the least recently used document
    return_oldest_forwards: int
    return_newest_ms: float
    return_newest_forwards: int


async def measure_memory(editor: Editor, sessions: list[Session], documents: int) -> MemoryResult:
    """Open `documents` documents (the sessions, cycled), let them draft, measure."""
    before = server_rss_mib(editor)
    uris, cursors = [], []
    started = time.perf_counter()
    for index in range(documents):
        session = sessions[index % len(sessions)]
        typing = Typist(12, seed=index).type(session, autoclose=False)
        uri = f"file:///prewrite-bench-lsp/memory/{index:03d}.py"
        editor.client.text_document_did_open(open_params(uri, typing.warm))
        last = typing.final[typing.warm_cursor]  # the docstring's last character
        at = position_of(typing.warm, typing.warm_cursor)
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=at, end=at), text=last
        )
        editor.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=1),
                content_changes=[change],
            )
        )
        text = typing.warm[: typing.warm_cursor] + last + typing.warm[typing.warm_cursor :]
        uris.append(uri)
        cursors.append(position_of(text, typing.warm_cursor + 1))
    await _drafted(editor)
    drafting_s = time.perf_counter() - started
    stats = await editor.stats()
    rss = server_rss_mib(editor)
    oldest_ms, _ = await editor.timed(INLINE, uris[0], cursors[0], invoked=False)
    oldest = last_trigger(await editor.stats(), uris[0])
    newest_ms, _ = await editor.timed(INLINE, uris[-1], cursors[-1], invoked=False)
    newest = last_trigger(await editor.stats(), uris[-1])
    return MemoryResult(
        documents, before, rss, stats.get("memory", {}), round(drafting_s, 1),
        round(oldest_ms, 1), int(oldest.get("residualForwards", -1)), round(newest_ms, 1),
        int(newest.get("residualForwards", -1)),
    )  # fmt: skip


def server_rss_mib(editor: Editor) -> float | None:
    """The server process's resident memory in MiB (None where /proc is not there)."""
    process = editor.client._server
    if process is None:
        return None
    try:
        status = Path(f"/proc/{process.pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return None


def as_dict(result: MemoryResult) -> dict[str, Any]:
    """For the results file."""
    return asdict(result)


async def _drafted(editor: Editor, poll_s: float = 0.5) -> None:
    """Wait until no draft is pending or running."""
    while (await editor.stats())["drafts"]["pending"]:
        await asyncio.sleep(poll_s)
