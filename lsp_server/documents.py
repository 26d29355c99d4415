"""Open documents as the server sees them: where the user edits, the spec there, trigger figures."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from inference.api import Completion, Language, Request
from inference.examples.sandbox import ExampleRun
from lsp_server.spec import Spec, find_spec, language_of
from lsp_server.spec.changes import Offer

TRIGGERS_KEPT = 20
TriggerKind = Literal["invoked", "automatic", "completion"]


@dataclass(frozen=True)
class Trigger:
    """One answer at trigger: what was left to do and how long the client waited."""

    version: int
    kind: TriggerKind
    residual_forwards: int
    residual_ms: float
    latency_ms: float
    from_draft: bool
    finish_reason: str
    residual_requests: int = 0  # a runtime behind a wire (vLLM): requests at the trigger
    residual_request_tokens: int = 0  # token ids they carried
    answer_tokens: int = 0  # the answer's length in tokens

    def wire(self) -> dict[str, Any]:
        """camelCase, as prewrite.stats reports it."""
        return {
            "version": self.version,
            "kind": self.kind,
            "residualForwards": self.residual_forwards,
            "residualMs": round(self.residual_ms, 3),
            "latencyMs": round(self.latency_ms, 3),
            "fromDraft": self.from_draft,
            "finishReason": self.finish_reason,
            "residualRequests": self.residual_requests,
            "residualRequestTokens": self.residual_request_tokens,
            "answerTokens": self.answer_tokens,
        }


@dataclass(frozen=True)
class Alternative:
    """A sampled answer to `request` whose examples pass where the greedy answer's (`greedy`)
    fail: offered beside it at the trigger (searchOnFailure)."""

    request: Request
    greedy: str
    completion: Completion
    examples: ExampleRun
    seed: int
    drawn: int  # samples drawn to find it


@dataclass
class Document:
    """One open document, and all the server keeps of it on the event loop.

    Drafting, the examples and the re-verification of changed specs keep their state here,
    so that closing the document (`close`) ends all of it. The worker's thread keeps its own
    view under its lock: the document's pending jobs and finished answers (scheduling.py,
    waiting.py).
    """

    uri: str
    language: Language | None
    length: int
    version: int = 0  # the client's label of the newest text (didOpen, didChange)
    anchor: int | None = None  # end of the last spec seen, moved along by edits above it
    submitted: Request | None = None  # the newest request handed to drafting
    tag: Any = None  # the server's label for it at the newest version with that request
    preview: str = ""  # the newest draft text, shown while the next one is written
    text: str | None = None  # the text after the last edit: the one before the next
    triggers: deque[Trigger] = field(default_factory=lambda: deque(maxlen=TRIGGERS_KEPT))
    # drafting: the timer that submits a half-typed word's text; the last verified draft (tag)
    idle_timer: asyncio.TimerHandle | None = None
    verified: tuple[Any, Completion] | None = None
    examples: tuple[Hashable, ExampleRun] | None = None  # the examples' run of a verified draft
    # searching when a verified draft fails its examples: the search, and what it found
    search: asyncio.Task[None] | None = None
    search_for: tuple[Request, str] | None = None  # the request and greedy answer searched for
    alternative: Alternative | None = None
    # re-verifying a changed spec: the timer, the offer made, each body's spec before edits
    respec_timer: asyncio.TimerHandle | None = None
    offer: Offer | None = None
    spec_bases: dict[str, str] = field(default_factory=dict)

    def stop_idle_timer(self) -> None:
        """Cancel drafting's idle timer, if one is waiting."""
        if self.idle_timer is not None:
            self.idle_timer.cancel()
            self.idle_timer = None

    def alternative_to(self, request: Request, greedy: str) -> Alternative | None:
        """The alternative found for the greedy answer `greedy` to `request`, if any."""
        found = self.alternative
        matches = found is not None and (found.request, found.greedy) == (request, greedy)
        return found if matches else None

    def stop_search(self) -> None:
        """Cancel the search for an alternative, if one runs."""
        if self.search is not None:
            self.search.cancel()
            self.search = None

    def stop_respec_timer(self) -> None:
        """Cancel the re-verification's timer, if one is waiting."""
        if self.respec_timer is not None:
            self.respec_timer.cancel()
            self.respec_timer = None

    def edited(self, length: int, first_start: int | None, version: int | None = None) -> bool:
        """Move the anchor over an edit starting at `first_start` (None: whole text replaced).

        False when the edit's version is older than the document's: the client broke LSP's
        rule that versions increase. The edit is applied all the same (pygls did): the stream
        is ordered, so the client made its edits in this order, and dropping one would leave
        the server's text different from the client's.
        """
        in_order = version is None or version >= self.version
        self.version = self.version if version is None else version
        delta, self.length = length - self.length, length
        if self.anchor is not None and first_start is None:
            self.anchor = min(self.anchor, length)
        elif self.anchor is not None and first_start is not None and first_start <= self.anchor:
            self.anchor = max(first_start, self.anchor + delta)
        return in_order

    def find(
        self, text: str, point: int | None, prefix_chars: int, suffix_chars: int
    ) -> Spec | None:
        """The spec at the editing point, else at the anchor (an edit elsewhere moved it)."""
        if self.language is None:
            return None
        for offset in (point, self.anchor):
            if offset is None:
                continue
            spec = find_spec(text, offset, self.language, prefix_chars, suffix_chars)
            if spec is not None:
                self.anchor = spec.end
                return spec
        self.anchor = None  # the spec that was there is gone (written, deleted or moved off)
        return None


class Documents:
    """The open documents by URI."""

    def __init__(self) -> None:
        self._docs: dict[str, Document] = {}

    def open(self, uri: str, language_id: str | None, length: int, version: int = 0) -> Document:
        """Start tracking a document (re-opening resets it)."""
        doc = Document(uri, language_of(language_id, uri), length, version)
        self._docs[uri] = doc
        return doc

    def get(self, uri: str) -> Document | None:
        """The document if it is open."""
        return self._docs.get(uri)

    def close(self, uri: str) -> None:
        """Stop tracking a document: its timers stop, all it kept goes."""
        doc = self._docs.pop(uri, None)
        if doc is not None:
            doc.stop_idle_timer()
            doc.stop_respec_timer()
            doc.stop_search()

    def stop_timers(self) -> None:
        """Every document's timers and searches stop (the server shuts down)."""
        for doc in self._docs.values():
            doc.stop_idle_timer()
            doc.stop_respec_timer()
            doc.stop_search()

    def __iter__(self) -> Iterator[Document]:
        return iter(list(self._docs.values()))
