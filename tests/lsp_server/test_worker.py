"""The engine worker's scheduling: coalescing, preemption, cancellation, failures.

Scheduling does not depend on the model, so these tests drive the worker with a stand-in
engine whose forwards wait on a gate: the test decides when work is in flight.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence

import pytest

from inference.api import (
    CacheUse,
    Completion,
    Cost,
    ForwardCounter,
    Request,
    Rewrite,
    RuntimeInfo,
    Update,
)
from inference.config import EngineConfig
from inference.errors import ContextOverflowError, ModelNotFoundError, Superseded
from lsp_server.engine_api import DraftEngine
from lsp_server.scheduling import OVERDUE_S, PAUSED_S
from lsp_server.worker import (
    DraftEvent,
    Worker,
    prefill_session,
    respec_session,
    search_session,
)

pytestmark = pytest.mark.timeout(60)

FORWARDS_PER_ANSWER = 3


class GatedEngine:
    """The engine's interface; answers are requests upper-cased; each forward waits on `gate`."""

    def __init__(self, config: EngineConfig):
        self.config = config
        self.batch_limit = 2 if config.model == "batching" else 1
        self.counter = ForwardCounter()
        self.calls: list[tuple[str, str, str]] = []  # (kind, session, request text)
        self.batches: list[list[str]] = []  # sessions of each update_many
        self.joined: list[list[str]] = []  # sessions admitted together into a running batch
        self.gate = threading.Event()
        self.gate.set()
        self.between = threading.Event()  # update_many: the next session may start
        self.between.set()
        self.waiting = threading.Event()  # set while a forward waits on the closed gate
        self.fail_on: str | None = None
        self._latest: dict[str, int] = {}
        self._newer: dict[str, int] = {}  # soft: stops work after its min_forwards
        self._done: dict[str, Request] = {}
        self._lock = threading.Lock()

    def open(self, sid: str) -> None:
        self._done.pop(sid, None)

    def close(self, sid: str) -> None:
        self._done.pop(sid, None)

    def supersede(self, sid: str, version: int, soft: bool = False) -> None:
        with self._lock:
            table = self._newer if soft else self._latest
            table[sid] = max(version, table.get(sid, 0))

    def update(
        self, sid: str, request: Request, version: int = 0, min_forwards: int = 0
    ) -> Completion:
        return self._sync("update", sid, request, version, "drafting", min_forwards)

    def update_many(
        self,
        updates: Sequence[Update],
        on_done: Callable[[int, Completion | Exception], None] | None = None,
        admit: Callable[[], Sequence[Update]] | None = None,
    ) -> list[Completion | Exception]:
        """Runs the updates one after another (the scheduling is what is under test); those
        admitted (after each) join at the end; in each group all but the first wait on
        `between`."""
        batch = [u.session_id for u in updates]
        self.batches.append(batch)
        queue, firsts = list(updates), {0}
        results: list[Completion | Exception] = []
        while True:
            joined = admit() if admit is not None else []
            if joined:
                firsts.add(len(queue))
                self.joined.append([u.session_id for u in joined])
            queue.extend(joined)
            batch.extend(u.session_id for u in joined)
            if len(results) == len(queue):
                return results
            i, u = len(results), queue[len(results)]
            if i not in firsts:
                self.between.wait()
            try:
                results.append(self.update(u.session_id, u.request, u.version, u.min_forwards))
            except (Superseded, ContextOverflowError) as exc:
                results.append(exc)
            if on_done is not None:
                on_done(i, results[-1])

    def finalize(self, sid: str, request: Request, version: int = 0) -> Completion:
        return self._sync("finalize", sid, request, version, "residual")

    def runtime_info(self) -> RuntimeInfo:
        return RuntimeInfo("gated", "cpu", "none", 1, "0")

    def cache_use(self) -> CacheUse:
        return CacheUse(held=len(self._done), budget=1 << 20, evictions=0)

    def forwards(self) -> dict[str, int]:
        return dict(self.counter.by_phase)

    def generate(self, request: Request, cached_by: str | None = None) -> Completion:
        self.calls.append(("generate", "", request.text))
        return self._answer(request, FORWARDS_PER_ANSWER)

    def is_verified(self, sid: str, request: Request) -> bool:
        return self._done.get(sid) == request

    def draft_of(self, sid: str, request: Request) -> Completion:
        return Completion("partial", [], "unfinished", Cost())

    def rewrite(
        self, sid: str, request: Request, body: str, version: int = 0, before: Request | None = None
    ) -> Rewrite:
        answer = self._sync("rewrite", sid, request, version, "respec")
        return Rewrite(body + answer.text, "stop", 0, body.count("\n"), answer.cost, version)

    def sample(
        self,
        request: Request,
        seed: int,
        temperature: float | None = None,
        cached_by: str | None = None,
        stopped_by: tuple[str, int] | None = None,
    ) -> Completion:
        sid, version = stopped_by or ("", 0)
        self._done.pop(sid, None)  # every sample decodes again
        answer = self._sync("sample", sid, request, version, "search")
        return Completion(f"{answer.text}#{seed}", [1], "stop", answer.cost)

    def prefill(
        self, session_id: str, request: Request, stopped_by: tuple[str, int] | None = None
    ) -> int:
        sid, version = stopped_by or ("", 0)
        self._done.pop(sid, None)
        self._sync("prefill", session_id, request, version, "prefill", stopper=sid)
        return len(request.text)

    def _sync(self, kind: str, sid: str, request: Request, version: int, phase: str,
              min_forwards: int = 0, stopper: str | None = None) -> Completion:  # fmt: skip
        self.calls.append((kind, sid, request.text))
        if request.text == self.fail_on:
            raise ContextOverflowError("the request is too long")
        work = 0 if self._done.get(sid) == request else FORWARDS_PER_ANSWER
        stopper = sid if stopper is None else stopper
        for done in range(work):
            with self._lock:
                soft = self._newer.get(stopper, 0) > version and done >= min_forwards
                if self._latest.get(stopper, 0) > version or soft:
                    raise Superseded(f"{sid}: {version}")
            # `waiting` only while held at the closed gate: a forward that ran through an open
            # one used to leave it set, and a later `wait_in_forward` returned at once
            while not self.gate.wait(timeout=0.005):
                self.waiting.set()
            self.waiting.clear()
            self.counter.record(phase, 1)
        self._done[sid] = request
        return self._answer(request, work)

    @staticmethod
    def _answer(request: Request, forwards: int) -> Completion:
        return Completion(request.text.upper(), [1], "stop", Cost(forwards=forwards))


