"""Drafting while the user types: each edit's spec goes to the worker, its drafts to the client."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lsprotocol import types
from pygls.workspace import TextDocument

from inference.api import Completion, Request
from inference.examples.sandbox import ExampleRun
from lsp_server import convert
from lsp_server.context import ServerContext, UsesContext
from lsp_server.documents import Document
from lsp_server.examples import DraftExamples
from lsp_server.spec import Spec, opening_request
from lsp_server.wire import AlternativeParams, DraftStatus
from lsp_server.worker import DraftEvent


@dataclass(frozen=True)
class DraftTag:
    """What a job needs to be reported: the document version and where its text goes."""

    version: int
    position: types.Position
    closing: str
    request: Request

    @classmethod
    def of(cls, document: TextDocument, spec: Spec) -> DraftTag:
        position = convert.position_at(document, spec.insert_at)
        return cls(document.version or 0, position, spec.closing, spec.request)


def _ignore_outcome(future: asyncio.Future[int]) -> None:
    """A prefill's outcome matters to nobody: dropped at an edit, or failed (no model yet)."""
    if not future.cancelled():
        future.exception()


def answer_text(closing: str, body: str) -> str:
    """The text a draft inserts at the end of the spec's last line."""
    body = body.rstrip("\n")
    return f"{closing}\n{body}" if body.strip() else ""


