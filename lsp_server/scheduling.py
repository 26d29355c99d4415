"""Who runs next: the engine's jobs, the documents' typing, and the policy over them and the clock.

No threads and no engine here: the worker (worker.py) holds its lock around every call, runs
the jobs picked, and tells the engine of the `Stop`s returned (work of a document older than a
ticket stops at its next forward).

Urgent jobs (load, finalize, plain, close) run first, in order. Drafts are coalesced: each
document has at most one pending draft, the newest; a newer one replaces it (the older is
counted as dropped). A trigger on one document preempts drafting of another and queues that
draft again. When the engine batches sessions, a draft submitted meanwhile joins the running
ones at the next step (`joining`) instead of waiting for the batch to end.

A person waiting goes first: a trigger that has waited `OVERDUE_S` (an editor's request while
typing is cancelled by the next keystroke sooner), and the draft of a document whose typist
paused (`PAUSED_S` without an edit) or has written the spec (closed it, or moved past it to
the body): its trigger may come any moment. Of those, a written spec goes before a pause, and
the one written (or quiet) longest runs alone until it is done; the drafts of documents still
being typed, which the next word makes stale, stop and wait, and an editor's request while
typing does not stop a paused document's draft.

Last come the background jobs: re-verifications of bodies against changed specs (`respec`),
sampled alternatives to a draft whose examples fail (`search`) and the prompt of a document
just opened, encoded before its first draft (`prefill`): one of each kind per
document, the newest, run only while no other job waits; the worker stops a running one when
other work comes (it runs again afterwards) and drops a document's at its next edit.
"""

from __future__ import annotations

import itertools
from collections import Counter, deque
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from inference.api import Request
from inference.config import EngineConfig

if TYPE_CHECKING:
    import asyncio

# A trigger that has waited this long is a person waiting (an editor's request while typing is
# cancelled by the next keystroke sooner).
OVERDUE_S = 0.25
# A document this long without an edit is paused: its draft is the next answer someone asks
# for (the typing benchmark's keys come 0.05-0.3 s apart within a word).
PAUSED_S = 0.25
JobKind = Literal[
    "load", "draft", "finalize", "plain", "close", "stop", "respec", "search", "prefill"
]
# run only while nothing else waits
BACKGROUND: tuple[JobKind, ...] = ("respec", "search", "prefill")
Stop = tuple[str, int]  # (document, ticket): the document's work with an older ticket stops


@dataclass(eq=False)
class Job:
    """One engine job; every job carries a ticket from one counter (`Schedule.ticket`)."""

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
    body: str = ""  # a respec's: the body a person wrote, checked against `request`
    before: Request | None = None  # a respec's: the request before the spec changed
    again: bool = False  # a background job stopped for other work: it queues again when it ends
    seed: int = 0  # a search's: the seed its alternative is sampled with

    def wait(self, future: asyncio.Future[Any], now: float) -> None:
        """A trigger waits for this job."""
        if not self.waiters:
            self.waited_since = now
        self.waiters.append(future)


class Typing:
    """When each document was last edited, and since when its spec has been written."""

    def __init__(self) -> None:
        self._edited: dict[str, float] = {}  # the last edit of each document (time.monotonic)
        self._written: dict[str, float] = {}  # since when a document's spec has been written

    def edited(self, doc: str, now: float, written: bool = False) -> None:
        """An edit at `now`: typing on, or, when `written`, the spec is finished."""
        self._edited[doc] = now
        if written:
            self._written.setdefault(doc, now)
        else:
            self._written.pop(doc, None)

    def forget(self, doc: str) -> None:
        """The document was closed."""
        self._edited.pop(doc, None)
        self._written.pop(doc, None)

    def quiet(self, doc: str, now: float) -> float:
        """Seconds since the document's last edit (infinite when it was never edited)."""
        edited = self._edited.get(doc)
        return float("inf") if edited is None else now - edited

    def at_rest(self, doc: str, now: float) -> bool:
        """True when the document's typist has written its spec or paused (`PAUSED_S`)."""
        return doc in self._written or self.quiet(doc, now) >= PAUSED_S

    def precedence(self, doc: str, now: float) -> tuple[bool, float]:
        """How long the document has been written (those go first), else quiet."""
        written = self._written.get(doc)
        return (True, now - written) if written is not None else (False, self.quiet(doc, now))


