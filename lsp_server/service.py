"""What the handlers do: settings, the model's lifecycle, drafting on edits, answers on trigger."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.workspace import TextDocument

from inference.api import Completion, Request
from inference.errors import PrewriteError
from lsp_server import convert, errors
from lsp_server.config import SECTION, Settings, SettingsLayers, unknown_keys
from lsp_server.documents import Document, Documents, Trigger, TriggerKind
from lsp_server.errors import SettingsError
from lsp_server.spec import Edit, Spec, answer_edit, find_spec
from lsp_server.trace import Trace, read_workspace_settings
from lsp_server.wire import DRAFT, STATUS, ServerState
from lsp_server.worker import DraftEvent, Worker

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

PROGRESS_CREATE_TIMEOUT_S = 5.0  # a client that never answers progress/create gets none
_DRAFT_FAILURE = "draft-failure"  # key in Service._told while drafting keeps failing


@dataclass(frozen=True)
class _Tag:
    """What a draft job needs to be reported: the document version and where its text goes."""

    version: int
    position: types.Position
    closing: str
    request: Request


def answer_text(closing: str, body: str) -> str:
    """The text a draft inserts at the end of the spec's last line."""
    body = body.rstrip("\n")
    return f"{closing}\n{body}" if body.strip() else ""


class Service:
    """One per server: everything behind the LSP handlers."""

    def __init__(self, server: LanguageServer):
        self.server = server
        self.layers = SettingsLayers()
        self.documents = Documents()
        self.trace = Trace(on_error=self.report)
        self.enabled = True
        self.state: ServerState = "loading"
        self.root: str | None = None
        self._worker: Worker | None = None
        self._idle: dict[str, asyncio.TimerHandle] = {}
        self._told: set[str] = set()
        self._progress_ids = itertools.count(1)

    @property
    def settings(self) -> Settings:
        """The effective settings."""
        return self.layers.current

    @property
    def worker(self) -> Worker:
        """The engine worker (started on first use, inside the event loop)."""
        if self._worker is None:
            self._worker = Worker(asyncio.get_running_loop(), self._on_draft)
        return self._worker

    # -- lifecycle and settings ---------------------------------------------------------------

    def initialize(self, options: Any) -> None:
        """Take initializationOptions (a flat object of settings)."""
        self._apply("initial", options)

    async def start(self, root: str | None) -> None:
        """After `initialized`: read the workspace's prewrite.toml, then load the model."""
        self.root = root
        try:
            self._apply("workspace", await read_workspace_settings(root), raising=True)
        except SettingsError as exc:
            self.report(exc)
        await self.load()

    async def configure(self, settings: Any) -> None:
        """workspace/didChangeConfiguration: the `prewrite` section, pulled when not pushed."""
        section = convert.settings_section(settings, SECTION)
        if section is None:
            section = await self._pull_settings()
            if section is None:
                return
        before = self.settings
        if not self._apply("client", section):
            return
        if self.settings.engine_values() != before.engine_values():
            await self.load(previous=before)
        elif not self.settings.drafting:
            self.worker.drop_drafts()

    async def load(self, previous: Settings | None = None) -> None:
        """Load the configured model with progress; on failure the model and settings stay."""
        model = self.settings.model
        token = await self._progress_begin(f"loading {model}")
        self._status("loading", f"loading {model}")
        try:
            await self.worker.load(self.settings.engine_config())
        except PrewriteError as exc:
            self._load_failed(exc, previous)
        else:
            self._status("ready" if self.enabled else "disabled", f"{model} is ready")
            self._redraft_all()
        finally:
            if token is not None:
                self.server.work_done_progress.end(token, convert.progress_end("done"))

    def shutdown(self) -> None:
        """Stop model work; the process exits on `exit`."""
        for handle in self._idle.values():
            handle.cancel()
        if self._worker is not None:
            self._worker.stop()

    def _apply(self, layer: Any, values: Any, raising: bool = False) -> bool:
        try:
            self.layers.update(layer, values)
        except SettingsError as exc:
            if raising:
                raise
            self.report(exc)
            return False
        if isinstance(values, dict) and (unknown := unknown_keys(values)):
            self._log(types.MessageType.Warning, f"prewrite: unknown settings ignored: {unknown}")
        self.trace.configure(self.settings.trace_path, self.root)
        return True

    def _load_failed(self, exc: PrewriteError, previous: Settings | None) -> None:
        worker = self.worker
        if worker.config is None:
            self._status("error", str(exc))
            self.report(exc)
            return
        if previous is not None:
            self.layers.update("client", previous.model_dump(by_alias=True))
        self._status("ready", f"kept {worker.config.model}")
        self.report(SettingsError(f"model: {exc}; keeping {worker.config.model}", ["model"]))

    async def _pull_settings(self) -> Any:
        capabilities = self.server.client_capabilities.workspace
        if not (capabilities and capabilities.configuration):
            return None
        params = types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
        try:
            values = await self.server.workspace_configuration_async(params)
        except JsonRpcException as exc:
            self._log(types.MessageType.Warning, f"prewrite: could not pull settings: {exc}")
            return None
        return values[0] if values else None

    # -- documents and drafting ---------------------------------------------------------------

    def opened(self, item: types.TextDocumentItem) -> None:
        """didOpen: track the document (drafting starts with the first edit)."""
        self.documents.open(item.uri, item.language_id, len(item.text))

    def changed(self, uri: str, changes: Sequence[types.TextDocumentContentChangeEvent]) -> None:
        """didChange (pygls applied it already): find the spec, hand a new request to drafting."""
        doc = self.documents.get(uri)
        document = self._document(uri)
        if doc is None or document is None:
            return
        point, first_start = convert.edit_point(document, changes)
        doc.edited(len(document.source), first_start)
        spec = doc.find(document.source, point, *self._context_chars())
        if spec is not None:
            self._draft(doc, document, spec)

    def closed(self, uri: str) -> None:
        """didClose: forget the document and its engine session."""
        if (handle := self._idle.pop(uri, None)) is not None:
            handle.cancel()
        self.documents.close(uri)
        if self._worker is not None:
            self._worker.close(uri)

    def _draft(self, doc: Document, document: TextDocument, spec: Spec) -> None:
        settings = self.settings
        if not (self.enabled and settings.drafting) or self.state == "error":
            return
        if spec.request == doc.submitted:
            self._same_request(doc, document, spec)
            return
        if settings.idle_only:
            self._draft_when_idle(doc.uri)
            return
        self._submit(doc, document, spec)

    def _draft_when_idle(self, uri: str) -> None:
        if (handle := self._idle.pop(uri, None)) is not None:
            handle.cancel()
        loop = asyncio.get_running_loop()
        self._idle[uri] = loop.call_later(self.settings.idle_ms / 1000, self._idle_fired, uri)

    def _idle_fired(self, uri: str) -> None:
        self._idle.pop(uri, None)
        doc, document = self.documents.get(uri), self._document(uri)
        if doc is None or document is None:
            return
        spec = doc.find(document.source, None, *self._context_chars())
        if spec is not None and spec.request != doc.submitted:
            self._submit(doc, document, spec)

    def _submit(self, doc: Document, document: TextDocument, spec: Spec) -> None:
        doc.submitted = spec.request
        doc.tag = self._tag(document, spec)
        self.worker.draft(doc.uri, spec.request, doc.tag)

    def _same_request(self, doc: Document, document: TextDocument, spec: Spec) -> None:
        """An edit that leaves the request as it was: the draft now stands for this version."""
        doc.tag = self._tag(document, spec)
        completion = self.worker.verified(doc.uri, spec.request)
        if completion is not None:
            self._on_draft(DraftEvent(doc.uri, doc.tag, "verified", completion))

    @staticmethod
    def _tag(document: TextDocument, spec: Spec) -> _Tag:
        position = convert.position_at(document, spec.insert_at)
        return _Tag(document.version or 0, position, spec.closing, spec.request)

    def _redraft_all(self) -> None:
        """After a (re)load or re-enabling: draft every document's spec again."""
        for doc in self.documents:
            doc.submitted = None
            document = self._document(doc.uri)
            spec = doc.find(document.source, None, *self._context_chars()) if document else None
            if spec is not None and document is not None:
                self._draft(doc, document, spec)

    def _on_draft(self, event: DraftEvent) -> None:
        doc = self.documents.get(event.doc)
        if doc is None:
            return
        if event.status == "failed":
            self.report(event.error or RuntimeError("drafting failed"), once=True)
            return
        self._told.discard(_DRAFT_FAILURE)
        tag: _Tag = event.tag
        if doc.tag is not None and tag.request == doc.tag.request:
            tag = doc.tag  # report it for the newest version that has the same request
        if event.completion is not None:
            doc.preview = answer_text(tag.closing, event.completion.text)
        if self.settings.draft_preview:
            params = convert.draft_params(
                doc.uri, tag.version, tag.position, event.status, doc.preview, event.completion
            )
            self.server.protocol.notify(DRAFT, params)

    # -- answers ------------------------------------------------------------------------------

    async def inline(self, params: types.InlineCompletionParams) -> types.InlineCompletionList:
        """textDocument/inlineCompletion: the residual answer, from the draft when it is ready."""
        kind = convert.inline_trigger(params)
        document, edit = await self._answer(params.text_document.uri, params.position, kind)
        return convert.inline_list(document, edit)

    async def completion(self, params: types.CompletionParams) -> types.CompletionList:
        """textDocument/completion: the answer as one item (while typing: from the draft only)."""
        invoked = convert.completion_invoked(params)
        uri = params.text_document.uri
        document, edit = await self._answer(uri, params.position, "completion", not invoked)
        snippets = convert.snippet_support(self.server.client_capabilities)
        return convert.completion_list(document, edit, snippets)

    async def plain(self, params: types.InlineCompletionParams) -> types.InlineCompletionList:
        """prewrite/plainCompletion: decode the same request at trigger with no draft."""
        located = self._locate(params.text_document.uri, params.position)
        if located is None:
            return convert.inline_list(None, None)
        document, text, cursor, spec = located
        completion = await self.worker.plain(spec.request)
        return convert.inline_list(document, answer_edit(text, spec, cursor, completion.text))

    async def _answer(
        self, uri: str, position: types.Position, kind: TriggerKind, draft_only: bool = False
    ) -> tuple[TextDocument | None, Edit | None]:
        started = time.perf_counter()
        located = self._locate(uri, position)
        if located is None:
            return None, None
        document, text, cursor, spec = located
        completion = self.worker.verified(uri, spec.request)
        from_draft = completion is not None
        if completion is None:
            if draft_only:
                return None, None
            tag = self._tag(document, spec)
            completion = await self.worker.finalize(uri, spec.request, tag, self.settings.drafting)
        self._record(uri, document.version or 0, kind, completion, from_draft, started)
        return document, answer_edit(text, spec, cursor, completion.text)

    def _locate(
        self, uri: str, position: types.Position
    ) -> tuple[TextDocument, str, int, Spec] | None:
        """The open document, its text, the cursor offset and the spec there, if all are there."""
        if not self.enabled:
            return None
        if not self.worker.ready:
            self._log_once(types.MessageType.Info, "prewrite: the model is not ready yet")
            return None
        doc, document = self.documents.get(uri), self._document(uri)
        if doc is None or document is None or doc.language is None:
            return None
        text = document.source
        cursor = convert.offset_at(document, position)
        spec = find_spec(text, cursor, doc.language, *self._context_chars())
        return (document, text, cursor, spec) if spec is not None else None

    def _record(
        self,
        uri: str,
        version: int,
        kind: TriggerKind,
        completion: Completion,
        from_draft: bool,
        started: float,
    ) -> None:
        residual = 0 if from_draft else completion.cost.forwards
        residual_ms = 0.0 if from_draft else completion.cost.wall_ms
        latency_ms = (time.perf_counter() - started) * 1000.0
        trigger = Trigger(
            version, kind, residual, residual_ms, latency_ms, from_draft, completion.finish_reason
        )
        doc = self.documents.get(uri)
        if doc is not None:
            doc.triggers.append(trigger)
        self.trace.record(
            {
                "uri": uri,
                **trigger.wire(),
                "acceptance": completion.cost.acceptance,
                "promptTokens": completion.prompt_tokens,
                "answerTokens": len(completion.token_ids),
            }
        )

    # -- commands -----------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """prewrite.stats: forwards by phase, draft job counts, the last triggers per document."""
        worker = self.worker
        forwards = {"drafting": 0, "residual": 0, "baseline": 0, **worker.forwards()}
        return {
            "state": self.state,
            "enabled": self.enabled,
            "model": worker.config.model if worker.config else self.settings.model,
            "settings": self.settings.model_dump(by_alias=True),
            "forwards": forwards,
            "drafts": worker.stats(),
            "documents": [
                {
                    "uri": doc.uri,
                    "residualForwards": sum(t.residual_forwards for t in doc.triggers),
                    "triggers": [t.wire() for t in doc.triggers],
                }
                for doc in self.documents
            ],
        }

    def toggle(self, value: Any = None) -> dict[str, Any]:
        """prewrite.toggle: switch drafting and answers off or on (argument: true/false)."""
        self.enabled = (not self.enabled) if value is None else bool(value)
        if not self.enabled:
            self.worker.drop_drafts()
            self._status("disabled", "prewrite is off")
        elif self.worker.ready:
            self._status("ready", "prewrite is on")
            self._redraft_all()
        return {"enabled": self.enabled}

    # -- telling the user ---------------------------------------------------------------------

    def report(self, exc: BaseException, once: bool = False) -> None:
        """Show a failure nobody waits for.

        With `once` (drafting, which fails again on every keystroke) only the first failure
        pops up until a draft succeeds again; every one is logged.
        """
        kind, message = errors.to_message(exc)
        self._log(kind, message)
        if kind == types.MessageType.Log or (once and _DRAFT_FAILURE in self._told):
            return
        if once:
            self._told.add(_DRAFT_FAILURE)
        self.server.window_show_message(convert.show_message(kind, message))

    def _log(self, kind: types.MessageType, message: str) -> None:
        self.server.window_log_message(convert.log_message(kind, message))

    def _log_once(self, kind: types.MessageType, message: str) -> None:
        if message not in self._told:
            self._told.add(message)
            self._log(kind, message)

    def _status(self, state: ServerState, message: str) -> None:
        self.state = state
        model = self.worker.config.model if self.worker.config else self.settings.model
        self.server.protocol.notify(STATUS, convert.status_params(state, model, message))

    async def _progress_begin(self, message: str) -> str | None:
        if not convert.progress_support(self.server.client_capabilities):
            return None
        token = f"prewrite-load-{next(self._progress_ids)}"
        progress = self.server.work_done_progress
        try:
            await asyncio.wait_for(progress.create_async(token), PROGRESS_CREATE_TIMEOUT_S)
        except (TimeoutError, JsonRpcException):
            return None
        progress.begin(token, convert.progress_begin(message))
        return token

    # -- helpers ------------------------------------------------------------------------------

    def _document(self, uri: str) -> TextDocument | None:
        """The workspace's copy of an open document; None for a URI that is not open."""
        return self.server.workspace.get_text_document(uri) if self._is_open(uri) else None

    def _is_open(self, uri: str) -> bool:
        return self.documents.get(uri) is not None

    def _context_chars(self) -> tuple[int, int]:
        return self.settings.prefix_chars, self.settings.suffix_chars
