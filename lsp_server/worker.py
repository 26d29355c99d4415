"""The engine worker: one thread owns the model; the event loop hands it jobs and gets futures back.

Scheduling: urgent jobs (load, finalize, plain, close) run first, in order. Drafts are
coalesced: each document has at most one pending draft, the newest; a newer one replaces it
(the older is counted as dropped) and supersedes the document's running work, which stops at
its next forward and leaves the engine session consistent, so the next job resumes from it.
A trigger on one document also preempts drafting of another and queues that draft again.
When the engine batches sessions (llama.cpp), the drafts of several documents run together,
one batched forward per step (`Engine.update_many`), and a draft submitted meanwhile joins
them at the next step instead of waiting for the batch to end.

A person waiting goes first: a trigger that has waited `OVERDUE_S` (an editor's request while
typing is cancelled by the next keystroke sooner), and the draft of a document whose typist
paused (`PAUSED_S` without an edit) or has written the spec (closed it, or moved past it to
the body): its trigger may come any moment. Of those, a written spec goes before a pause, and
the one written (or quiet) longest runs alone until it is done; the drafts of documents still
being typed, which the next word makes stale, stop and wait, and an editor's request while
typing does not stop a paused document's draft.

Every job carries a ticket from one counter; the engine's `supersede(doc, ticket)` makes
work with an older ticket stop. Results cross back with `loop.call_soon_threadsafe`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from inference.api import Completion, Request
from inference.config import EngineConfig
from inference.errors import PrewriteError, Superseded
from lsp_server.errors import NotReadyError, WorkerStoppedError

if TYPE_CHECKING:
    from inference.engine import Engine
    from inference.runtimes.base import RuntimeInfo

# A trigger that has waited this long is a person waiting (an editor's request while typing is
# cancelled by the next keystroke sooner).
OVERDUE_S = 0.25
# A document this long without an edit is paused: its draft is the next answer someone asks
# for (the typing benchmark's keys come 0.05-0.3 s apart within a word).
PAUSED_S = 0.25
JobKind = Literal["load", "draft", "finalize", "plain", "close", "stop"]
EventStatus = Literal["regenerating", "accepted", "verified", "failed"]


@dataclass(frozen=True)
class DraftEvent:
    """What became of a draft job; `tag` is the label its caller gave it."""

    doc: str
    tag: Any
    status: EventStatus
    completion: Completion | None = None
    error: BaseException | None = None


@dataclass(eq=False)
class _Job:
    kind: JobKind
    ticket: int
    doc: str = ""
    request: Request | None = None
    tag: Any = None
    config: EngineConfig | None = None
    future: asyncio.Future[Any] | None = None
    min_forwards: int = 0  # a draft's forwards before a newer keystroke may stop it
    waiters: list[asyncio.Future[Any]] = field(default_factory=list)  # triggers on a draft
    waited_since: float = 0.0  # when its first waiter came (time.monotonic)
    stopping: bool = False  # superseded by the scheduler; its work ends at the next forward


def _load_engine(config: EngineConfig) -> Engine:
    # Imported here: torch and the model load on the worker thread, never at server start.
    from inference.adapt.adapter import with_adapter_settings
    from inference.config import validate_engine_config
    from inference.engine import Engine

    if config.adapter:  # the adapter's prompt format and system prompt, unless set explicitly
        config = validate_engine_config(with_adapter_settings(config.model_dump()))
    return Engine.load(config)


class Worker:
    """Runs engine jobs on its own thread; every public method is called from the event loop."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        on_draft: Callable[[DraftEvent], None],
        load_engine: Callable[[EngineConfig], Engine] | None = None,
    ):
        self._loop = loop
        self._on_draft = on_draft
        self._load_engine = load_engine or _load_engine
        self._cond = threading.Condition()
        self._urgent: deque[_Job] = deque()
        self._drafts: dict[str, _Job] = {}  # newest pending draft per document, oldest first
        self._running: list[_Job] = []  # one urgent job, or the drafts running together
        self._tickets = itertools.count(1)
        self._counts: Counter[str] = Counter()
        self._busy: defaultdict[str, float] = defaultdict(float)  # engine seconds by job kind
        self._working: tuple[str, float] | None = None  # the job kind at work, since when
        self._loading = 0
        self._engine: Engine | None = None
        self._open: set[str] = set()  # engine sessions (touched on the worker thread only)
        self._verified: dict[str, tuple[Request, Completion]] = {}
        # automatic triggers waiting for a draft of their request that is not submitted yet
        self._expected: dict[str, list[tuple[Request, asyncio.Future[Any]]]] = {}
        self._edited: dict[str, float] = {}  # the last edit of each document (time.monotonic)
        self._written: dict[str, float] = {}  # since when a document's spec has been written
        self.config: EngineConfig | None = None
        self._thread = threading.Thread(target=self._run, name="prewrite-engine", daemon=True)
        self._thread.start()

    # -- state --------------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """True when a model is loaded and no other is loading."""
        return self._engine is not None and self._loading == 0

    @property
    def has_model(self) -> bool:
        """True when a model is loaded or loading: work submitted now will find one."""
        return self._engine is not None or self._loading > 0

    def verified(self, doc: str, request: Request) -> Completion | None:
        """The finished answer for exactly `request` if the document's draft has it (no work)."""
        entry = self._verified.get(doc)
        return entry[1] if entry is not None and entry[0] == request else None

    def runtime(self) -> RuntimeInfo | None:
        """What runs the loaded model (kind, device, threads), or None before a model loads."""
        engine = self._engine
        return engine.runtime.info if engine is not None else None

    def memory(self) -> dict[str, int]:
        """The documents' caches: bytes held, the budget, evictions so far (by either)."""
        engine = self._engine
        if engine is None:
            return {}
        budget = engine.memory
        evictions = budget.evictions + engine.runtime.evictions
        return {"cacheBytes": budget.held, "budgetBytes": budget.budget,
                "evictions": evictions}  # fmt: skip

    def forwards(self) -> dict[str, int]:
        """Model forwards so far by phase (drafting, residual, baseline)."""
        engine = self._engine
        return dict(engine.counter.by_phase) if engine is not None else {}

    def busy(self) -> dict[str, float]:
        """Seconds the engine has worked so far by job kind (draft, finalize, plain, load,
        close): against the wall clock, how much of the machine the server's work takes."""
        with self._cond:
            busy = defaultdict(float, self._busy)
            if self._working is not None:  # the job at work counts up to now
                kind, began = self._working
                busy[kind] += time.perf_counter() - began
        return {kind: round(seconds, 3) for kind, seconds in busy.items()}

    def stats(self) -> dict[str, int]:
        """Draft job counts: submitted = processed + superseded + dropped + failed + pending."""
        keys = ("submitted", "processed", "superseded", "dropped", "failed")
        with self._cond:
            counts = {key: self._counts[key] for key in keys}
            running = sum(job.kind == "draft" for job in [*self._running, *self._urgent])
            counts["pending"] = len(self._drafts) + running
        return counts

    # -- jobs ---------------------------------------------------------------------------------

    def load(self, config: EngineConfig) -> asyncio.Future[None]:
        """Load a model; the current one keeps serving until the new one is in place."""
        with self._cond:
            self._loading += 1
        return self._urgent_job(_Job("load", 0, config=config, future=self._loop.create_future()))

    def edited(self, doc: str, written: bool = False) -> None:
        """The document was just edited: its typist is typing (see `PAUSED_S`), or, when
        `written`, has finished its spec (closed it, or moved on past it): its answer is next."""
        with self._cond:
            now = self._edited[doc] = time.monotonic()
            if written:
                self._written.setdefault(doc, now)
            else:
                self._written.pop(doc, None)

    def draft(self, doc: str, request: Request, tag: Any, min_forwards: int = 0) -> None:
        """Bring the document's draft up to `request`, replacing any draft still pending.

        The running draft of the document stops once it has run its own `min_forwards`, so
        a draft makes progress even while keystrokes come faster than forwards.
        """
        with self._cond:
            ticket = next(self._tickets)
            if self._drafts.pop(doc, None) is not None:
                self._counts["dropped"] += 1
            self._drop_queued_drafts(doc)
            job = _Job("draft", ticket, doc, request, tag, min_forwards=min_forwards)
            self._drafts[doc] = job
            self._counts["submitted"] += 1
            self._supersede(doc, ticket, soft=True)
            for wanted, future in self._expected.pop(doc, []):
                if wanted == request:
                    self._await_draft(doc, request, future)
                else:
                    self._settle(future, error=Superseded("the document changed"))
            self._cond.notify()

    def when_drafted(
        self, doc: str, request: Request, submit: Callable[[], None] | None = None
    ) -> asyncio.Future[Completion]:
        """The completion of the document's draft for `request`, without disturbing drafting.

        For triggers that come while the user types (an editor's automatic request): the draft
        running or queued for this very request is waited for and goes first. With no such
        draft, `submit` is called to submit it (it calls `draft`); without `submit` (drafting
        waits for the end of a word) the draft is waited for once it is submitted. A draft for
        other text makes the answer stale (`Superseded`); nothing is cancelled.
        """
        future: asyncio.Future[Completion] = self._loop.create_future()
        with self._cond:  # a reentrant lock: `submit` calls `draft`
            verified = self._verified.get(doc)
            if verified is not None and verified[0] == request:
                future.set_result(verified[1])
                return future
            if self._await_draft(doc, request, future):
                return future
            if submit is not None:
                submit()
                if self._await_draft(doc, request, future):
                    return future
            self._expected.setdefault(doc, []).append((request, future))
            future.add_done_callback(lambda f: self._unexpect(doc, f))
        return future

    def finalize(
        self, doc: str, request: Request, tag: Any, resume: bool = True
    ) -> asyncio.Future[Completion]:
        """Finish the answer for `request` now; drafting yields to it.

        If the caller stops waiting and `resume` is set, the work goes on as drafting.
        """
        future: asyncio.Future[Completion] = self._loop.create_future()
        with self._cond:
            if self._await_draft(doc, request, future, invoked=True):
                return future
            ticket = next(self._tickets)
            if self._drafts.pop(doc, None) is not None:  # the trigger covers it
                self._counts["dropped"] += 1
            job = _Job("finalize", ticket, doc, request, tag, future=future)
            self._supersede(doc, ticket)
            self._preempt_drafting(doc)
        future.add_done_callback(lambda f: self._abandoned(job, resume) if f.cancelled() else None)
        return self._urgent_job(job)

    def plain(self, request: Request, doc: str = "") -> asyncio.Future[Completion]:
        """Plain greedy decoding of `request` with no draft: the conventional answer.

        With `doc`, decoding starts from the prefix that document's session has cached, as
        a server with a prompt cache would (its draft is neither used nor touched).
        """
        with self._cond:
            self._preempt_drafting(None)
        job = _Job("plain", 0, doc, request=request, future=self._loop.create_future())
        return self._urgent_job(job)

    def close(self, doc: str) -> None:
        """Forget a document: its pending draft, its answer and its engine session."""
        with self._cond:
            if self._drafts.pop(doc, None) is not None:
                self._counts["dropped"] += 1
            self._verified.pop(doc, None)
            self._edited.pop(doc, None)
            self._written.pop(doc, None)
            self._drop_queued_drafts(doc)
            self._fail_expected(Superseded("the document was closed"), doc)
            self._supersede(doc, next(self._tickets))
        self._urgent_job(_Job("close", 0, doc))

    def drop_drafts(self) -> None:
        """Stop all drafting (drafting was switched off)."""
        with self._cond:
            self._counts["dropped"] += len(self._drafts)
            self._drafts.clear()
            self._fail_expected(Superseded("drafting was switched off"))
            for job in self._running:
                if job.kind == "draft":
                    self._supersede(job.doc, next(self._tickets))

    def stop(self) -> None:
        """Stop the thread after the current forward; waiting callers get WorkerStoppedError."""
        with self._cond:
            stopping = WorkerStoppedError("the server is stopping")
            for job in [*self._urgent, *self._drafts.values()]:
                for future in [job.future, *job.waiters]:
                    if future is not None:
                        self._settle(future, error=stopping)
            self._fail_expected(stopping)
            self._urgent.clear()
            self._drafts.clear()
            for job in self._running:
                if job.doc:
                    self._supersede(job.doc, next(self._tickets))
            self._urgent.appendleft(_Job("stop", 0))
            self._cond.notify()

    # -- scheduling (callers hold the lock) ---------------------------------------------------

    def _await_draft(
        self, doc: str, request: Request, future: asyncio.Future[Any], invoked: bool = False
    ) -> bool:
        """Let a trigger wait for the document's draft when that draft is this very request.

        The draft is the work the trigger needs: it goes on undisturbed (a pending one moves
        ahead of everything else), other documents' drafting yields, and the trigger gets its
        completion. Paused documents' drafts yield only to a person (an `invoked` trigger, or
        one whose document is at rest: `_at_rest`), not to an editor's request while typing.
        A trigger that stops waiting leaves the draft running as drafting.
        """
        running = [j for j in self._running if j.kind == "draft" and j.doc == doc]
        job = next((j for j in [*running, *self._queued_drafts(doc)] if j.request == request), None)
        pending = self._drafts.get(doc)
        if job is None and pending is not None and pending.request == request:
            job = self._drafts.pop(doc)
            self._urgent.append(job)
            self._cond.notify()
        if job is None:
            return False
        if not job.waiters:
            job.waited_since = time.monotonic()
        job.waiters.append(future)
        person = invoked or self._at_rest(doc, time.monotonic())
        self._preempt_drafting(doc, waited_for=False, paused=not person)
        future.add_done_callback(lambda f: self._detach(job, f))
        return True

    def _detach(self, job: _Job, future: asyncio.Future[Any]) -> None:
        """A trigger stopped waiting: a queued draft nobody waits for goes back to drafting."""
        if not future.cancelled():
            return
        with self._cond:
            if future in job.waiters:
                job.waiters.remove(future)
            if job.waiters or job.kind != "draft" or not any(j is job for j in self._urgent):
                return
            self._urgent.remove(job)
            if job.doc not in self._drafts:
                self._drafts[job.doc] = job
            else:
                self._counts["dropped"] += 1

    def expects(self, doc: str, request: Request) -> bool:
        """True when a trigger waits for a draft of `request` that is not submitted."""
        with self._cond:
            return any(wanted == request for wanted, _ in self._expected.get(doc, []))

    def _unexpect(self, doc: str, future: asyncio.Future[Any]) -> None:
        with self._cond:
            waiting = self._expected.get(doc, [])
            waiting[:] = [(r, f) for r, f in waiting if f is not future]
            if not waiting:
                self._expected.pop(doc, None)

    def _answer_expected(
        self, doc: str, request: Request, result: Any = None, error: BaseException | None = None
    ) -> None:
        """Settle the triggers expecting the draft of `request` (the lock is held)."""
        waiting = self._expected.pop(doc, [])
        for wanted, future in waiting:
            if wanted == request:
                self._settle(future, result=result, error=error)
        rest = [(r, f) for r, f in waiting if r != request]
        if rest:
            self._expected[doc] = rest

    def _fail_expected(self, error: BaseException, doc: str | None = None) -> None:
        """Settle with `error` the triggers expecting a draft: of `doc`, or of every document."""
        for key in [doc] if doc is not None else list(self._expected):
            for _, future in self._expected.pop(key, []):
                self._settle(future, error=error)

    def _queued_drafts(self, doc: str | None = None) -> list[_Job]:
        """Drafts moved ahead among the urgent jobs for a trigger: of `doc`, or of any document."""
        return [j for j in self._urgent if j.kind == "draft" and doc in (None, j.doc)]

    def _drop_queued_drafts(self, doc: str) -> None:
        """Drafts of `doc` moved ahead for a trigger are stale once newer text arrives."""
        for job in self._queued_drafts(doc):
            self._urgent.remove(job)
            self._counts["dropped"] += 1
            for waiter in job.waiters:
                self._settle(waiter, error=Superseded("the document changed"))

    def _urgent_job(self, job: _Job) -> Any:
        with self._cond:
            self._urgent.append(job)
            self._cond.notify()
        return job.future

    def _supersede(self, doc: str, ticket: int, soft: bool = False) -> None:
        if self._engine is not None:
            self._engine.supersede(doc, ticket, soft=soft)

    def _quiet(self, doc: str, now: float) -> float:
        """Seconds since the document's last edit (infinite when it was never edited)."""
        edited = self._edited.get(doc)
        return float("inf") if edited is None else now - edited

    def _at_rest(self, doc: str, now: float) -> bool:
        """True when the document's typist has written its spec or paused (`PAUSED_S`)."""
        return doc in self._written or self._quiet(doc, now) >= PAUSED_S

    def _paused(self, job: _Job, now: float) -> bool:
        """True for the draft of a document whose typist is at rest (`_at_rest`)."""
        return job.kind == "draft" and self._at_rest(job.doc, now)

    def _person_waits(self, job: _Job, now: float) -> bool:
        """True when a person waits for this draft, or will any moment: a trigger that waited
        `OVERDUE_S`, or the draft of a document at rest (a trigger after the pause is one)."""
        overdue = bool(job.waiters) and now - job.waited_since >= OVERDUE_S
        return overdue or self._paused(job, now)

    def _leader(self, jobs: list[_Job], now: float) -> _Job | None:
        """Of the drafts people wait for, the one whose spec was written first, else the one
        whose document has been quiet longest."""
        waiting = [j for j in jobs if self._person_waits(j, now)]
        return max(waiting, key=lambda j: self._precedence(j.doc, now), default=None)

    def _precedence(self, doc: str, now: float) -> tuple[bool, float]:
        """How long the document has been written (those go first), else quiet."""
        written = self._written.get(doc)
        return (True, now - written) if written is not None else (False, self._quiet(doc, now))

    def _preempt_drafting(
        self, keep: str | None, waited_for: bool = True, paused: bool = False
    ) -> None:
        """Stop other documents' running drafts at their next forward and queue them again.

        A draft a trigger waits for goes back among the urgent jobs, its trigger with it;
        without `waited_for` such drafts go on (the new trigger's draft joins them), and
        with `paused` so do paused documents' drafts.
        """
        now = time.monotonic()
        for running in self._running:
            if running.kind != "draft" or running.doc == keep:
                continue
            if (running.waiters and not waited_for) or (paused and self._paused(running, now)):
                continue
            self._requeue(running)

    def _requeue(self, running: _Job) -> None:
        """Stop a running draft at its next forward and queue it again (its triggers with it)."""
        if running.stopping:
            return
        running.stopping = True
        ticket = next(self._tickets)
        queued = self._queued_drafts(running.doc)
        pending = self._drafts.get(running.doc) or next(iter(queued), None)
        if pending is not None:
            pending.ticket = ticket  # newer: it serves the document (stale triggers fail)
        else:
            again = replace(running, ticket=ticket, waiters=running.waiters, stopping=False)
            running.waiters = []
            if again.waiters:
                self._urgent.append(again)
            else:
                self._drafts[running.doc] = again
            self._counts["submitted"] += 1
        self._supersede(running.doc, ticket)

    def _abandoned(self, job: _Job, resume: bool) -> None:
        """A caller stopped waiting (request cancelled): stop the job, maybe keep it as a draft."""
        with self._cond:
            queued = any(j is job for j in self._urgent)
            if queued:
                self._urgent.remove(job)
            elif not any(j is job for j in self._running):
                return
            ticket = next(self._tickets)
            if resume and job.request is not None and job.doc not in self._drafts:
                self._drafts[job.doc] = _Job("draft", ticket, job.doc, job.request, job.tag)
                self._counts["submitted"] += 1
            elif job.doc in self._drafts:
                self._drafts[job.doc].ticket = ticket
            self._supersede(job.doc, ticket)
            self._cond.notify()

    # -- the thread ---------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            job = self._next()
            if job.kind == "stop":
                return
            with self._cond:
                self._working = (job.kind, time.perf_counter())
            try:
                if job.kind == "draft" and self._batch_limit() > 1:
                    self._do_drafts([job])  # others join it; each finished as its session ends
                    continue
                outcome = self._do(job)
            finally:
                self._worked()
            with self._cond:  # before the callers hear of it, so stats never see them running
                self._running = []
            self._finish(job, outcome)

    def _worked(self) -> None:
        with self._cond:
            assert self._working is not None
            kind, began = self._working
            self._busy[kind] += time.perf_counter() - began
            self._working = None

    def _finish(self, job: _Job, outcome: Any) -> None:
        if isinstance(outcome, Superseded):
            self._superseded(job, outcome)
        elif isinstance(outcome, Exception):
            self._failed(job, outcome)
        else:
            self._done(job, outcome)

    def _next(self) -> _Job:
        """The next job (others may join it: `_joining`): urgent jobs in order, but among
        drafts the one a person has waited for longest (`_leader`) goes first; else the
        oldest pending draft."""
        with self._cond:
            while not self._urgent and not self._drafts:
                self._cond.wait()
            head = self._urgent[0] if self._urgent else None
            leader = None
            if head is None or head.kind == "draft":
                queued = [*self._queued_drafts(), *self._drafts.values()]
                leader = self._leader(queued, time.monotonic())
            if leader is not None:
                self._take(leader)
                job = leader
            elif head is not None:
                job = self._urgent.popleft()
            else:
                job = self._drafts.pop(next(iter(self._drafts)))
            self._running = [job]
            return job

    def _batch_limit(self) -> int:
        """How many documents' drafts run together: 1 unless the engine batches sessions."""
        engine = self._engine
        return engine.batch_limit if engine is not None else 1

    def _do(self, job: _Job) -> Any:
        """Run one job: its result, or the exception it ended with."""
        try:
            return self._do_one(job)
        except Exception as exc:  # noqa: BLE001 - thread boundary: the error goes to the caller
            return exc

    def _do_drafts(self, jobs: list[_Job]) -> None:
        """Several documents' drafts in lockstep, each finished (its callers told) as soon as
        its own session ends: a trigger's answer need not wait for the longest draft."""
        from inference.engine.engine import Update

        engine = self._engine
        assert engine is not None
        finished: set[int] = set()

        def finish(i: int, outcome: Any) -> None:
            finished.add(i)
            with self._cond:  # before the callers hear of it, so stats never see it running
                self._running = [j for j in self._running if j is not jobs[i]]
            self._finish(jobs[i], outcome)

        def start(batch: list[_Job]) -> list[Update]:
            updates = []
            for job in batch:
                assert job.request is not None
                self._open_session(engine, job.doc)
                if not engine.is_verified(job.doc, job.request):
                    self._emit(DraftEvent(job.doc, job.tag, "regenerating"))
                updates.append(Update(job.doc, job.request, job.ticket, job.min_forwards))
            return updates

        def admit() -> list[Update]:
            joining = self._joining()
            jobs.extend(joining)
            return start(joining)

        try:
            engine.update_many(start(jobs), on_done=finish, admit=admit)
        except Exception as exc:  # noqa: BLE001 - thread boundary: the error goes to the caller
            for i in range(len(jobs)):
                if i not in finished:
                    finish(i, exc)

    def _joining(self) -> list[_Job]:
        """Drafts that join the running ones at the next step (continuous batching).

        While a person waits (`_person_waits`), the draft they have waited for longest
        (`_leader`) runs alone: on a CPU a forward over two sequences costs about one and a
        half (docs/server.md), and the drafts of documents still being typed are made stale by
        the next word. Otherwise drafts triggers wait for come first, the others only while no
        trigger waits. None while a job that needs the engine alone is queued: the running
        drafts end, it runs.
        """
        with self._cond:
            if any(j.kind not in ("draft", "close") for j in self._urgent):
                return []
            now = time.monotonic()
            urgent = self._queued_drafts()
            going_on = [j for j in self._running if not j.stopping]
            leader = self._leader([*going_on, *urgent, *self._drafts.values()], now)
            closing = {j.doc for j in self._urgent if j.kind == "close"}
            busy = {j.doc for j in self._running} | closing
            if leader is not None:
                for job in self._running:
                    if job is not leader:
                        self._requeue(job)  # the machine goes to the person who waited longest
                if any(j is leader for j in self._running) or leader.doc in busy:
                    return []  # it runs already, or joins once its document's old work ends
                self._take(leader)
                self._running.append(leader)
                return [leader]
            room = self._batch_limit() - len(self._running)
            joining: list[_Job] = []
            for job in urgent:
                if len(joining) < room and job.doc not in busy:
                    self._urgent.remove(job)
                    joining.append(job)
                    busy.add(job.doc)
            waited = any(j.waiters for j in [*self._running, *joining]) or any(
                j.kind == "draft" for j in self._urgent
            )
            for doc in [] if waited else list(self._drafts):
                if len(joining) < room and doc not in busy:
                    joining.append(self._drafts.pop(doc))
            self._running.extend(joining)
            return joining

    def _take(self, job: _Job) -> None:
        """Remove a job from the urgent queue or the pending drafts, wherever it waits."""
        if any(j is job for j in self._urgent):
            self._urgent.remove(job)
        elif self._drafts.get(job.doc) is job:
            del self._drafts[job.doc]

    def _open_session(self, engine: Engine, doc: str) -> None:
        if doc not in self._open:
            engine.open(doc)
            self._open.add(doc)

    def _do_one(self, job: _Job) -> Any:
        if job.kind == "load":
            assert job.config is not None
            return self._load(job.config)
        engine = self._engine
        if engine is None:
            raise NotReadyError("no model is loaded")
        if job.kind == "close":
            engine.close(job.doc)
            self._open.discard(job.doc)
            return None
        assert job.request is not None
        if job.kind == "plain":
            cached_by = job.doc if job.doc in self._open else None
            return engine.generate(job.request, cached_by=cached_by)
        self._open_session(engine, job.doc)
        if job.kind == "finalize":
            return engine.finalize(job.doc, job.request, job.ticket)
        if not engine.is_verified(job.doc, job.request):
            self._emit(DraftEvent(job.doc, job.tag, "regenerating"))
        return engine.update(job.doc, job.request, job.ticket, min_forwards=job.min_forwards)

    def _load(self, config: EngineConfig) -> None:
        engine = self._load_engine(config)
        with self._cond:
            self._engine = engine
            self.config = config
            self._open.clear()
            self._verified.clear()

    def _done(self, job: _Job, result: Any) -> None:
        if job.kind == "load":
            with self._cond:
                self._loading -= 1
        answered = isinstance(result, Completion) and result.finished
        if answered and job.request is not None and job.kind in ("draft", "finalize"):
            with self._cond:
                self._verified[job.doc] = (job.request, result)
                self._answer_expected(job.doc, job.request, result=result)
        if job.kind == "draft":
            with self._cond:
                self._counts["processed"] += 1
            self._emit(DraftEvent(job.doc, job.tag, "verified", result))
        elif job.future is not None:
            self._settle(job.future, result=result)
        for waiter in job.waiters:
            self._settle(waiter, result=result)

    def _superseded(self, job: _Job, exc: Superseded) -> None:
        for waiter in job.waiters:  # a newer version came: the trigger's answer is stale
            self._settle(waiter, error=exc)
        if job.kind != "draft":
            if job.future is not None:
                self._settle(job.future, error=exc)
            return
        with self._cond:
            self._counts["superseded"] += 1
        engine = self._engine
        if engine is None or job.request is None:
            return
        try:
            partial = engine.draft_of(job.doc, job.request)
        except PrewriteError:
            return
        self._emit(DraftEvent(job.doc, job.tag, "accepted", partial))

    def _failed(self, job: _Job, exc: Exception) -> None:
        for waiter in job.waiters:
            self._settle(waiter, error=exc)
        if job.kind == "draft" and job.request is not None:
            with self._cond:
                self._answer_expected(job.doc, job.request, error=exc)
        if job.kind == "load":
            with self._cond:
                self._loading -= 1
        if job.kind == "draft":
            with self._cond:
                self._counts["failed"] += 1
            self._emit(DraftEvent(job.doc, job.tag, "failed", error=exc))
        elif job.future is not None:
            self._settle(job.future, error=exc)

    # -- back to the loop -----------------------------------------------------------------------

    def _emit(self, event: DraftEvent) -> None:
        self._call_soon(self._on_draft, event)

    def _settle(
        self, future: asyncio.Future[Any], result: Any = None, error: BaseException | None = None
    ) -> None:
        def settle() -> None:
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)

        self._call_soon(settle)

    def _call_soon(self, callback: Callable[..., None], *args: Any) -> None:
        # A closed loop means the server is exiting and nobody waits.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(callback, *args)
