"""Typing sessions into the real server and timing the answer at the trigger, as an editor sees it.

One server (`prewrite serve` over stdio) per configuration. Each session opens its file, types
the docstring keystroke by keystroke in real time, pauses, and sends the automatic inline
request at the first body line: trigger to answer is what the user waits. The same server then
answers the same position conventionally (`prewrite/plainCompletion`: decoding at the trigger
from the document's cached prefix). With `--editor vscode` an automatic inline request also
follows every keystroke after a short debounce and is cancelled by the next one, as VS Code
does; `neovim` (our plugin's default) asks only at the trigger. `typists` sessions run at once,
each in its own document; their conventional requests wait until every session has had its
trigger and then run one at a time, so that no typist's trigger waits behind another's
measurement (a conventional request is a whole decode, seconds on a CPU, that no user sends).
How much of the machine the server's work took while they typed (`engine_busy_s` over
`window_s`) shows whether a latency is the scheduler's or the compute's: a share near one means
the machine could not have done more.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from lsp_server.client import (
    Editor,
    inline_params,
    last_trigger,
    open_params,
    position_of,
    sleep_until,
)
from lsp_server.lab.benchlsp.sessions import EXTENSIONS, Session, held_out
from lsp_server.lab.benchlsp.typist import Profile, Typing, Typist
from lsp_server.wire import PLAIN_COMPLETION

INLINE = "textDocument/inlineCompletion"
EditorKind = Literal["vscode", "neovim"]


@dataclass(frozen=True)
class RunOptions:
    """One configuration of the benchmark."""

    cps: float
    pause_ms: int
    typists: int = 1
    profile: Profile = "thinking"
    editor: EditorKind = "vscode"
    debounce_ms: int = 50  # VS Code's shortest wait before an automatic inline request
    seed: int = 0
    read_ms: int = 0  # between opening the document and the first keystroke


@dataclass
class SessionResult:
    """One typed session at one configuration."""

    name: str
    cps: float
    pause_ms: int
    typists: int
    autoclose: bool
    keystrokes: int
    typing_s: float
    trigger_ms: float  # trigger to answer, at the client
    answer: str
    residual_forwards: int
    from_draft: bool
    drafting_forwards: int | None  # None when several typists share the server's counter
    conventional_ms: float
    conventional_answer: str
    identical: bool  # the streamed answer is the conventional (plain greedy) one
    typing_requests: int = 0  # automatic requests sent while typing (all cancelled or stale)
    profile: str = "thinking"  # the typist's pauses (typist.py)
    language: str = "python"
    answer_tokens: int = 0  # the streamed answer's length
    held_out: bool = False  # in the split never tuned on (sessions.held_out)
    final_text: str = ""
    cursor: int = 0
    warm_text: str = ""  # the document one keystroke before the end of the docstring
    warm_cursor: int = 0
    # the engine's seconds on drafts and triggers, and the wall seconds they fell in: one typist,
    # from the document's opening to its answer; several, the whole typing phase (the same for all)
    engine_busy_s: float = 0.0
    window_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


async def run_sessions(
    editor: Editor, sessions: list[Session], options: RunOptions
) -> list[SessionResult]:
    """Type every session (`typists` at a time) into the running server."""
    queue: asyncio.Queue[tuple[int, Session]] = asyncio.Queue()
    for index, session in enumerate(sessions):
        queue.put_nowait((index, session))
    results: dict[int, SessionResult] = {}
    deferred: list[tuple[str, SessionResult]] = []  # several typists: conventional at the end

    async def typist(worker: int) -> None:
        while not queue.empty():
            index, session = queue.get_nowait()
            seed = options.seed * 1000 + index
            typing = Typist(options.cps, seed, options.profile).type(
                session, autoclose=index % 2 == 1
            )
            uri, results[index] = await _session(editor, index, session, typing, options)
            if options.typists == 1:
                await _conventional(editor, uri, results[index])
            else:
                deferred.append((uri, results[index]))

    began = await _Busy.read(editor) if options.typists > 1 else None
    await asyncio.gather(*(typist(w) for w in range(options.typists)))
    if began is not None:  # several typists: one window over the typing of them all
        busy_s, window_s = (await _Busy.read(editor)).since(began)
        for _, result in deferred:
            result.engine_busy_s, result.window_s = busy_s, window_s
    for uri, result in deferred:
        await _conventional(editor, uri, result)
    return [results[i] for i in sorted(results)]


async def _session(
    editor: Editor, index: int, session: Session, typing: Typing, options: RunOptions
) -> tuple[str, SessionResult]:
    """Type the session and time its trigger; its document stays open for `_conventional`."""
    client = editor.client
    name = f"{index:03d}-{session.name.replace('/', '-')}.{EXTENSIONS[session.language]}"
    uri = f"file:///prewrite-bench-lsp/{name}"
    client.text_document_did_open(open_params(uri, typing.initial, session.language))
    await asyncio.sleep(options.read_ms / 1000)  # the person reads before typing
    # several typists share the counters: `run_sessions` sets their window
    before = await _Busy.read(editor) if options.typists == 1 else None
    requests = _TypingRequests(editor, uri, options)
    typing_s = await _type(editor, uri, typing, requests)
    await asyncio.sleep(options.pause_ms / 1000)
    requests.cancel()
    cursor = position_of(typing.final, typing.body_offset)
    trigger_ms, answer = await editor.timed(INLINE, uri, cursor, invoked=False)
    after = await _Busy.read(editor)
    trigger = last_trigger(after.stats, uri)
    busy_s, window_s = after.since(before) if before is not None else (0.0, 0.0)
    return uri, SessionResult(
        name=session.name, cps=options.cps, pause_ms=options.pause_ms, typists=options.typists,
        profile=options.profile, language=session.language,
        answer_tokens=int(trigger.get("answerTokens", 0)),
        held_out=held_out(index),
        autoclose=index % 2 == 1, keystrokes=len(typing.keystrokes), typing_s=round(typing_s, 3),
        trigger_ms=round(trigger_ms, 3), answer=answer,
        residual_forwards=int(trigger.get("residualForwards", -1)),
        from_draft=bool(trigger.get("fromDraft", False)),
        drafting_forwards=after.drafting - before.drafting if before is not None else None,
        conventional_ms=0.0, conventional_answer="", identical=False,  # `_conventional`
        typing_requests=requests.sent, final_text=typing.final,
        cursor=typing.body_offset, warm_text=typing.warm, warm_cursor=typing.warm_cursor,
        engine_busy_s=busy_s, window_s=window_s,
    )  # fmt: skip


async def _conventional(editor: Editor, uri: str, result: SessionResult) -> None:
    """The server's conventional answer at the session's trigger; then its document closes."""
    cursor = position_of(result.final_text, result.cursor)
    result.conventional_ms, plain = await editor.timed(PLAIN_COMPLETION, uri, cursor)
    result.conventional_ms = round(result.conventional_ms, 3)
    result.conventional_answer, result.identical = plain, result.answer == plain
    editor.client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


async def _type(editor: Editor, uri: str, typing: Typing, requests: _TypingRequests) -> float:
    """Send the keystrokes in real time (each at its own moment); the seconds it took."""
    text = typing.initial
    started = time.perf_counter()
    deadline = started
    last = len(typing.keystrokes) - 1
    for number, stroke in enumerate(typing.keystrokes):
        deadline += stroke.delay_s
        await sleep_until(deadline)
        requests.cancel()
        position = position_of(text, stroke.offset)
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=position, end=position), text=stroke.text
        )
        document = types.VersionedTextDocumentIdentifier(uri=uri, version=number + 1)
        editor.client.text_document_did_change(
            types.DidChangeTextDocumentParams(text_document=document, content_changes=[change])
        )
        text = text[: stroke.offset] + stroke.text + text[stroke.offset :]
        if number < last:  # after the last one the user pauses: the trigger is timed alone
            requests.after(position_of(text, stroke.cursor))
    return time.perf_counter() - started


class _TypingRequests:
    """VS Code's automatic inline requests while typing: after a debounce, cancelled by a key."""

    def __init__(self, editor: Editor, uri: str, options: RunOptions):
        self.editor, self.uri, self.options = editor, uri, options
        self.pending: asyncio.Task[None] | None = None
        self.in_flight: str | None = None  # the id of a request sent and not yet answered
        self.sent = 0

    def after(self, position: types.Position) -> None:
        """A keystroke left the cursor at `position`: ask after the debounce."""
        if self.options.editor == "vscode":
            self.pending = asyncio.ensure_future(self._ask(position))

    def cancel(self) -> None:
        """The next keystroke: a request still waiting is dropped, a sent one cancelled.

        A sent request's task stays to take the server's (cancelled) answer.
        """
        if self.in_flight is not None:
            params = types.CancelParams(id=self.in_flight)
            self.editor.client.protocol.notify(types.CANCEL_REQUEST, params)
            self.in_flight = None
        elif self.pending is not None:
            self.pending.cancel()
        self.pending = None

    async def _ask(self, position: types.Position) -> None:
        await asyncio.sleep(self.options.debounce_ms / 1000)
        self.sent += 1
        self.in_flight = message = f"typing-{uuid.uuid4().hex}"
        params = inline_params(self.uri, position, invoked=False)
        protocol = self.editor.client.protocol
        with contextlib.suppress(JsonRpcException):  # a cancelled request answers so
            await protocol.send_request_async(INLINE, params, msg_id=message)
        if self.in_flight == message:
            self.in_flight = None


@dataclass(frozen=True)
class _Busy:
    """The server's counters at one moment: engine seconds on typing's work, drafting forwards."""

    stats: Any
    at: float  # time.perf_counter() when the stats came
    engine_s: float
    drafting: int

    @classmethod
    async def read(cls, editor: Editor) -> _Busy:
        stats = await editor.stats()
        busy = stats.get("busySeconds", {})
        engine_s = float(busy.get("draft", 0.0)) + float(busy.get("finalize", 0.0))
        drafting = int(stats.get("forwards", {}).get("drafting", 0))
        return cls(stats, time.perf_counter(), engine_s, drafting)

    def since(self, earlier: _Busy) -> tuple[float, float]:
        """(engine seconds, wall seconds) from `earlier` to this moment."""
        return round(self.engine_s - earlier.engine_s, 3), round(self.at - earlier.at, 3)
