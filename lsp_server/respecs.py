"""A changed spec of a function that has a body: re-verify the body, offer the lines that change.

When an edit changes the docstring or leading comment of a function with a body, and the user
then pauses, the worker checks the body against the new spec (`Worker.respec`, lowest priority,
dropped at the document's next edit). A rewrite that differs becomes an offer: a code action
whose edit replaces exactly the lines that change, and a Hint diagnostic on the first of them.
The spec is compared with what it was before the user began changing it: an edit that leaves
it as it was offers nothing. An offer lasts until the function's spec or body is edited (an
edit elsewhere moves it along), at most one per function.
"""

from __future__ import annotations

import asyncio

from lsprotocol import types
from pygls.workspace import TextDocument

from inference.api import Rewrite
from inference.errors import PrewriteError, Superseded
from lsp_server import convert
from lsp_server.context import ServerContext, UsesContext
from lsp_server.documents import Document
from lsp_server.spec import Respec, find_respec
from lsp_server.spec.changes import Offer, body_edits, code_edits
from lsp_server.spec.text import line_end, line_start

SOURCE = "prewrite"
BASES_KEPT = 16  # functions per document whose spec before the change is remembered


class Respecs(UsesContext):
    """Spec edits of functions with bodies, their re-verification and the offers they make."""

    def __init__(self, context: ServerContext):
        super().__init__(context)
        self.offered = 0  # offers made so far

    def changed(self, doc: Document, document: TextDocument, previous: str | None,
                point: int | None, first_start: int | None) -> None:  # fmt: skip
        """After an edit: drop the document's re-verification, move or drop its offer, and
        re-verify once the user pauses if the edit changed a spec of a function with a body."""
        doc.stop_respec_timer()
        self.worker().drop_background(doc.uri, "respec")
        delta = len(document.source) - len(previous) if previous is not None else None
        self._edited(doc, document, first_start, delta)
        settings = self.settings()
        if not (settings.respec and self.active() and point is not None and doc.language):
            return
        text = document.source
        respec = find_respec(text, point, doc.language, *self._window())
        if respec is None:
            return
        body = respec.body(text)
        bases = doc.spec_bases
        if body not in bases and previous is not None and first_start is not None:
            before = find_respec(previous, first_start, doc.language, *self._window())
            if before is not None and before.body(previous) == body:
                bases[body] = before.spec(previous)
                while len(bases) > BASES_KEPT:
                    del bases[next(iter(bases))]
        if bases.get(body, respec.spec(text)) == respec.spec(text):
            return  # not changed (or nothing known of it before)
        loop = asyncio.get_running_loop()
        doc.respec_timer = loop.call_later(
            settings.respec_idle_ms / 1000, self._paused, doc.uri, respec.spec_start
        )

    def code_actions(self, uri: str, lines: types.Range) -> list[types.CodeAction]:
        """The offer's action where `lines` meet its function (spec to body end)."""
        doc, document = self.documents.get(uri), self.document(uri)
        offer = doc.offer if doc is not None else None
        if offer is None or document is None or not self._holds(offer, document):
            return []
        first = convert.position_at(document, offer.spec_start).line
        last = convert.position_at(document, offer.body_end).line
        if lines.end.line < first or lines.start.line > last:
            return []
        edits = [types.TextEdit(convert.edit_range(document, e), e.text) for e in offer.edits]
        identifier = types.OptionalVersionedTextDocumentIdentifier(uri, document.version)
        change = types.TextDocumentEdit(identifier, edits)  # type: ignore[arg-type]
        return [
            types.CodeAction(
                title=offer.title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[self._diagnostic(document, offer)],
                is_preferred=True,
                edit=types.WorkspaceEdit(document_changes=[change]),
            )
        ]

    # -- internals ------------------------------------------------------------------------

    def _paused(self, uri: str, anchor: int) -> None:
        """The user paused after changing a spec: re-verify the body (lowest priority)."""
        doc, document = self.documents.get(uri), self.document(uri)
        if doc is None:
            return
        doc.respec_timer = None
        if document is None or doc.language is None or not self.active():
            return
        text, version = document.source, document.version
        respec = find_respec(text, anchor, doc.language, *self._window())
        body = respec.body(text) if respec else ""
        base = doc.spec_bases.get(body) if respec else None
        if respec is None or base is None or base == respec.spec(text):
            return
        old_text = text[: respec.spec_start] + base + text[respec.spec_end :]
        old = find_respec(old_text, respec.spec_start, doc.language, *self._window())
        before = old.request if old is not None and old.body(old_text) == body else None
        future = self.worker().respec(uri, respec.request, body, before)
        future.add_done_callback(lambda f: self._rewritten(uri, version, respec, body, f))

    def _rewritten(self, uri: str, version: int | None, respec: Respec, body: str,
                   future: asyncio.Future[Rewrite]) -> None:  # fmt: skip
        """A re-verification ended: offer its rewrite if the document is as it was."""
        if future.cancelled():
            return
        error, doc, document = future.exception(), self.documents.get(uri), self.document(uri)
        if isinstance(error, Superseded) or doc is None or document is None:
            return
        if document.version != version:
            return
        if error is not None:
            if isinstance(error, PrewriteError):
                self.notify.log(types.MessageType.Warning, f"prewrite: re-verifying: {error}")
                return
            self.notify.report(error)
            return
        rewrite = future.result()
        changes = body_edits(body, rewrite.text, respec.body_start)
        edits = code_edits(changes, respec.request.language)
        if rewrite.finish_reason in ("length", "unfinished") or not edits:
            self._drop(doc)
            return
        spec = respec.spec(document.source)
        doc.offer = Offer(respec.spec_start, respec.body_start, spec, body, tuple(edits))
        self.offered += 1
        self._publish(uri, document, doc.offer)

    def _edited(self, doc: Document, document: TextDocument, first_start: int | None,
                delta: int | None) -> None:  # fmt: skip
        """An edit: the offer moves along when it was below the offer's function, or after it
        (an edit elsewhere); it goes when it touched the function."""
        offer = doc.offer
        if offer is None:
            return
        if first_start is None or delta is None:
            self._drop(doc)
            return
        if first_start >= offer.body_end and self._holds(offer, document):
            pass  # after the function
        elif first_start < offer.spec_start and self._holds(offer.moved(delta), document):
            offer = offer.moved(delta)
        else:
            self._drop(doc)
            return
        doc.offer = offer
        self._publish(doc.uri, document, offer)

    @staticmethod
    def _holds(offer: Offer, document: TextDocument) -> bool:
        """True when the document still holds the offer's spec and body where it says."""
        text = document.source
        spec_end = offer.spec_start + len(offer.spec)
        return (
            text[offer.spec_start : spec_end] == offer.spec
            and text[offer.body_start : offer.body_end] == offer.body
        )

    def _drop(self, doc: Document) -> None:
        if doc.offer is not None:
            doc.offer = None
            self.notify.diagnostics(doc.uri, None, [])

    def _publish(self, uri: str, document: TextDocument, offer: Offer) -> None:
        self.notify.diagnostics(uri, document.version, [self._diagnostic(document, offer)])

    def _diagnostic(self, document: TextDocument, offer: Offer) -> types.Diagnostic:
        """A Hint on the first line that changes, saying what the spec now asks there."""
        text, first = document.source, offer.edits[0]
        # an addition after the body's last line is shown on that line
        here = min(first.start, max(offer.body_start, offer.body_end - 1))
        start, end = line_start(text, here), line_end(text, here)
        new = next((line.strip() for line in first.text.split("\n") if line.strip()), "")
        what = f"`{new}`" if new else "fewer lines"
        more = sum(e.text.count("\n") for e in offer.edits)
        message = (
            f"The {offer.noun} changed: the body it asks for has {what} here "
            f"({more} new line{'s' if more != 1 else ''} in {len(offer.edits)} place"
            f"{'s' if len(offer.edits) != 1 else ''}). Code action: {offer.title}."
        )
        return types.Diagnostic(
            range=types.Range(
                convert.position_at(document, start), convert.position_at(document, end)
            ),
            message=message,
            severity=types.DiagnosticSeverity.Hint,
            source=SOURCE,
        )

    def _window(self) -> tuple[int, int]:
        settings = self.settings()
        return settings.prefix_chars, settings.suffix_chars
