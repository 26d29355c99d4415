"""Triggers waiting on drafts: drafts' finished answers, and triggers expecting a draft.

A trigger expects the draft of its text when that draft is not submitted yet (drafting waits
for the end of a word); one that waits on a draft job already submitted is one of that job's
`waiters` instead (scheduling.py). Only bookkeeping: the worker holds its lock around every
call and settles the futures these methods hand back (on the event loop).
"""

from __future__ import annotations

import asyncio
from typing import Any

from inference.api import Completion, Request

Futures = list[asyncio.Future[Any]]


class Waiting:
    """Per document: the finished answer of its draft, and the triggers expecting a draft."""

    def __init__(self) -> None:
        self._verified: dict[str, tuple[Request, Completion]] = {}
        # automatic triggers waiting for a draft of their request that is not submitted yet
        self._expected: dict[str, list[tuple[Request, asyncio.Future[Any]]]] = {}

    def verified(self, doc: str, request: Request) -> Completion | None:
        """The finished answer for exactly `request` if the document's draft has it."""
        entry = self._verified.get(doc)
        return entry[1] if entry is not None and entry[0] == request else None

    def answered(self, doc: str, request: Request, completion: Completion) -> Futures:
        """The document's draft finished `request`: the triggers expecting it, to answer."""
        self._verified[doc] = (request, completion)
        return self.ended(doc, request)

    def ended(self, doc: str, request: Request) -> Futures:
        """The draft of `request` ended: the triggers expecting it, to settle."""
        waiting = self._expected.pop(doc, [])
        rest = [(r, f) for r, f in waiting if r != request]
        if rest:
            self._expected[doc] = rest
        return [future for wanted, future in waiting if wanted == request]

    def expect(self, doc: str, request: Request, future: asyncio.Future[Any]) -> None:
        """A trigger waits for the draft of `request` once it is submitted."""
        self._expected.setdefault(doc, []).append((request, future))

    def expects(self, doc: str, request: Request) -> bool:
        """True when a trigger waits for a draft of `request` that is not submitted."""
        return any(wanted == request for wanted, _ in self._expected.get(doc, []))

    def unexpect(self, doc: str, future: asyncio.Future[Any]) -> None:
        """A trigger expecting a draft is settled or stopped waiting."""
        waiting = self._expected.get(doc, [])
        waiting[:] = [(r, f) for r, f in waiting if f is not future]
        if not waiting:
            self._expected.pop(doc, None)

    def submitted(self, doc: str, request: Request) -> tuple[Futures, Futures]:
        """A draft of `request` was submitted: the triggers expecting it (they wait on it now),
        and those expecting other text (stale)."""
        waiting = self._expected.pop(doc, [])
        return [f for r, f in waiting if r == request], [f for r, f in waiting if r != request]

    def drop(self, doc: str | None = None) -> Futures:
        """Stop expecting drafts, of `doc` or of every document: the triggers, to fail."""
        docs = [doc] if doc is not None else list(self._expected)
        return [future for key in docs for _, future in self._expected.pop(key, [])]

    def forget(self, doc: str | None = None) -> None:
        """Forget the finished answer of `doc`, or of every document (another model loaded)."""
        if doc is None:
            self._verified.clear()
        else:
            self._verified.pop(doc, None)
