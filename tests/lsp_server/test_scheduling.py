"""The worker's scheduling policy on its own: jobs and a clock in, what runs next out; no threads.

The clock is given: `T` is a moment, and documents are edited at moments before it. A document
never edited counts as at rest (its typist is not typing), so the tests edit every document
whose typist is meant to be typing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from inference.api import Request
from lsp_server.scheduling import OVERDUE_S, PAUSED_S, Job, Schedule

T = 100.0  # now
TYPING = T - PAUSED_S / 5  # an edit this recent: the typist is typing


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def draft(schedule: Schedule, doc: str, text: str = "") -> Job:
    """Submit a draft of `doc` (its request `text`, by default the document's name)."""
    job = Job("draft", schedule.ticket(), doc, Request(text or doc))
    schedule.submit(job)
    return job


def typing(schedule: Schedule, *docs: str) -> None:
    for doc in docs:
        schedule.typing.edited(doc, TYPING)


def run(schedule: Schedule, now: float = T) -> Job:
    """The next job, as the worker takes it."""
    assert not schedule.empty
    return schedule.next(now)


# -- what runs next ---------------------------------------------------------------------------


def test_urgent_jobs_run_before_drafts_in_the_order_they_came():
    schedule = Schedule()
    typing(schedule, "a")
    draft(schedule, "a")
    plain, close = Job("plain", 0, "b"), Job("close", 0, "c")
    schedule.urgent.extend([plain, close])

    assert [run(schedule).kind for _ in range(3)] == ["plain", "close", "draft"]
    assert schedule.empty


def test_drafts_of_documents_being_typed_run_oldest_first():
    schedule = Schedule()
    typing(schedule, "a", "b")
    draft(schedule, "a")
    draft(schedule, "b")

    assert [run(schedule).doc for _ in range(2)] == ["a", "b"]


def test_a_newer_draft_replaces_the_pending_one_and_queues_behind_the_others():
    schedule = Schedule()
    typing(schedule, "a", "b")
    draft(schedule, "a", "a1")
    b = draft(schedule, "b")
    newest = draft(schedule, "a", "a2")

    assert [run(schedule) for _ in range(2)] == [b, newest]
    assert schedule.counts == {"submitted": 3, "dropped": 1}


def test_pending_counts_the_drafts_waiting_and_running():
    schedule = Schedule()
    typing(schedule, "a", "b")
    draft(schedule, "a")
    draft(schedule, "b")
    run(schedule)

    assert schedule.pending() == 2
    schedule.ended()
    assert schedule.pending() == 1


def test_a_paused_documents_draft_goes_before_older_drafts_of_documents_being_typed():
    schedule = Schedule()
    typing(schedule, "a")
    schedule.typing.edited("b", T - PAUSED_S - 0.01)  # b's typist paused
    draft(schedule, "a")
    draft(schedule, "b")

    assert run(schedule).doc == "b"


def test_a_pause_shorter_than_paused_s_is_still_typing():
    schedule = Schedule()
    typing(schedule, "a")
    schedule.typing.edited("b", T - PAUSED_S + 0.01)
    draft(schedule, "a")
    draft(schedule, "b")

    assert run(schedule).doc == "a"


def test_a_written_spec_goes_before_a_paused_document_quiet_longer():
    schedule = Schedule()
    schedule.typing.edited("a", T - 10.0)  # paused long ago
    schedule.typing.edited("b", T - 0.01, written=True)  # closed its docstring just now
    draft(schedule, "a")
    draft(schedule, "b")

    assert [run(schedule).doc for _ in range(2)] == ["b", "a"]


def test_of_written_specs_the_one_written_first_goes_first_whatever_came_after():
    schedule = Schedule()
    schedule.typing.edited("a", T - 0.1, written=True)
    schedule.typing.edited("b", T - 0.2, written=True)
    schedule.typing.edited("b", T - 0.01, written=True)  # still written: since the first time
    draft(schedule, "a")
    draft(schedule, "b")

    assert run(schedule).doc == "b"


def test_of_paused_documents_the_one_quiet_longest_goes_first():
    schedule = Schedule()
    schedule.typing.edited("a", T - 1.0)
    schedule.typing.edited("b", T - 2.0)
    draft(schedule, "a")
    draft(schedule, "b")

    assert run(schedule).doc == "b"


def test_editing_a_written_spec_again_makes_it_a_spec_being_typed():
    schedule = Schedule()
    schedule.typing.edited("b", T - 1.0, written=True)
    schedule.typing.edited("b", TYPING)  # back into the docstring
    typing(schedule, "a")
    draft(schedule, "a")
    draft(schedule, "b")

    assert not schedule.typing.at_rest("b", T)
    assert run(schedule).doc == "a"


def test_a_trigger_waiting_overdue_s_makes_its_draft_lead(loop):
    schedule = Schedule()
    typing(schedule, "a", "b")
    draft(schedule, "a")
    b = draft(schedule, "b")
    b.wait(loop.create_future(), T - OVERDUE_S)

    assert schedule.person_waits(b, T)
    assert not schedule.person_waits(b, T - 0.01)  # waited less: an editor's request, maybe
    assert run(schedule) is b


def test_a_person_waiting_for_a_draft_does_not_pass_a_trigger_or_a_load():
    schedule = Schedule()
    draft(schedule, "a")  # never edited: at rest
    schedule.urgent.append(Job("finalize", schedule.ticket(), "b", Request("b")))

    assert run(schedule).kind == "finalize"
    assert run(schedule).doc == "a"


# -- a trigger on a draft -----------------------------------------------------------------------


def test_a_trigger_moves_the_pending_draft_of_its_text_ahead(loop):
    schedule = Schedule()
    typing(schedule, "a", "b")
    draft(schedule, "a")
    b = draft(schedule, "b")

    assert schedule.draft_for("b", Request("other")) is None
    assert schedule.draft_for("b", Request("b")) is b
    assert list(schedule.urgent) == [b] and "b" not in schedule.drafts
    assert run(schedule) is b


def test_a_trigger_finds_the_running_draft_of_its_text():
    schedule = Schedule()
    a = draft(schedule, "a")
    assert run(schedule) is a

    assert schedule.draft_for("a", Request("a")) is a
    assert schedule.empty  # nothing moved


def test_a_draft_moved_ahead_whose_trigger_left_goes_back_among_the_drafts(loop):
    schedule = Schedule()
    a = draft(schedule, "a")
    assert schedule.draft_for("a", Request("a")) is a
    trigger = loop.create_future()
    a.wait(trigger, T)

    schedule.detach(a, trigger)

    assert not schedule.urgent and schedule.drafts == {"a": a}


def test_newer_text_drops_a_draft_moved_ahead_and_its_triggers_are_stale(loop):
    schedule = Schedule()
    a1 = draft(schedule, "a", "a1")
    schedule.draft_for("a", Request("a1"))
    a1.wait(loop.create_future(), T)

    stale = schedule.submit(Job("draft", schedule.ticket(), "a", Request("a2")))

    assert stale == [a1] and not schedule.urgent
    assert schedule.counts == {"submitted": 2, "dropped": 1}


# -- preemption -----------------------------------------------------------------------------


def test_a_trigger_preempts_other_documents_drafting_which_is_queued_again():
    schedule = Schedule()
    a = draft(schedule, "a")
    assert run(schedule) is a

    stops = schedule.preempt("b", T)

    assert stops == [("a", a.ticket + 1)] and a.stopping
    again = schedule.drafts["a"]
    assert again is not a and again.request == a.request and again.ticket == a.ticket + 1
    assert schedule.preempt("b", T) == []  # stopping already
    assert schedule.counts["submitted"] == 2


def test_preemption_keeps_the_triggers_own_document():
    schedule = Schedule()
    draft(schedule, "a")
    run(schedule)

    assert schedule.preempt("a", T) == []


def test_a_preempted_draft_a_trigger_waits_for_goes_back_ahead_with_its_trigger(loop):
    schedule = Schedule()
    a = draft(schedule, "a")
    run(schedule)
    trigger = loop.create_future()
    a.wait(trigger, T)

    schedule.preempt("b", T)

    (again,) = schedule.urgent
    assert again.waiters == [trigger] and a.waiters == []


def test_an_editors_request_while_typing_spares_drafts_others_wait_for_and_paused_ones(loop):
    schedule = Schedule()
    typing(schedule, "a")
    waited, paused = draft(schedule, "a"), draft(schedule, "b")  # b never edited: at rest
    schedule.running = [waited, paused]
    schedule.drafts.clear()
    waited.wait(loop.create_future(), T)

    assert schedule.preempt("c", T, waited_for=False, paused=True) == []
    assert [doc for doc, _ in schedule.preempt("c", T, waited_for=False)] == ["b"]


def test_a_requeued_draft_gives_its_ticket_to_the_documents_newer_pending_draft():
    schedule = Schedule()
    a1 = draft(schedule, "a", "a1")
    run(schedule)
    a2 = draft(schedule, "a", "a2")
    submitted_as = a2.ticket

    assert schedule.requeue(a1) == ("a", a2.ticket) and a2.ticket > submitted_as
    assert schedule.drafts == {"a": a2} and schedule.counts["submitted"] == 2


def test_a_cancelled_trigger_goes_on_as_drafting_unless_drafting_is_off():
    for resume, pending in ((True, 1), (False, 0)):
        schedule = Schedule()
        job = Job("finalize", schedule.ticket(), "a", Request("a"))
        schedule.urgent.append(job)

        doc, ticket = schedule.abandon(job, resume) or ("", 0)

        assert doc == "a" and ticket > job.ticket and not schedule.urgent
        assert len(schedule.drafts) == pending


# -- joining a running batch ------------------------------------------------------------------


def test_pending_drafts_join_the_running_ones_up_to_the_batch_limit():
    schedule = Schedule()
    typing(schedule, "a", "b", "c", "d")
    for doc in "abcd":
        draft(schedule, doc)
    run(schedule)

    joining, stops = schedule.joining(T, limit=3)

    assert [j.doc for j in joining] == ["b", "c"] and stops == []
    assert [j.doc for j in schedule.running] == ["a", "b", "c"]
    assert list(schedule.drafts) == ["d"]


def test_a_drafts_document_with_old_work_running_does_not_join():
    schedule = Schedule()
    typing(schedule, "a")
    draft(schedule, "a", "a1")
    run(schedule)
    draft(schedule, "a", "a2")

    assert schedule.joining(T, limit=2) == ([], [])


def test_drafts_a_trigger_waits_for_join_and_the_others_wait_meanwhile(loop):
    schedule = Schedule()
    typing(schedule, "a", "b", "c")
    for doc in "abc":
        draft(schedule, doc)
    run(schedule)
    c = schedule.draft_for("c", Request("c"))
    assert c is not None
    c.wait(loop.create_future(), T)  # just now: an editor's request while typing

    joining, _ = schedule.joining(T, limit=3)

    assert joining == [c] and list(schedule.drafts) == ["b"]


def test_nothing_joins_while_a_job_that_needs_the_engine_alone_is_queued():
    schedule = Schedule()
    typing(schedule, "a", "b")
    draft(schedule, "a")
    run(schedule)
    draft(schedule, "b")
    schedule.urgent.append(Job("plain", 0, "c", Request("c")))

    assert schedule.joining(T, limit=2) == ([], [])


def test_a_document_being_closed_does_not_join():
    schedule = Schedule()
    typing(schedule, "a", "b")
    draft(schedule, "a")
    run(schedule)
    draft(schedule, "b")
    schedule.urgent.append(Job("close", 0, "b"))

    assert schedule.joining(T, limit=2) == ([], [])


def test_while_a_person_waits_their_draft_runs_alone_and_typing_drafts_stop():
    schedule = Schedule()
    typing(schedule, "a", "b")
    a = draft(schedule, "a")
    run(schedule)
    draft(schedule, "b")
    schedule.typing.edited("c", T - PAUSED_S - 0.01)  # c's typist paused: the trigger is near
    c = draft(schedule, "c")

    joining, stops = schedule.joining(T, limit=3)

    assert joining == [c] and stops == [("a", schedule.drafts["a"].ticket)]
    assert a.stopping and schedule.running == [a, c]
    assert list(schedule.drafts) == ["b", "a"]  # b does not join beside the person waiting
    assert schedule.joining(T, limit=3) == ([], [])  # c runs already: nothing more


def test_the_leaders_draft_waits_for_its_documents_old_work_to_end():
    schedule = Schedule()
    typing(schedule, "a")
    a1 = draft(schedule, "a", "a1")
    run(schedule)
    a2 = draft(schedule, "a", "a2")
    assert schedule.preempt("b", T) == [("a", a2.ticket)] and a1.stopping  # a trigger on b
    later = TYPING + PAUSED_S + 0.01  # a's typist has paused since: a2 leads

    assert schedule.leader([*schedule.drafts.values()], later) is a2
    assert schedule.joining(later, limit=2) == ([], [])  # a1 has not ended yet
    schedule.ended(a1)
    assert schedule.joining(later, limit=2) == ([a2], [])


def test_closing_a_document_forgets_its_drafts_and_its_typing(loop):
    schedule = Schedule()
    schedule.typing.edited("a", T - 0.01, written=True)
    a = draft(schedule, "a")
    schedule.draft_for("a", Request("a"))  # moved ahead for a trigger
    a.wait(loop.create_future(), T)
    draft(schedule, "b")

    assert schedule.forget("a") == [a]  # its trigger is stale
    assert schedule.forget("b") == [] and schedule.empty
    assert schedule.counts == {"submitted": 2, "dropped": 2}
    assert schedule.typing.precedence("a", T) == (False, float("inf"))  # never edited now