class Schedule:
    """The jobs queued and running, and the decisions over them, the typing and the clock."""

    def __init__(self) -> None:
        self.urgent: deque[Job] = deque()
        self.drafts: dict[str, Job] = {}  # newest pending draft per document, oldest first
        # the newest pending background job of each kind and document, oldest first
        self.background: dict[tuple[JobKind, str], Job] = {}
        self.running: list[Job] = []  # one urgent job, or the drafts running together
        self.typing = Typing()
        self.counts: Counter[str] = Counter()  # what became of draft jobs (see `Worker.stats`)
        self._tickets = itertools.count(1)

    def ticket(self) -> int:
        """A ticket newer than every one given before."""
        return next(self._tickets)

    @property
    def empty(self) -> bool:
        """True when no job waits."""
        return not self.urgent and not self.drafts and not self.background

    def pending(self) -> int:
        """Draft jobs not ended: waiting or running."""
        running = sum(job.kind == "draft" for job in [*self.running, *self.urgent])
        return len(self.drafts) + running

    # -- the queues -------------------------------------------------------------------------

    def queue(self, job: Job) -> None:
        """An urgent job (load, finalize, plain, close) queues behind the others."""
        self.urgent.append(job)

    def submit(self, job: Job) -> list[Job]:
        """A document's newest draft replaces its pending one; the drafts of the document moved
        ahead for a trigger, stale now, are dropped and returned (their triggers are stale)."""
        if self.drafts.pop(job.doc, None) is not None:
            self.counts["dropped"] += 1
        stale = self.drop_queued(job.doc)
        self.drafts[job.doc] = job
        self.counts["submitted"] += 1
        return stale

    def drop_pending(self, doc: str) -> None:
        """A trigger or a close covers the document's pending draft."""
        if self.drafts.pop(doc, None) is not None:
            self.counts["dropped"] += 1

    def forget(self, doc: str) -> list[Job]:
        """The document was closed: its pending draft and its typing go, and its drafts moved
        ahead for a trigger (returned: their triggers are stale)."""
        self.drop_pending(doc)
        self.typing.forget(doc)
        return self.drop_queued(doc)

    def drop_drafts(self) -> None:
        """Drafting was switched off: every pending draft is dropped."""
        self.counts["dropped"] += len(self.drafts)
        self.drafts.clear()

    def stop(self) -> list[Job]:
        """The worker stops: the stop job goes first, the jobs waiting are dropped (returned)."""
        dropped = [*self.urgent, *self.drafts.values(), *self.background.values()]
        self.urgent.clear()
        self.drafts.clear()
        self.background.clear()
        self.urgent.appendleft(Job("stop", 0))
        return dropped

    def ended(self, job: Job | None = None) -> None:
        """A running job ended: `job`, or the one running alone."""
        self.running = [] if job is None else [j for j in self.running if j is not job]

    def queued_drafts(self, doc: str | None = None) -> list[Job]:
        """Drafts moved ahead among the urgent jobs for a trigger: of `doc`, or of any document."""
        return [j for j in self.urgent if j.kind == "draft" and doc in (None, j.doc)]

    def drop_queued(self, doc: str) -> list[Job]:
        """Drafts of `doc` moved ahead for a trigger are stale once newer text arrives."""
        stale = self.queued_drafts(doc)
        for job in stale:
            self.urgent.remove(job)
            self.counts["dropped"] += 1
        return stale

    def take(self, job: Job) -> None:
        """Remove a job from the urgent queue or the pending drafts, wherever it waits."""
        if any(j is job for j in self.urgent):
            self.urgent.remove(job)
        elif self.drafts.get(job.doc) is job:
            del self.drafts[job.doc]

    def draft_for(self, doc: str, request: Request) -> Job | None:
        """The draft of the document for exactly `request`, running or queued, for a trigger
        to wait on; a pending one moves ahead of everything else."""
        running = [j for j in self.running if j.kind == "draft" and j.doc == doc]
        job = next((j for j in [*running, *self.queued_drafts(doc)] if j.request == request), None)
        pending = self.drafts.get(doc)
        if job is None and pending is not None and pending.request == request:
            job = self.drafts.pop(doc)
            self.urgent.append(job)
        return job

    def detach(self, job: Job, future: asyncio.Future[Any]) -> None:
        """A trigger stopped waiting: a queued draft nobody waits for goes back to drafting."""
        if future in job.waiters:
            job.waiters.remove(future)
        if job.waiters or job.kind != "draft" or not any(j is job for j in self.urgent):
            return
        self.urgent.remove(job)
        if job.doc not in self.drafts:
            self.drafts[job.doc] = job
        else:
            self.counts["dropped"] += 1

    def abandon(self, job: Job, resume: bool) -> Stop | None:
        """A caller stopped waiting (request cancelled): stop the job, maybe keep it as a draft."""
        queued = any(j is job for j in self.urgent)
        if queued:
            self.urgent.remove(job)
        elif not any(j is job for j in self.running):
            return None
        ticket = self.ticket()
        if resume and job.request is not None and job.doc not in self.drafts:
            self.drafts[job.doc] = Job("draft", ticket, job.doc, job.request, job.tag)
            self.counts["submitted"] += 1
        elif job.doc in self.drafts:
            self.drafts[job.doc].ticket = ticket
        return job.doc, ticket

    def submit_background(self, job: Job) -> Job | None:
        """A document's newest background job replaces its pending one of the same kind
        (returned: its caller's answer is stale)."""
        old = self.background.pop((job.kind, job.doc), None)
        self.background[job.kind, job.doc] = job
        return old

    def requeue_background(self, job: Job) -> bool:
        """A background job stopped for other work queues again, unless a newer one of its
        kind waits for the document."""
        if (job.kind, job.doc) in self.background:
            return False
        job.ticket, job.stopping, job.again = self.ticket(), False, False
        self.background[job.kind, job.doc] = job
        return True

    def drop_background(self, doc: str, kind: JobKind | None = None) -> list[Job]:
        """The document changed: its pending background jobs (of `kind`, or all) go
        (returned)."""
        keys = [key for key in self.background if key[1] == doc and kind in (None, key[0])]
        return [self.background.pop(key) for key in keys]

    def background_documents(self, kind: JobKind) -> set[str]:
        """The documents with a background job of `kind` waiting or running."""
        waiting = {doc for key, doc in self.background if key == kind}
        return waiting | {j.doc for j in self.running if j.kind == kind}

    def running_background(self, doc: str | None = None) -> Job | None:
        """The background job running now: of `doc`, or of any document."""
        running = (j for j in self.running if j.kind in BACKGROUND and doc in (None, j.doc))
        return next(running, None)

    def pending_background(self, kind: JobKind) -> int:
        """Background jobs of `kind` waiting or running."""
        running = sum(j.kind == kind for j in self.running)
        return sum(key[0] == kind for key in self.background) + running

    # -- the policy -------------------------------------------------------------------------

    def paused(self, job: Job, now: float) -> bool:
        """True for the draft of a document whose typist is at rest (`Typing.at_rest`)."""
        return job.kind == "draft" and self.typing.at_rest(job.doc, now)

    def person_waits(self, job: Job, now: float) -> bool:
        """True when a person waits for this draft, or will any moment: a trigger that waited
        `OVERDUE_S`, or the draft of a document at rest (a trigger after the pause is one)."""
        overdue = bool(job.waiters) and now - job.waited_since >= OVERDUE_S
        return overdue or self.paused(job, now)

    def leader(self, jobs: list[Job], now: float) -> Job | None:
        """Of the drafts people wait for, the one whose spec was written first, else the one
        whose document has been quiet longest."""
        waiting = [j for j in jobs if self.person_waits(j, now)]
        return max(waiting, key=lambda j: self.typing.precedence(j.doc, now), default=None)

    def next(self, now: float) -> Job:
        """The next job, now running (others may join it: `joining`): urgent jobs in order, but
        among drafts the one a person has waited for longest (`leader`) goes first; else the
        oldest pending draft; else the oldest background job. Only when a job waits (not
        `empty`)."""
        head = self.urgent[0] if self.urgent else None
        leader = None
        if head is None or head.kind == "draft":
            leader = self.leader([*self.queued_drafts(), *self.drafts.values()], now)
        if leader is not None:
            self.take(leader)
            job = leader
        elif head is not None:
            job = self.urgent.popleft()
        elif self.drafts:
            job = self.drafts.pop(next(iter(self.drafts)))
        else:
            job = self.background.pop(next(iter(self.background)))
        self.running = [job]
        return job

    def joining(self, now: float, limit: int) -> tuple[list[Job], list[Stop]]:
        """Drafts that join the running ones at the next step (continuous batching, at most
        `limit` running), and the running drafts that stop to make way.

        While a person waits (`person_waits`), the draft they have waited for longest
        (`leader`) runs alone: on a CPU a forward over two sequences costs about one and a
        half (docs/server.md), and the drafts of documents still being typed are made stale by
        the next word. Otherwise drafts triggers wait for come first, the others only while no
        trigger waits. None while a job that needs the engine alone is queued: the running
        drafts end, it runs.
        """
        if any(j.kind not in ("draft", "close") for j in self.urgent):
            return [], []
        urgent = self.queued_drafts()
        going_on = [j for j in self.running if not j.stopping]
        leader = self.leader([*going_on, *urgent, *self.drafts.values()], now)
        closing = {j.doc for j in self.urgent if j.kind == "close"}
        busy = {j.doc for j in self.running} | closing
        if leader is not None:
            # the machine goes to the person who waited longest
            stops = [self.requeue(job) for job in self.running if job is not leader]
            stopped = [stop for stop in stops if stop is not None]
            if any(j is leader for j in self.running) or leader.doc in busy:
                return [], stopped  # it runs already, or joins once its document's old work ends
            self.take(leader)
            self.running.append(leader)
            return [leader], stopped
        room = limit - len(self.running)
        joining: list[Job] = []
        for job in urgent:
            if len(joining) < room and job.doc not in busy:
                self.urgent.remove(job)
                joining.append(job)
                busy.add(job.doc)
        waited = any(j.waiters for j in [*self.running, *joining]) or any(
            j.kind == "draft" for j in self.urgent
        )
        for doc in [] if waited else list(self.drafts):
            if len(joining) < room and doc not in busy:
                joining.append(self.drafts.pop(doc))
        self.running.extend(joining)
        return joining, []

    def preempt(
        self, keep: str | None, now: float, waited_for: bool = True, paused: bool = False
    ) -> list[Stop]:
        """Stop other documents' running drafts at their next forward and queue them again.

        A draft a trigger waits for goes back among the urgent jobs, its trigger with it;
        without `waited_for` such drafts go on (the new trigger's draft joins them), and
        with `paused` so do paused documents' drafts.
        """
        stops = []
        for running in self.running:
            if running.kind != "draft" or running.doc == keep:
                continue
            if (running.waiters and not waited_for) or (paused and self.paused(running, now)):
                continue
            stops.append(self.requeue(running))
        return [stop for stop in stops if stop is not None]

    def requeue(self, running: Job) -> Stop | None:
        """Stop a running draft at its next forward and queue it again (its triggers with it)."""
        if running.stopping:
            return None
        running.stopping = True
        ticket = self.ticket()
        queued = self.queued_drafts(running.doc)
        pending = self.drafts.get(running.doc) or next(iter(queued), None)
        if pending is not None:
            pending.ticket = ticket  # newer: it serves the document (stale triggers fail)
        else:
            again = replace(running, ticket=ticket, waiters=running.waiters, stopping=False)
            running.waiters = []
            if again.waiters:
                self.urgent.append(again)
            else:
                self.drafts[running.doc] = again
            self.counts["submitted"] += 1
        return running.doc, ticket
