"""Answers at trigger: the residual completion (from the draft once verified), or a plain one."""

from __future__ import annotations

import time
from collections.abc import Callable

from lsprotocol import types
from pygls.workspace import TextDocument

from inference.api import Completion
from inference.errors import Superseded
from inference.examples.sandbox import ExampleRun
from lsp_server import convert
from lsp_server.context import ServerContext, UsesContext
from lsp_server.documents import Alternative, Trigger, TriggerKind
from lsp_server.drafting import Drafting, DraftTag
from lsp_server.spec import Edit, Spec, answer_edit, find_spec
from lsp_server.trace import Trace

Located = tuple[TextDocument, str, int, Spec]  # document, its text, cursor offset, spec there
STALE_RETRIES = 3  # waits again for a trigger whose draft was replaced while nothing changed


class Answers(UsesContext):
    """textDocument/inlineCompletion, textDocument/completion and prewrite/plainCompletion."""

    def __init__(
        self,
        context: ServerContext,
        drafting: Drafting,
        trace: Trace,
        snippets: Callable[[], bool],
    ):
        super().__init__(context)
        self.drafting = drafting
        self.trace = trace
        self.snippets = snippets

    async def inline(self, params: types.InlineCompletionParams) -> types.InlineCompletionList:
        """The residual answer with the range it replaces."""
        kind = convert.inline_trigger(params)
        uri = params.text_document.uri
        document, edit, alternative = await self._answer(uri, params.position, kind)
        return convert.inline_list(document, edit, *([alternative] if alternative else []))

    async def completion(self, params: types.CompletionParams) -> types.CompletionList:
        """The same answer as one item; while the user types, only from a verified draft."""
        draft_only = not convert.completion_invoked(params)
        uri = params.text_document.uri
        document, edit, _ = await self._answer(uri, params.position, "completion", draft_only)
        return convert.completion_list(document, edit, self.snippets())

    async def plain(self, params: types.InlineCompletionParams) -> types.InlineCompletionList:
        """The conventional answer: the same request decoded at trigger, with no draft."""
        located = self._locate(params.text_document.uri, params.position)
        if located is None:
            return convert.inline_list(None, None)
        document, text, cursor, spec = located
        completion = await self.worker().plain(spec.request, params.text_document.uri)
        self._still(params.text_document.uri, document, text)
        return convert.inline_list(document, answer_edit(text, spec, cursor, completion.text))

    async def _answer(
        self, uri: str, position: types.Position, kind: TriggerKind, draft_only: bool = False
    ) -> tuple[TextDocument | None, Edit | None, Edit | None]:
        """The document, the answer's edit, and the edit of an alternative whose examples
        pass where the answer's fail (searchOnFailure), if one was found."""
        started = time.perf_counter()
        located = self._locate(uri, position)
        if located is None:
            return None, None, None
        document, text, cursor, spec = located
        worker = self.worker()
        completion = worker.verified(uri, spec.request)
        from_draft = completion is not None
        if completion is None:
            if draft_only:
                return None, None, None
            completion = await self._wait(uri, document, spec, kind)
            self._still(uri, document, text)
        examples = self.drafting.examples_of(uri, spec.request, completion.text)
        doc = self.documents.get(uri)
        found = doc.alternative_to(spec.request, completion.text) if doc is not None else None
        self._record(uri, document.version or 0, kind, completion, from_draft, started, examples,
                     found)  # fmt: skip
        alternative = answer_edit(text, spec, cursor, found.completion.text) if found else None
        return document, answer_edit(text, spec, cursor, completion.text), alternative

    async def _wait(
        self, uri: str, document: TextDocument, spec: Spec, kind: TriggerKind
    ) -> Completion:
        """The answer for `spec`: while the user types, the draft's (disturbing nothing).

        A draft the trigger waited for can be replaced by the server itself (an idle timer, a
        preemption) while the document stays as it was: the answer is not stale then, and
        the trigger waits again. It is stale (`Superseded`) once the document changed.
        """
        version, retries = document.version, 0
        while True:
            waiting = None
            if kind == "automatic":
                waiting = self.drafting.when_drafted(uri, document, spec)
            if waiting is None:
                tag = DraftTag.of(document, spec)
                waiting = self.worker().finalize(uri, spec.request, tag, self.settings().drafting)
            try:
                return await waiting
            except Superseded:
                changed = self.document(uri) is not document or document.version != version
                retries += 1
                if changed or retries > STALE_RETRIES:
                    raise

    def _still(self, uri: str, document: TextDocument, text: str) -> None:
        """Superseded when the document changed while its answer was computed.

        An edit can leave the request as it was (far above the spec, or below it) and still
        move the offsets the answer's edit is computed on.
        """
        if self.document(uri) is not document or document.source != text:
            raise Superseded("the document changed while its answer was computed")

    def _locate(self, uri: str, position: types.Position) -> Located | None:
        """The open document, its text, the cursor offset and the spec there, if all are there."""
        if not self.active():
            return None
        if not self.worker().ready:
            self.notify.log_once(types.MessageType.Info, "prewrite: the model is not ready yet")
            return None
        doc, document = self.documents.get(uri), self.document(uri)
        if doc is None or document is None or doc.language is None:
            return None
        text = document.source
        cursor = convert.offset_at(document, position)
        settings = self.settings()
        spec = find_spec(text, cursor, doc.language, settings.prefix_chars, settings.suffix_chars)
        return (document, text, cursor, spec) if spec is not None else None

    def _record(
        self,
        uri: str,
        version: int,
        kind: TriggerKind,
        completion: Completion,
        from_draft: bool,
        started: float,
        examples: ExampleRun | None,
        alternative: Alternative | None = None,
    ) -> None:
        """Keep the trigger's figures for prewrite.stats and the trace."""
        cost = completion.cost
        trigger = Trigger(
            version=version,
            kind=kind,
            residual_forwards=0 if from_draft else cost.forwards,
            residual_ms=0.0 if from_draft else cost.wall_ms,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            from_draft=from_draft,
            finish_reason=completion.finish_reason,
            residual_requests=0 if from_draft else cost.verify_requests + cost.generate_requests,
            residual_request_tokens=0
            if from_draft
            else cost.verify_request_tokens + cost.generate_request_tokens,
            answer_tokens=len(completion.token_ids),
        )
        doc = self.documents.get(uri)
        if doc is not None:
            doc.triggers.append(trigger)
        self.trace.record(
            {
                "uri": uri,
                **trigger.wire(),
                "acceptance": cost.acceptance,
                "promptTokens": completion.prompt_tokens,
                "examples": examples.to_wire() if examples is not None else None,
                "alternative": {
                    "greedy": False,
                    "seed": alternative.seed,
                    "drawn": alternative.drawn,
                    "examples": alternative.examples.to_wire(),
                    "answerTokens": len(alternative.completion.token_ids),
                }
                if alternative is not None
                else None,
            }
        )