class Harness:
    """A worker on the running loop with one GatedEngine, and the draft events it reported."""

    def __init__(self) -> None:
        self.engines: list[GatedEngine] = []
        self.events: list[DraftEvent] = []
        self.threads: set[int] = set()
        self._waiters: list[tuple[Callable[[DraftEvent], bool], asyncio.Future[DraftEvent]]] = []
        self.worker = Worker(asyncio.get_running_loop(), self._on_draft, self._load)

    @property
    def engine(self) -> GatedEngine:
        return self.engines[-1]

    def _load(self, config: EngineConfig) -> DraftEngine:  # the worker's protocol (mypy checks)
        if config.model == "missing":
            raise ModelNotFoundError("model 'missing' is nowhere")
        self.engines.append(GatedEngine(config))
        return self.engines[-1]

    def _on_draft(self, event: DraftEvent) -> None:
        self.threads.add(threading.get_ident())
        self.events.append(event)
        for waiter in list(self._waiters):
            if waiter[0](event) and not waiter[1].done():
                waiter[1].set_result(event)
                self._waiters.remove(waiter)

    async def event(self, doc: str, status: str, tag: object = None) -> DraftEvent:
        def match(e: DraftEvent) -> bool:
            return e.doc == doc and e.status == status and (tag is None or e.tag == tag)

        for seen in self.events:
            if match(seen):
                return seen
        future: asyncio.Future[DraftEvent] = asyncio.get_running_loop().create_future()
        self._waiters.append((match, future))
        return await future

    async def wait_in_forward(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.engine.waiting.wait)
        self.engine.waiting.clear()


@pytest.fixture
async def harness():
    harness = Harness()
    await harness.worker.load(EngineConfig(model="gated"))
    yield harness
    harness.engine.gate.set()
    harness.worker.stop()


def request(text: str) -> Request:
    return Request(text=text)


def assert_every_draft_accounted_for(stats: dict[str, int]) -> None:
    """Nothing pending, and each submitted draft ended one way: processed, superseded, ..."""
    assert stats["pending"] == 0 and stats["submitted"] == sum(
        stats[k] for k in ("processed", "superseded", "dropped", "failed")
    )


