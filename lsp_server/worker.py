"""The engine worker: one thread owns the model; the event loop hands it jobs and gets futures back.

Three pieces: the schedule (scheduling.py) decides what runs next from the jobs, the typing and
the clock; `Waiting` (waiting.py) keeps drafts' finished answers and the triggers expecting a
draft not submitted yet; this module is the thread. It holds one lock around both, runs the
jobs on the engine (`DraftEngine`, engine_api.py), tells the engine of the stops the schedule
decides, and hands results back with `loop.call_soon_threadsafe`; it never calls its caller
under the lock.

Every job carries a ticket from one counter; the engine's `supersede(doc, ticket)` makes work
with an older ticket stop at its next forward and leaves the engine session consistent, so the
next job resumes from it. When the engine batches sessions (llama.cpp), the drafts of several
documents run together, one batched forward per step (`update_many`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from inference.api import Completion, Request, Rewrite, Update
from inference.config import EngineConfig
from inference.errors import PrewriteError, Superseded
from inference.examples.search import SEARCH_TEMPERATURE
from lsp_server.engine_api import DraftEngine
from lsp_server.errors import NotReadyError, WorkerStoppedError
from lsp_server.scheduling import BACKGROUND, Job, JobKind, Schedule, Stop
from lsp_server.waiting import Futures, Waiting

if TYPE_CHECKING:
    from inference.api import RuntimeInfo

EventStatus = Literal["regenerating", "accepted", "verified", "failed"]


BACKGROUND_COUNTS = ("submitted", "processed", "dropped", "failed")


def respec_session(doc: str) -> str:
    """The engine session a document's respecs run in (its drafts run in `doc`'s)."""
    return f"{doc}\x00respec"


def search_session(doc: str) -> str:
    """The id a document's searches are stopped by (they decode from `doc`'s cache)."""
    return f"{doc}\x00search"


def prefill_session(doc: str) -> str:
    """The id a document's prefill is stopped by (it encodes into `doc`'s session)."""
    return f"{doc}\x00prefill"


def background_session(job: Job) -> str:
    """The engine session id whose `supersede` stops a background job."""
    sessions = {"respec": respec_session, "prefill": prefill_session}
    return sessions.get(job.kind, search_session)(job.doc)


@dataclass(frozen=True)
class DraftEvent:
    """What became of a draft job; `tag` is the label its caller gave it."""

    doc: str
    tag: Any
    status: EventStatus
    completion: Completion | None = None
    error: BaseException | None = None


def _load_engine(config: EngineConfig) -> DraftEngine:
    # Imported here: torch and the model load on the worker thread, never at server start.
    from inference.adapters.adapter import with_adapter_settings
    from inference.config import validate_engine_config
    from inference.loading import load_engine

    if config.adapter:  # the adapter's prompt format and system prompt, unless set explicitly
        config = validate_engine_config(with_adapter_settings(config.model_dump()))
    return load_engine(config)


class Worker:
    """Runs engine jobs on its own thread; every public method is called from the event loop."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        on_draft: Callable[[DraftEvent], None],
        load_engine: Callable[[EngineConfig], DraftEngine] | None = None,
    ):
        self._loop = loop
        self._on_draft = on_draft
        self._load_engine = load_engine or _load_engine
        self._cond = threading.Condition()  # guards the schedule, the waiting and the figures
        self._schedule = Schedule()
        self._waiting = Waiting()
        self._busy: defaultdict[str, float] = defaultdict(float)  # engine seconds by job kind
        self._working: tuple[str, float] | None = None  # the job kind at work, since when
        self._loading = 0
        self._engine: DraftEngine | None = None
        self._open: set[str] = set()  # engine sessions (touched on the worker thread only)
        self.config: EngineConfig | None = None  # the loaded model's, `auto` resolved
        self.model_choice = ""  # why that model ("as set", or "auto: " and what it found here)
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
        return self._waiting.verified(doc, request)

    def runtime(self) -> RuntimeInfo | None:
        """What runs the loaded model (kind, device, threads), or None before a model loads."""
        engine = self._engine
        return engine.runtime_info() if engine is not None else None

    def memory(self) -> dict[str, int]:
        """The documents' caches: bytes held, the budget, evictions so far (by either)."""
        engine = self._engine
        if engine is None:
            return {}
        use = engine.cache_use()
        return {"cacheBytes": use.held, "budgetBytes": use.budget, "evictions": use.evictions}

    def forwards(self) -> dict[str, int]:
        """Model forwards so far by phase (drafting, residual, baseline)."""
        engine = self._engine
        return engine.forwards() if engine is not None else {}

    def busy(self) -> dict[str, float]:
        """Seconds the engine has worked so far by job kind (draft, finalize, plain, load,
        close): against the wall clock, how much of the machine the server's work takes."""
        with self._cond:
            busy = defaultdict(float, self._busy)
            if self._working is not None:  # the job at work counts up to now
                kind, began = self._working
                busy[kind] += time.perf_counter() - began
        return {kind: round(seconds, 3) for kind, seconds in busy.items()}

    def background_stats(self, kind: JobKind) -> dict[str, int]:
        """Counts of one kind of background job (respec, search): submitted = processed +
        dropped + failed + pending."""
        with self._cond:
            counts = {key: self._schedule.counts[f"{kind}_{key}"] for key in BACKGROUND_COUNTS}
            counts["pending"] = self._schedule.pending_background(kind)
        return counts

    def stats(self) -> dict[str, int]:
        """Draft job counts: submitted = processed + superseded + dropped + failed + pending."""
        keys = ("submitted", "processed", "superseded", "dropped", "failed")
        with self._cond:
            counts = {key: self._schedule.counts[key] for key in keys}
            counts["pending"] = self._schedule.pending()
        return counts

    # -- jobs ---------------------------------------------------------------------------------

    def load(self, config: EngineConfig) -> asyncio.Future[None]:
        """Load a model; the current one keeps serving until the new one is in place."""
        with self._cond:
            self._loading += 1
        return self._urgent_job(Job("load", 0, config=config, future=self._loop.create_future()))

    def edited(self, doc: str, written: bool = False) -> None:
        """The document was just edited: its typist is typing (see `PAUSED_S`), or, when
        `written`, has finished its spec (closed it, or moved on past it): its answer is next."""
        with self._cond:
            self._schedule.typing.edited(doc, time.monotonic(), written)

    def draft(self, doc: str, request: Request, tag: Any, min_forwards: int = 0) -> None:
        """Bring the document's draft up to `request`, replacing any draft still pending.

        The running draft of the document stops once it has run its own `min_forwards`, so
        a draft makes progress even while keystrokes come faster than forwards.
        """
        with self._cond:
            ticket = self._schedule.ticket()
            job = Job("draft", ticket, doc, request, tag, min_forwards=min_forwards)
            self._yield_background()
            for stale in self._schedule.submit(job):
                self._fail(stale.waiters, Superseded("the document changed"))
            self._supersede(doc, ticket, soft=True)
            waiting, stale_expected = self._waiting.submitted(doc, request)
            for future in waiting:
                self._await_draft(doc, request, future)
            self._fail(stale_expected, Superseded("the document changed"))
            self._cond.notify()

    def draft_for(
        self, doc: str, request: Request, tag: Any, min_forwards: int = 0
    ) -> asyncio.Future[Completion]:
        """`draft`, with a trigger waiting on that draft (it goes first: `when_drafted`)."""
        future: asyncio.Future[Completion] = self._loop.create_future()
        with self._cond:
            self.draft(doc, request, tag, min_forwards)
            self._await_draft(doc, request, future)
        return future

    def when_drafted(
        self, doc: str, request: Request, expect: bool = True
    ) -> asyncio.Future[Completion] | None:
        """The completion of the document's draft for `request`, without disturbing drafting.

        For triggers that come while the user types (an editor's automatic request): the draft
        running or queued for this very request is waited for and goes first. With no such
        draft, the trigger waits for it once it is submitted (drafting waits for the end of a
        word), or, unless `expect`, None: the caller submits it (`draft_for`). A draft for
        other text makes the answer stale (`Superseded`); nothing is cancelled.
        """
        future: asyncio.Future[Completion] = self._loop.create_future()
        with self._cond:
            verified = self._waiting.verified(doc, request)
            if verified is not None:
                future.set_result(verified)
                return future
            if self._await_draft(doc, request, future):
                return future
            if not expect:
                return None
            self._waiting.expect(doc, request, future)
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
            ticket = self._schedule.ticket()
            self._schedule.drop_pending(doc)  # the trigger covers it
            job = Job("finalize", ticket, doc, request, tag, future=future)
            self._yield_background()
            self._supersede(doc, ticket)
            self._stop(self._schedule.preempt(doc, time.monotonic()))
        future.add_done_callback(lambda f: self._abandoned(job, resume) if f.cancelled() else None)
        return self._urgent_job(job)

    def plain(self, request: Request, doc: str = "") -> asyncio.Future[Completion]:
        """Plain greedy decoding of `request` with no draft: the conventional answer.

        With `doc`, decoding starts from the prefix that document's session has cached, as
        a server with a prompt cache would (its draft is neither used nor touched).
        """
        with self._cond:
            self._yield_background()
            self._stop(self._schedule.preempt(None, time.monotonic()))
        job = Job("plain", 0, doc, request=request, future=self._loop.create_future())
        return self._urgent_job(job)

    def respec(
        self, doc: str, request: Request, body: str, before: Request | None = None
    ) -> asyncio.Future[Rewrite]:
        """Check the document's function `body` against its changed spec (`request`; `before`:
        as it was), once no other work waits; it replaces the document's pending respec (whose
        caller gets `Superseded`), and the document's next edit drops it (`drop_background`)."""
        job = Job("respec", 0, doc, request, body=body, before=before)
        return self._background(job)

    def sample(self, doc: str, request: Request, seed: int) -> asyncio.Future[Completion]:
        """An answer to the document's `request` sampled with `seed` (an alternative to a
        draft whose examples fail), decoded from the document's cached prefix once no other
        work waits; it replaces the document's pending one, and the document's next edit
        drops it (`drop_background`)."""
        return self._background(Job("search", 0, doc, request, seed=seed))

    def prefill(self, doc: str, request: Request) -> asyncio.Future[int]:
        """Encode the prompt of `request` into the document's session before its first draft
        (`Engine.prefill`), once no other work waits; the document's next edit drops it
        (`drop_background`). One document's at a time: the newest opened is the one read (an
        editor restoring twenty tabs at once gets one encoded, not twenty)."""
        with self._cond:
            for other in self._schedule.background_documents("prefill") - {doc}:
                self.drop_background(other, "prefill")
        return self._background(Job("prefill", 0, doc, request))

    def _background(self, job: Job) -> asyncio.Future[Any]:
        """Queue a background job: lowest priority, one of its kind per document."""
        job.future = future = self._loop.create_future()
        with self._cond:
            # the running one stops first: its stop's ticket must be older than this job's
            self._drop_running_background(job.doc, job.kind)
            job.ticket = self._schedule.ticket()
            old = self._schedule.submit_background(job)
            self._schedule.counts[f"{job.kind}_submitted"] += 1
            if old is not None:
                self._schedule.counts[f"{job.kind}_dropped"] += 1
                self._fail([old.future] if old.future else [], Superseded(f"a newer {job.kind}"))
            self._cond.notify()
        return future

    def drop_background(self, doc: str, kind: JobKind | None = None) -> None:
        """The document changed: its background jobs (of `kind`, or all), pending or running,
        are dropped."""
        with self._cond:
            for old in self._schedule.drop_background(doc, kind):
                self._schedule.counts[f"{old.kind}_dropped"] += 1
                self._fail([old.future] if old.future else [], Superseded("the document changed"))
            self._drop_running_background(doc, kind)

    def _drop_running_background(self, doc: str, kind: JobKind | None = None) -> None:
        running = self._schedule.running_background(doc)
        if running is not None and kind in (None, running.kind):
            running.again = False
            self._supersede(background_session(running), self._schedule.ticket())

    def _yield_background(self) -> None:
        """Other work came: a running background job stops at its next forward and queues
        again."""
        running = self._schedule.running_background()
        if running is not None and not running.stopping:
            running.stopping = running.again = True
            self._supersede(background_session(running), self._schedule.ticket())

    def close(self, doc: str) -> None:
        """Forget a document: its pending draft, its answer and its engine session."""
        self.drop_background(doc)
        with self._cond:
            for stale in self._schedule.forget(doc):
                self._fail(stale.waiters, Superseded("the document changed"))
            self._waiting.forget(doc)
            self._fail(self._waiting.drop(doc), Superseded("the document was closed"))
            self._supersede(doc, self._schedule.ticket())
        self._urgent_job(Job("close", 0, doc))

    def drop_drafts(self) -> None:
        """Stop all drafting (drafting was switched off)."""
        with self._cond:
            self._schedule.drop_drafts()
            self._fail(self._waiting.drop(), Superseded("drafting was switched off"))
            for job in self._schedule.running:
                if job.kind == "draft":
                    self._supersede(job.doc, self._schedule.ticket())

    def stop(self) -> None:
        """Stop the thread after the current forward; waiting callers get WorkerStoppedError."""
        with self._cond:
            stopping = WorkerStoppedError("the server is stopping")
            for job in self._schedule.stop():
                self._fail([f for f in [job.future, *job.waiters] if f is not None], stopping)
            self._fail(self._waiting.drop(), stopping)
            for job in self._schedule.running:
                if job.doc:
                    self._supersede(job.doc, self._schedule.ticket())
            self._cond.notify()

    def expects(self, doc: str, request: Request) -> bool:
        """True when a trigger waits for a draft of `request` that is not submitted."""
        with self._cond:
            return self._waiting.expects(doc, request)

    # -- triggers on drafts (callers hold the lock) -------------------------------------------

    def _await_draft(
        self, doc: str, request: Request, future: asyncio.Future[Any], invoked: bool = False
    ) -> bool:
        """Let a trigger wait for the document's draft when that draft is this very request.

        The draft is the work the trigger needs: it goes on undisturbed (a pending one moves
        ahead of everything else), other documents' drafting yields, and the trigger gets its
        completion. Paused documents' drafts yield only to a person (an `invoked` trigger, or
        one whose document is at rest: `Typing.at_rest`), not to an editor's request while
        typing. A trigger that stops waiting leaves the draft running as drafting.
        """
        job = self._schedule.draft_for(doc, request)
        if job is None:
            return False
        self._cond.notify()  # a pending draft may have moved ahead
        now = time.monotonic()
        job.wait(future, now)
        person = invoked or self._schedule.typing.at_rest(doc, now)
        self._stop(self._schedule.preempt(doc, now, waited_for=False, paused=not person))
        future.add_done_callback(lambda f: self._detach(job, f))
        return True

    def _detach(self, job: Job, future: asyncio.Future[Any]) -> None:
        """A trigger stopped waiting: a queued draft nobody waits for goes back to drafting."""
        if not future.cancelled():
            return
        with self._cond:
            self._schedule.detach(job, future)

    def _unexpect(self, doc: str, future: asyncio.Future[Any]) -> None:
        with self._cond:
            self._waiting.unexpect(doc, future)

    def _abandoned(self, job: Job, resume: bool) -> None:
        """A caller stopped waiting (request cancelled): stop the job, maybe keep it as a draft."""
        with self._cond:
            stop = self._schedule.abandon(job, resume)
            if stop is not None:
                self._stop([stop])
                self._cond.notify()

    def _urgent_job(self, job: Job) -> Any:
        with self._cond:
            self._schedule.queue(job)
            self._cond.notify()
        return job.future

    def _stop(self, stops: list[Stop]) -> None:
        """Tell the engine of the schedule's stops: older work of each document ends."""
        for doc, ticket in stops:
            self._supersede(doc, ticket)

    def _supersede(self, doc: str, ticket: int, soft: bool = False) -> None:
        if self._engine is not None:
            self._engine.supersede(doc, ticket, soft=soft)

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
                self._schedule.ended()
            self._finish(job, outcome)

    def _worked(self) -> None:
        with self._cond:
            assert self._working is not None
            kind, began = self._working
            self._busy[kind] += time.perf_counter() - began
            self._working = None

    def _finish(self, job: Job, outcome: Any) -> None:
        if isinstance(outcome, Superseded):
            self._superseded(job, outcome)
        elif isinstance(outcome, Exception):
            self._failed(job, outcome)
        else:
            self._done(job, outcome)

    def _next(self) -> Job:
        """The next job, once there is one (`Schedule.next`)."""
        with self._cond:
            while self._schedule.empty:
                self._cond.wait()
            return self._schedule.next(time.monotonic())

    def _batch_limit(self) -> int:
        """How many documents' drafts run together: 1 unless the engine batches sessions."""
        engine = self._engine
        return engine.batch_limit if engine is not None else 1

    def _do(self, job: Job) -> Any:
        """Run one job: its result, or the exception it ended with."""
        try:
            return self._do_one(job)
        except Exception as exc:  # noqa: BLE001 - thread boundary: the error goes to the caller
            return exc

    def _do_drafts(self, jobs: list[Job]) -> None:
        """Several documents' drafts in lockstep, each finished (its callers told) as soon as
        its own session ends: a trigger's answer need not wait for the longest draft."""
        engine = self._engine
        assert engine is not None
        finished: set[int] = set()

        def finish(i: int, outcome: Any) -> None:
            finished.add(i)
            with self._cond:  # before the callers hear of it, so stats never see it running
                self._schedule.ended(jobs[i])
            self._finish(jobs[i], outcome)

        def start(batch: list[Job]) -> list[Update]:
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

    def _joining(self) -> list[Job]:
        """Drafts that join the running ones at the next step (`Schedule.joining`)."""
        with self._cond:
            joining, stops = self._schedule.joining(time.monotonic(), self._batch_limit())
            self._stop(stops)
            return joining

    def _open_session(self, engine: DraftEngine, doc: str) -> None:
        if doc not in self._open:
            engine.open(doc)
            self._open.add(doc)

    def _do_one(self, job: Job) -> Any:
        if job.kind == "load":
            assert job.config is not None
            return self._load(job.config)
        engine = self._engine
        if engine is None:
            raise NotReadyError("no model is loaded")
        if job.kind == "close":
            for session in (job.doc, respec_session(job.doc), search_session(job.doc)):
                engine.close(session)
                self._open.discard(session)
            return None
        assert job.request is not None
        if job.kind == "respec":
            session = respec_session(job.doc)
            self._open_session(engine, session)
            return engine.rewrite(session, job.request, job.body, job.ticket, job.before)
        if job.kind == "prefill":
            self._open_session(engine, job.doc)
            return engine.prefill(job.doc, job.request, (prefill_session(job.doc), job.ticket))
        if job.kind == "search":
            cached_by = job.doc if job.doc in self._open else None
            stopped_by = (search_session(job.doc), job.ticket)
            return engine.sample(job.request, job.seed, SEARCH_TEMPERATURE, cached_by, stopped_by)
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
        from inference.loading import resolve_model

        config, why = resolve_model(config)  # `auto`: the pack chosen here
        engine = self._load_engine(config)
        with self._cond:
            self._engine = engine
            self.config, self.model_choice = config, why
            self._open.clear()
            self._waiting.forget()

    def _done(self, job: Job, result: Any) -> None:
        if job.kind in BACKGROUND:
            with self._cond:
                self._schedule.counts[f"{job.kind}_processed"] += 1
        if job.kind == "load":
            with self._cond:
                self._loading -= 1
        answered = isinstance(result, Completion) and result.finished
        if answered and job.request is not None and job.kind in ("draft", "finalize"):
            with self._cond:
                for future in self._waiting.answered(job.doc, job.request, result):
                    self._settle(future, result=result)
        if job.kind == "draft":
            with self._cond:
                self._schedule.counts["processed"] += 1
            self._emit(DraftEvent(job.doc, job.tag, "verified", result))
        elif job.future is not None:
            self._settle(job.future, result=result)
        for waiter in job.waiters:
            self._settle(waiter, result=result)

    def _superseded(self, job: Job, exc: Superseded) -> None:
        if job.kind in BACKGROUND and job.again:  # stopped for other work: it runs again later
            with self._cond:
                if self._schedule.requeue_background(job):
                    self._cond.notify()
                    return
        if job.kind in BACKGROUND:
            with self._cond:
                self._schedule.counts[f"{job.kind}_dropped"] += 1
        self._fail(job.waiters, exc)  # a newer version came: the trigger's answer is stale
        if job.kind != "draft":
            if job.future is not None:
                self._settle(job.future, error=exc)
            return
        with self._cond:
            self._schedule.counts["superseded"] += 1
        engine = self._engine
        if engine is None or job.request is None:
            return
        try:
            partial = engine.draft_of(job.doc, job.request)
        except PrewriteError:
            return
        self._emit(DraftEvent(job.doc, job.tag, "accepted", partial))

    def _failed(self, job: Job, exc: Exception) -> None:
        if job.kind in BACKGROUND:
            with self._cond:
                self._schedule.counts[f"{job.kind}_failed"] += 1
        self._fail(job.waiters, exc)
        if job.kind == "draft" and job.request is not None:
            with self._cond:
                self._fail(self._waiting.ended(job.doc, job.request), exc)
        if job.kind == "load":
            with self._cond:
                self._loading -= 1
        if job.kind == "draft":
            with self._cond:
                self._schedule.counts["failed"] += 1
            self._emit(DraftEvent(job.doc, job.tag, "failed", error=exc))
        elif job.future is not None:
            self._settle(job.future, error=exc)

    # -- back to the loop -----------------------------------------------------------------------

    def _emit(self, event: DraftEvent) -> None:
        self._call_soon(self._on_draft, event)

    def _fail(self, futures: Futures, error: BaseException) -> None:
        for future in futures:
            self._settle(future, error=error)

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