class Drafting(UsesContext):
    """Turns edits into draft jobs (coalesced by the worker) and draft events into notifications."""

    def __init__(self, context: ServerContext):
        super().__init__(context)
        self._examples: DraftExamples | None = None
        self.examples_unavailable: Callable[[str], None] = lambda why: None  # the service's
        # told when a verified draft of the document as it is failed its examples
        self.examples_failed: Callable[[Document, str, Spec, Completion, ExampleRun], None] = (
            lambda doc, source, spec, completion, run: None
        )

    def changed(
        self,
        doc: Document,
        document: TextDocument,
        version: int,
        changes: Sequence[types.TextDocumentContentChangeEvent],
    ) -> Spec | None:
        """After pygls applied a didChange: find the spec (returned), hand a new request to
        the worker."""
        uri = doc.uri
        self.worker().drop_background(uri, "prefill")  # what it encoded stays cached
        point, first_start = convert.edit_point(document, changes)
        if not doc.edited(len(document.source), first_start, version):
            message = f"prewrite: {uri}: a didChange's version went back; edits apply in order"
            self.notify.log_once(types.MessageType.Warning, message)
        spec = doc.find(document.source, point, *self._window())
        self.worker().edited(uri, written=spec is not None and spec.written_at(point))
        if spec is not None:
            self._draft(doc, document, spec, convert.ends_a_word(changes))
        return spec

    def opened(self, doc: Document, document: TextDocument) -> None:
        """A document opened: while it is read, encode the start of the prompt a comment typed
        in a body would make (`opening_request`), unless drafting or `prefillOnOpen` is off."""
        settings = self.settings()
        if not (self.active() and settings.drafting and settings.prefill_on_open):
            return
        if doc.language is None:
            return
        request = opening_request(document.source, doc.language, settings.prefix_chars)
        if request is not None:
            future = self.worker().prefill(doc.uri, request)
            future.add_done_callback(_ignore_outcome)

    def redraft_all(self) -> None:
        """After a (re)load or re-enabling: draft every document's spec again."""
        for doc in self.documents:
            doc.submitted = None
            document = self.document(doc.uri)
            spec = doc.find(document.source, None, *self._window()) if document else None
            if spec is not None and document is not None:
                self._draft(doc, document, spec)

    def closed(self, uri: str) -> None:
        """A document closed: its example runs stop (its `Document` took the rest along)."""
        if self._examples is not None:
            self._examples.forget(uri)

    def shutdown(self) -> None:
        """The server stops: no more example runs."""
        if self._examples is not None:
            self._examples.close()
            self._examples = None

    @property
    def examples(self) -> DraftExamples:
        """The example runs of verified drafts (started on first use, inside the event loop)."""
        if self._examples is None:
            loop = asyncio.get_running_loop()
            self._examples = DraftExamples(
                loop, self.documents, self.notify, self._examples_arrived, self.examples_unavailable
            )
        return self._examples

    def examples_of(self, uri: str, request: Request, answer: str) -> ExampleRun | None:
        """The examples' result for this answer of the document, if its run has finished."""
        return self._examples.known(uri, (request, answer)) if self._examples else None

    def when_drafted(
        self, uri: str, document: TextDocument, spec: Spec
    ) -> asyncio.Future[Completion] | None:
        """The draft's completion for `spec`, for a trigger that comes while the user types.

        Nothing is superseded: the draft of this very text is waited for, submitted now unless
        drafting waits for the end of a word. None when drafting is off.
        """
        doc = self.documents.get(uri)
        if doc is None or not (self.active() and self.settings().drafting):
            return None
        waits = doc.idle_timer is not None  # it submits this very text unless typing goes on
        waiting = self.worker().when_drafted(uri, spec.request, expect=waits)
        if waiting is None:  # no draft of this text: submit it, the trigger waiting on it
            tag = self._submitted(doc, document, spec)
            min_forwards = self.settings().draft_min_forwards
            waiting = self.worker().draft_for(uri, spec.request, tag, min_forwards)
        return waiting

    def on_event(self, event: DraftEvent) -> None:
        """A draft job's news from the worker: remember the text, tell the client if it asked."""
        doc = self.documents.get(event.doc)
        if doc is None:
            return
        if event.status == "failed":
            self.notify.report(event.error or RuntimeError("drafting failed"), drafting=True)
            return
        self.notify.drafting_works()
        tag: DraftTag = event.tag
        if doc.tag is not None and tag.request == doc.tag.request:
            tag = doc.tag  # report it for the newest version that has the same request
        if event.completion is not None:
            doc.preview = answer_text(tag.closing, event.completion.text)
        if event.status == "verified" and event.completion is not None:
            doc.verified = (tag, event.completion)
            self._check_examples(doc, tag.request, event.completion.text)
        self._tell(doc, tag, event.status, event.completion)

    def _tell(
        self, doc: Document, tag: DraftTag, status: DraftStatus, completion: Completion | None
    ) -> None:
        """prewrite/draft, for a client that asked for drafts."""
        if not self.settings().draft_preview:
            return
        examples = self.examples_of(doc.uri, tag.request, completion.text) if completion else None
        found = doc.alternative_to(tag.request, completion.text) if completion else None
        alternative = None
        if found is not None:
            text = answer_text(tag.closing, found.completion.text)
            passed, total = found.examples.passed, found.examples.total
            alternative = AlternativeParams(passed, total, found.seed, found.drawn, text)
        params = convert.draft_params(
            doc.uri, tag.version, tag.position, status, doc.preview, completion, examples,
            alternative,
        )  # fmt: skip
        self.notify.draft(params)

    def alternative_found(self, doc: Document) -> None:
        """A search found an alternative: the verified draft goes out again with it."""
        if doc.verified is not None and doc.tag is not None:
            tag, completion = doc.verified
            if doc.tag.request == tag.request:
                self._tell(doc, doc.tag, "verified", completion)

    def _check_examples(self, doc: Document, request: Request, answer: str) -> None:
        """Run the spec's examples against a draft verified for the document as it is now."""
        document = self.document(doc.uri)
        if self.settings().check_examples == "off" or document is None:
            return
        spec = doc.find(document.source, None, *self._window())
        if spec is not None and spec.request == request:
            self.examples.check(doc.uri, document.source, spec, answer)

    def _examples_arrived(self, uri: str) -> None:
        """A run finished: the draft goes out again with its examples, if it is still current;
        a failure is told (`examples_failed`)."""
        doc = self.documents.get(uri)
        if doc is None or doc.verified is None:
            return
        tag, completion = doc.verified
        if doc.tag is not None and doc.tag.request == tag.request:
            self._tell(doc, doc.tag, "verified", completion)
        run = self.examples_of(uri, tag.request, completion.text)
        document = self.document(uri)
        if run is None or run.failed == 0 or document is None:
            return
        spec = doc.find(document.source, None, *self._window())
        if spec is not None and spec.request == tag.request:
            self.examples_failed(doc, document.source, spec, completion, run)

    def _draft(
        self, doc: Document, document: TextDocument, spec: Spec, word_ended: bool = True
    ) -> None:
        """Draft for the spec now, or once the typing pauses (`draftOn`)."""
        settings = self.settings()
        # before `initialized` no model loads: drafts would fail (loading drafts them all)
        if not (self.active() and settings.drafting and self.worker().has_model):
            return
        wait = settings.draft_on == "idle" or (settings.draft_on == "word" and not word_ended)
        if spec.request == doc.submitted:
            self._same_request(doc, document, spec)
        elif wait:
            self._when_idle(doc, settings.idle_ms)
        else:
            self._submit(doc, document, spec)

    def _submit(self, doc: Document, document: TextDocument, spec: Spec) -> None:
        tag = self._submitted(doc, document, spec)
        self.worker().draft(doc.uri, spec.request, tag, self.settings().draft_min_forwards)

    def _submitted(self, doc: Document, document: TextDocument, spec: Spec) -> DraftTag:
        """The spec's request goes to the worker now: the tag its drafts are reported with."""
        self._forget_draft(doc)  # a waiting idle timer would only submit this again
        doc.submitted = spec.request
        doc.tag = DraftTag.of(document, spec)
        return doc.tag

    def _same_request(self, doc: Document, document: TextDocument, spec: Spec) -> None:
        """An edit that leaves the request as it was: the draft now stands for this version."""
        doc.tag = DraftTag.of(document, spec)
        completion = self.worker().verified(doc.uri, spec.request)
        if completion is not None:
            self.on_event(DraftEvent(doc.uri, doc.tag, "verified", completion))

    def _when_idle(self, doc: Document, idle_ms: int) -> None:
        self._forget_draft(doc)
        loop = asyncio.get_running_loop()
        doc.idle_timer = loop.call_later(idle_ms / 1000, self._idle_fired, doc.uri)

    def _forget_draft(self, doc: Document) -> None:
        """A new request for the document: the idle timer, verified draft and examples go."""
        doc.stop_idle_timer()
        doc.verified = None
        if self._examples is not None:
            self._examples.forget(doc.uri)

    def _idle_fired(self, uri: str) -> None:
        doc, document = self.documents.get(uri), self.document(uri)
        if doc is None:
            return
        doc.idle_timer = None
        if document is None or not self.active():
            return
        spec = doc.find(document.source, None, *self._window())
        if spec is not None and (
            spec.request != doc.submitted or self.worker().expects(uri, spec.request)
        ):
            self._submit(doc, document, spec)

    def _window(self) -> tuple[int, int]:
        settings = self.settings()
        return settings.prefix_chars, settings.suffix_chars