async def test_intermediate_versions_are_dropped_and_only_the_newest_is_drafted(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("v1"), 1)
    await harness.wait_in_forward()
    for version in range(2, 51):
        harness.worker.draft("a", request(f"v{version}"), version)
    harness.engine.gate.set()

    event = await harness.event("a", "verified", 50)

    assert event.completion is not None and event.completion.text == "V50"
    assert [c for c in harness.engine.calls if c[0] == "update"] == [
        ("update", "a", "v1"),
        ("update", "a", "v50"),
    ]
    assert (await harness.event("a", "accepted", 1)).completion is not None
    assert harness.worker.stats() == {
        "submitted": 50,
        "processed": 1,
        "superseded": 1,
        "dropped": 48,
        "failed": 0,
        "pending": 0,
    }


async def test_a_trigger_preempts_drafting_of_another_document_which_resumes_after(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    answer = harness.worker.finalize("b", request("b1"), 1)
    harness.engine.gate.set()

    assert (await answer).text == "B1"
    await harness.event("a", "verified", 1)
    calls = harness.engine.calls
    assert calls == [("update", "a", "a1"), ("finalize", "b", "b1"), ("update", "a", "a1")]


async def test_a_cancelled_trigger_goes_on_as_drafting(harness):
    harness.engine.gate.clear()
    answer = harness.worker.finalize("a", request("a1"), 7)
    await harness.wait_in_forward()
    answer.cancel()
    await asyncio.sleep(0)  # one loop turn: the future's done callbacks run
    harness.engine.gate.set()

    event = await harness.event("a", "verified", 7)

    assert event.completion is not None and event.completion.text == "A1"
    assert [c[0] for c in harness.engine.calls] == ["finalize", "update"]


async def test_a_cancelled_trigger_with_drafting_off_stops_at_its_next_forward(harness):
    harness.engine.gate.clear()
    answer = harness.worker.finalize("a", request("a1"), 7, resume=False)
    await harness.wait_in_forward()
    answer.cancel()
    await asyncio.sleep(0)  # one loop turn: the future's done callbacks run
    harness.engine.gate.set()
    await harness.worker.plain(request("sync"))  # queued behind it: the cancelled job ended

    assert harness.engine.counter.by_phase["residual"] == 1  # the forward under way, no more
    assert [c[0] for c in harness.engine.calls] == ["finalize", "generate"]  # no drafting
    assert harness.worker.stats()["submitted"] == 0


async def test_a_trigger_answers_from_the_verified_draft_without_forwards(harness):
    harness.worker.draft("a", request("a1"), 1)
    await harness.event("a", "verified", 1)

    assert harness.worker.verified("a", request("a1")) is not None
    assert harness.worker.verified("a", request("a2")) is None
    answer = await harness.worker.finalize("a", request("a1"), 2)
    assert answer.cost.forwards == 0


async def test_an_engine_failure_is_reported_and_the_next_job_works(harness):
    harness.engine.fail_on = "boom"
    harness.worker.draft("a", request("boom"), 1)
    failed = await harness.event("a", "failed", 1)
    assert isinstance(failed.error, ContextOverflowError)
    with pytest.raises(ContextOverflowError):
        await harness.worker.finalize("a", request("boom"), 2)

    harness.worker.draft("a", request("fine"), 3)
    assert (await harness.event("a", "verified", 3)).completion is not None
    assert harness.worker.stats()["failed"] == 1


async def test_busy_time_counts_each_kind_of_job_while_it_holds_the_engine(harness):
    held_s = 0.2
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    await asyncio.sleep(held_s)
    running = harness.worker.busy()  # the draft at work counts before it ends
    assert set(running) == {"load", "draft"} and running["draft"] >= held_s
    harness.engine.gate.set()
    await harness.event("a", "verified", 1)
    drafted = harness.worker.busy()["draft"]
    assert (await harness.worker.plain(request("x"))).text == "X"

    busy = harness.worker.busy()
    assert busy["draft"] == drafted  # idle, nothing more is counted
    assert {"load", "draft", "plain"} <= set(busy) and "finalize" not in busy


async def test_a_model_that_fails_to_load_leaves_the_loaded_one_serving(harness):
    with pytest.raises(ModelNotFoundError):
        await harness.worker.load(EngineConfig(model="missing"))

    assert harness.worker.ready
    assert harness.worker.config is not None and harness.worker.config.model == "gated"
    assert (await harness.worker.plain(request("x"))).text == "X"


async def test_model_auto_is_resolved_before_the_engine_loads(harness, monkeypatch):
    from inference import model_choice

    monkeypatch.setattr(model_choice, "_cpu_flags", lambda: frozenset({"avx2"}))
    monkeypatch.setattr(model_choice, "_cuda", lambda: False)
    await harness.worker.load(EngineConfig())  # the default: auto

    assert harness.engine.config.model == "qwen2.5-coder-0.5b"  # what the loader was given
    assert harness.worker.config is not None and harness.worker.config.model == "qwen2.5-coder-0.5b"
    assert "too slow" in harness.worker.model_choice
    await harness.worker.load(EngineConfig(model="gated"))
    assert harness.worker.model_choice == "as set"


async def test_the_engines_figures_come_through_its_protocol(harness):
    harness.worker.draft("a", request("a1"), 1)
    await harness.event("a", "verified", 1)

    info = harness.worker.runtime()
    assert info is not None and info.kind == "gated"
    assert harness.worker.memory() == {"cacheBytes": 1, "budgetBytes": 1 << 20, "evictions": 0}
    assert harness.worker.forwards() == {"drafting": FORWARDS_PER_ANSWER}


async def test_results_come_back_on_the_event_loop_thread(harness):
    harness.worker.draft("a", request("a1"), 1)
    await harness.event("a", "verified", 1)
    assert harness.threads == {threading.get_ident()}


async def test_closing_a_document_drops_its_pending_draft(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    harness.worker.draft("b", request("b1"), 1)
    harness.worker.close("b")
    harness.engine.gate.set()
    await harness.event("a", "verified", 1)
    await harness.worker.plain(request("sync"))  # queued after the close: everything before ran

    assert all(call[1] != "b" for call in harness.engine.calls)


async def test_a_newer_keystroke_lets_the_running_draft_run_its_minimum_forwards(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("v1"), 1, min_forwards=2)
    await harness.wait_in_forward()
    harness.worker.draft("a", request("v2"), 2, min_forwards=2)
    harness.engine.gate.set()

    await harness.event("a", "verified", 2)
    assert (await harness.event("a", "accepted", 1)).completion is not None
    assert harness.engine.counter.by_phase["drafting"] == 2 + FORWARDS_PER_ANSWER


async def test_a_trigger_stops_a_draft_at_once_whatever_its_minimum(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("v1"), 1, min_forwards=3)
    await harness.wait_in_forward()
    answer = harness.worker.finalize("a", request("v2"), 2)
    harness.engine.gate.set()

    assert (await answer).text == "V2"
    assert harness.engine.counter.by_phase["drafting"] == 1  # the forward under way, no more


async def test_an_engine_that_batches_runs_several_documents_drafts_together(harness):
    await harness.worker.load(EngineConfig(model="batching"))
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()  # a runs alone: nothing else was pending
    harness.worker.draft("b", request("b1"), 1)
    harness.worker.draft("c", request("c1"), 1)
    harness.engine.fail_on = "c1"
    harness.engine.gate.set()

    assert (await harness.event("b", "verified", 1)).completion.text == "B1"
    assert isinstance((await harness.event("c", "failed", 1)).error, ContextOverflowError)
    assert harness.engine.batches == [["a", "b", "c"]]  # b and c joined a's running batch
    assert harness.worker.stats() == {
        "submitted": 3,
        "processed": 2,
        "superseded": 0,
        "dropped": 0,
        "failed": 1,
        "pending": 0,
    }


async def test_triggers_drafts_run_together_and_each_answers_when_its_own_ends(harness):
    await harness.worker.load(EngineConfig(model="batching"))
    harness.engine.gate.clear()
    for doc in "abc":  # all three are being typed
        harness.worker.edited(doc)
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    harness.worker.draft("b", request("b1"), 1)
    harness.worker.draft("c", request("c1"), 1)
    b = harness.worker.when_drafted("b", request("b1"))
    c = harness.worker.when_drafted("c", request("c1"))  # two typists' triggers
    harness.engine.between.clear()  # c's session will not end until this is set
    harness.engine.gate.set()

    assert (await b).text == "B1"  # answered while c still runs beside it
    assert not c.done()
    harness.engine.between.set()
    assert (await c).text == "C1"
    assert (await harness.event("a", "verified", 1)).completion.text == "A1"
    # a yielded at once; b and c joined its batch together; a came back once they ended
    assert harness.engine.batches == [["a", "b", "c", "a"]]


async def test_a_trigger_for_the_request_being_drafted_waits_for_that_draft(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    answer = harness.worker.finalize("a", request("a1"), 2)
    harness.engine.gate.set()

    assert (await answer).text == "A1"
    assert harness.engine.calls == [("update", "a", "a1")]  # no second pass over the same work
    assert (await harness.event("a", "verified", 1)).completion is not None


async def test_a_trigger_moves_its_pending_draft_ahead_of_other_documents(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    harness.worker.draft("b", request("b1"), 1)
    harness.worker.draft("c", request("c1"), 1)
    answer = harness.worker.finalize("c", request("c1"), 2)  # c's draft is this request
    harness.engine.gate.set()

    assert (await answer).text == "C1"
    await harness.event("b", "verified", 1)
    await harness.event("a", "verified", 1)
    updates = [c[1] for c in harness.engine.calls if c[0] == "update"]
    assert updates == ["a", "c", "b", "a"]  # a yields to the trigger and queues again, behind b
    assert_every_draft_accounted_for(harness.worker.stats())


async def test_a_cancelled_trigger_leaves_the_draft_it_waited_for_running(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    answer = harness.worker.finalize("a", request("a1"), 2)
    answer.cancel()
    await asyncio.sleep(0)
    harness.engine.gate.set()

    assert (await harness.event("a", "verified", 1)).completion.text == "A1"
    assert harness.engine.calls == [("update", "a", "a1")]


async def test_a_trigger_waiting_for_its_draft_survives_another_documents_trigger(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    first = harness.worker.finalize("a", request("a1"), 2)  # waits for a's draft
    second = harness.worker.finalize("b", request("b1"), 1)  # preempts a's draft
    harness.engine.gate.set()

    assert (await second).text == "B1"
    assert (await first).text == "A1"  # a's draft was queued again, its trigger with it


async def test_a_trigger_while_typing_waits_for_the_draft_of_its_text_once_submitted(harness):
    answer = harness.worker.when_drafted("a", request("a1"))  # drafting waits for a word end
    await asyncio.sleep(0.05)
    assert not answer.done() and harness.engine.calls == []
    harness.worker.draft("a", request("a1"), 1)

    assert (await answer).text == "A1"
    assert harness.engine.calls == [("update", "a", "a1")]  # drafted, never finalized


async def test_a_trigger_while_typing_is_answered_by_a_draft_already_verified(harness):
    harness.worker.draft("a", request("a1"), 1)
    await harness.event("a", "verified", 1)

    assert (await harness.worker.when_drafted("a", request("a1"))).text == "A1"
    assert harness.engine.calls == [("update", "a", "a1")]


async def test_newer_text_makes_a_waiting_trigger_stale_and_disturbs_no_draft(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    waiting = harness.worker.when_drafted("a", request("a1"))  # the running draft
    expected = harness.worker.when_drafted("a", request("a2"))  # not submitted yet
    harness.worker.draft("a", request("a3"), 3)
    harness.engine.gate.set()

    for stale in (waiting, expected):
        with pytest.raises(Superseded):
            await stale
    assert (await harness.event("a", "verified", 3)).completion.text == "A3"
    assert [c[0] for c in harness.engine.calls] == ["update", "update"]


@pytest.mark.parametrize("cancelled", [True, False])
async def test_drafts_moved_ahead_for_typing_triggers_do_not_pile_up(harness, cancelled):
    harness.engine.gate.clear()
    harness.worker.draft("b", request("b1"), 1)  # another document holds the engine
    await harness.wait_in_forward()
    triggers = []
    for i in range(1, 6):  # each keystroke: a draft, then the editor's automatic request
        harness.worker.draft("a", request(f"a{i}"), i)
        triggers.append(harness.worker.when_drafted("a", request(f"a{i}")))
        if cancelled and i < 5:
            triggers[-1].cancel()  # VS Code cancels it at the next keystroke
        await asyncio.sleep(0)
    harness.engine.gate.set()

    assert (await triggers[-1]).text == "A5"
    for stale in triggers[:-1]:
        with pytest.raises(asyncio.CancelledError if cancelled else Superseded):
            await stale
    assert [c[2] for c in harness.engine.calls if c[1] == "a"] == ["a5"]  # only the newest ran
    await harness.event("b", "verified", 1)
    assert_every_draft_accounted_for(harness.worker.stats())


async def test_a_trigger_on_another_document_keeps_the_draft_a_typing_trigger_waits_for(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    harness.worker.draft("a", request("a2"), 2)
    waiting = harness.worker.when_drafted("a", request("a2"))  # moves a2 ahead
    other = harness.worker.finalize("b", request("b1"), 1)  # stops a1, which is stale
    harness.engine.gate.set()

    assert (await waiting).text == "A2" and (await other).text == "B1"
    assert [c[2] for c in harness.engine.calls if c[1] == "a"] == ["a1", "a2"]  # a1 not again


async def test_a_typing_trigger_submits_the_draft_of_its_text_when_there_is_none(harness):
    assert harness.worker.when_drafted("a", request("a1"), expect=False) is None  # none yet
    answer = harness.worker.draft_for("a", request("a1"), 1)  # the caller submits it

    assert (await answer).text == "A1"
    again = harness.worker.when_drafted("a", request("a1"), expect=False)  # verified: no draft
    assert again is not None and (await again).text == "A1"
    assert not harness.worker.expects("a", request("a1"))
    assert harness.engine.calls == [("update", "a", "a1")]


async def test_a_typing_trigger_leaves_the_draft_another_trigger_waits_for_running(harness):
    await harness.worker.load(EngineConfig(model="batching"))
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    first = harness.worker.when_drafted("a", request("a1"))  # a's typist has paused
    await harness.wait_in_forward()
    harness.worker.draft("b", request("b1"), 1)
    second = harness.worker.when_drafted("b", request("b1"))  # b's typist too, meanwhile
    harness.engine.gate.set()

    assert (await first).text == "A1" and (await second).text == "B1"
    assert harness.engine.calls == [("update", "a", "a1"), ("update", "b", "b1")]  # a not redone
    assert harness.engine.batches == [["a", "b"]]  # b joined a's batch


async def test_while_a_trigger_waits_long_drafts_for_typing_do_not_run_beside_it(harness):
    await harness.worker.load(EngineConfig(model="batching"))
    harness.engine.gate.clear()
    harness.worker.edited("b")
    harness.worker.draft("b", request("b1"), 1)
    stale = harness.worker.when_drafted("b", request("b1"))  # b is being typed in VS Code
    await harness.wait_in_forward()
    harness.worker.edited("a")
    harness.worker.draft("a", request("a1"), 1)
    paused = harness.worker.when_drafted("a", request("a1"))  # a's typist paused: the trigger
    await asyncio.sleep(OVERDUE_S + 0.05)
    harness.worker.edited("b")
    harness.worker.draft("b", request("b2"), 2)  # b's next keystroke, and its request
    typing = harness.worker.when_drafted("b", request("b2"))
    harness.engine.gate.set()

    assert (await paused).text == "A1" and (await typing).text == "B2"
    assert harness.engine.joined == [["a"], ["b"]]  # b2 waited until a's trigger was answered
    with pytest.raises(Superseded):
        await stale


async def draft_b_while_a_pauses(harness: Harness) -> None:
    """b's draft runs (held at the gate) while a's typist types a word and then pauses."""
    await harness.worker.load(EngineConfig(model="batching"))
    harness.engine.gate.clear()
    harness.worker.edited("b")
    harness.worker.draft("b", request("b1"), 1)
    await harness.wait_in_forward()
    harness.worker.edited("a")
    harness.worker.draft("a", request("a1"), 1)  # a's last word; then its typist pauses
    await asyncio.sleep(PAUSED_S + 0.05)


async def test_a_paused_documents_draft_goes_before_the_drafts_of_documents_being_typed(harness):
    await draft_b_while_a_pauses(harness)
    harness.worker.edited("b")
    harness.worker.draft("b", request("b2"), 2)  # b's typist types on
    harness.engine.gate.set()

    assert (await harness.event("a", "verified", 1)).completion.text == "A1"
    assert (await harness.event("b", "verified", 2)).completion.text == "B2"
    assert harness.engine.joined == [["a"], ["b"]]  # b2 waited until a's draft was done


async def test_an_editors_request_while_typing_does_not_stop_a_paused_documents_draft(harness):
    harness.engine.gate.clear()
    harness.worker.edited("a")
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    await asyncio.sleep(PAUSED_S + 0.05)  # a's typist paused: its trigger may come any moment
    harness.worker.edited("b")
    harness.worker.draft("b", request("b1"), 1)
    typing = harness.worker.when_drafted("b", request("b1"))  # VS Code's request while typing
    harness.engine.gate.set()

    assert (await harness.event("a", "verified", 1)).completion.text == "A1"
    assert (await typing).text == "B1"
    assert [c[1] for c in harness.engine.calls] == ["a", "b"]  # a was not stopped for b
    assert harness.worker.stats()["superseded"] == 0


async def test_an_editors_request_while_typing_stops_the_draft_of_a_document_being_typed(harness):
    harness.engine.gate.clear()
    harness.worker.edited("a")
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    harness.worker.edited("a")  # a is still being typed
    harness.worker.edited("b")
    harness.worker.draft("b", request("b1"), 1)
    typing = harness.worker.when_drafted("b", request("b1"))
    harness.engine.gate.set()

    assert (await typing).text == "B1"
    assert (await harness.event("a", "verified", 1)).completion.text == "A1"
    assert [c[1] for c in harness.engine.calls] == ["a", "b", "a"]  # a yielded, then resumed


async def test_a_written_spec_goes_first_at_once_before_a_paused_documents_draft(harness):
    await draft_b_while_a_pauses(harness)
    harness.worker.edited("c", written=True)  # c's typist has just closed the docstring
    harness.worker.draft("c", request("c1"), 1)
    harness.worker.edited("b")
    harness.worker.draft("b", request("b2"), 2)  # b's typist types on
    harness.engine.gate.set()

    for doc, tag in (("c", 1), ("a", 1), ("b", 2)):
        assert (await harness.event(doc, "verified", tag)).completion.text == f"{doc}{tag}".upper()
    assert harness.engine.joined == [["c"], ["a"], ["b"]]  # c at once, though a was quieter


async def test_editing_a_written_spec_again_makes_it_a_spec_being_typed(harness):
    harness.engine.gate.clear()
    harness.worker.edited("a", written=True)  # the closing quotes
    harness.worker.edited("a")  # back into the docstring: typing again
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    harness.worker.edited("b")
    harness.worker.draft("b", request("b1"), 1)
    typing = harness.worker.when_drafted("b", request("b1"))  # VS Code's request while typing
    harness.engine.gate.set()

    assert (await typing).text == "B1"
    assert (await harness.event("a", "verified", 1)).completion.text == "A1"
    assert [c[1] for c in harness.engine.calls] == ["a", "b", "a"]  # a yielded like any typing


# -- respecs: the lowest priority, dropped at the document's next edit ----------------------


async def test_a_respec_waits_for_the_drafts(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    rewrite = harness.worker.respec("b", request("spec"), "body\n")
    harness.worker.draft("c", request("c1"), 1)
    harness.engine.gate.set()

    assert (await rewrite).text == "body\nSPEC"
    kinds = [(kind, sid) for kind, sid, _ in harness.engine.calls]
    assert kinds == [("update", "a"), ("update", "c"), ("rewrite", respec_session("b"))]


async def test_other_work_stops_a_running_respec_which_runs_again_after_it(harness):
    harness.engine.gate.clear()
    rewrite = harness.worker.respec("b", request("spec"), "body\n")
    await harness.wait_in_forward()
    answer = harness.worker.finalize("a", request("a1"), 1)
    harness.engine.gate.set()

    assert (await answer).text == "A1"
    assert (await rewrite).text == "body\nSPEC"
    kinds = [kind for kind, _, _ in harness.engine.calls]
    assert kinds == ["rewrite", "finalize", "rewrite"]


async def test_an_edit_drops_the_documents_respec_running_or_pending(harness):
    harness.engine.gate.clear()
    running = harness.worker.respec("b", request("spec"), "body\n")
    await harness.wait_in_forward()
    harness.worker.drop_background("b")
    harness.engine.gate.set()
    with pytest.raises(Superseded):
        await running

    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    pending = harness.worker.respec("c", request("spec"), "body\n")
    harness.worker.drop_background("c")
    harness.engine.gate.set()
    with pytest.raises(Superseded):
        await pending
    await harness.event("a", "verified", 1)
    assert [kind for kind, _, _ in harness.engine.calls] == ["rewrite", "update"]


async def test_a_newer_respec_of_a_document_replaces_its_pending_one(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    older = harness.worker.respec("b", request("old"), "body\n")
    newer = harness.worker.respec("b", request("new"), "body\n")
    harness.engine.gate.set()

    with pytest.raises(Superseded):
        await older
    assert (await newer).text == "body\nNEW"


# -- searches: sampled alternatives, background jobs like respecs ----------------------------


async def test_a_sample_runs_after_drafts_and_yields_to_a_trigger_then_runs_again(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    sampled = harness.worker.sample("b", request("spec"), 2)
    harness.engine.gate.set()
    assert (await sampled).text == "SPEC#2"
    await harness.event("a", "verified", 1)
    assert [(k, sid) for k, sid, _ in harness.engine.calls] == [
        ("update", "a"), ("sample", search_session("b"))
    ]  # fmt: skip

    harness.engine.gate.clear()
    sampled = harness.worker.sample("b", request("spec"), 3)
    await harness.wait_in_forward()
    answer = harness.worker.finalize("a", request("a2"), 2)
    harness.engine.gate.set()
    assert (await answer).text == "A2"
    assert (await sampled).text == "SPEC#3"
    assert [k for k, _, _ in harness.engine.calls[2:]] == ["sample", "finalize", "sample"]
    counts = harness.worker.background_stats("search")
    assert counts == {"submitted": 2, "processed": 2, "dropped": 0, "failed": 0, "pending": 0}


async def test_a_prefill_waits_for_drafts_and_an_edit_of_its_document_drops_it(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    opened = harness.worker.prefill("b", request("head of b"))
    harness.engine.gate.set()
    assert await opened == len("head of b")
    assert [(k, sid) for k, sid, _ in harness.engine.calls] == [("update", "a"), ("prefill", "b")]

    harness.engine.gate.clear()
    reading = harness.worker.prefill("c", request("head of c"))
    await harness.wait_in_forward()
    harness.worker.drop_background("c", "prefill")  # the person's first edit of c
    harness.engine.gate.set()
    with pytest.raises(Superseded):
        await reading
    counts = harness.worker.background_stats("prefill")
    assert counts == {"submitted": 2, "processed": 1, "dropped": 1, "failed": 0, "pending": 0}
    assert prefill_session("c") != "c"  # stopping it leaves the document's drafts alone


async def test_only_the_newest_opened_documents_prefill_runs(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    restored = [harness.worker.prefill(doc, request(f"head of {doc}")) for doc in "bcd"]
    harness.engine.gate.set()
    assert await restored[-1] == len("head of d")
    for older in restored[:-1]:
        with pytest.raises(Superseded):
            await older
    assert [(k, sid) for k, sid, _ in harness.engine.calls] == [("update", "a"), ("prefill", "d")]
    counts = harness.worker.background_stats("prefill")
    assert counts == {"submitted": 3, "processed": 1, "dropped": 2, "failed": 0, "pending": 0}


async def test_dropping_a_documents_searches_leaves_its_respec(harness):
    harness.engine.gate.clear()
    harness.worker.draft("a", request("a1"), 1)
    await harness.wait_in_forward()
    rewrite = harness.worker.respec("b", request("spec"), "body\n")
    sampled = harness.worker.sample("b", request("spec"), 1)
    harness.worker.drop_background("b", "search")
    harness.engine.gate.set()
    with pytest.raises(Superseded):
        await sampled
    assert (await rewrite).text == "body\nSPEC"
    assert harness.worker.background_stats("search")["dropped"] == 1

    harness.engine.gate.clear()
    running = harness.worker.sample("b", request("spec"), 1)
    await harness.wait_in_forward()
    newer = harness.worker.sample("b", request("spec"), 2)  # replaces the running one
    harness.engine.gate.set()
    with pytest.raises(Superseded):
        await running
    assert (await newer).text == "SPEC#2"
    assert harness.worker.background_stats("search")["pending"] == 0
