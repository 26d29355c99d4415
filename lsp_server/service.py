"""What the handlers call: settings, the model's lifecycle, open documents and the commands.

Drafting (drafting.py) and answers (answers.py) get what they need from here as one
ServerContext of callables, so that each reads the current settings, worker and documents
without holding this object.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.workspace import TextDocument

from inference.errors import PrewriteError
from inference.packs import AUTO_MODEL
from lsp_server import convert
from lsp_server.answers import Answers
from lsp_server.config import SECTION, Settings, SettingsLayers, unknown_keys
from lsp_server.context import ServerContext
from lsp_server.documents import Documents
from lsp_server.drafting import Drafting
from lsp_server.errors import SettingsError
from lsp_server.notify import Notifier
from lsp_server.respecs import Respecs
from lsp_server.searches import Searches
from lsp_server.trace import Trace, read_workspace_settings
from lsp_server.wire import ServerState
from lsp_server.worker import Worker

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer


class Service:
    """One per server: the state behind the LSP handlers."""

    def __init__(self, server: LanguageServer):
        self.server = server
        self.layers = SettingsLayers()
        self.documents = Documents()
        self.notify = Notifier(server)
        self.trace = Trace(on_error=self.notify.report)
        self.enabled = True
        self.state: ServerState = "loading"
        self._message = ""
        self.root: str | None = None
        self._worker: Worker | None = None
        context = ServerContext(
            self.documents, self.notify, self._settings, self._get_worker, self.document,
            self.active,
        )  # fmt: skip
        self.drafting = Drafting(context)
        self.respecs = Respecs(context)
        self.searches = Searches(
            context, lambda: self.drafting.examples, self.drafting.alternative_found
        )
        self.drafting.examples_unavailable = self._examples_unavailable
        self.drafting.examples_failed = self.searches.failed
        self.answers = Answers(context, self.drafting, self.trace, self._snippets)

    @property
    def settings(self) -> Settings:
        """The effective settings."""
        return self.layers.current

    @property
    def worker(self) -> Worker:
        """The engine worker (started on first use, inside the event loop)."""
        if self._worker is None:
            self._worker = Worker(asyncio.get_running_loop(), self.drafting.on_event)
        return self._worker

    def active(self) -> bool:
        """True unless prewrite is switched off or has no model at all."""
        return self.enabled and self.state != "error"

    def document(self, uri: str) -> TextDocument | None:
        """The workspace's copy of an open document; None for a URI that is not open."""
        if self.documents.get(uri) is None:
            return None
        return self.server.workspace.get_text_document(uri)

    # -- lifecycle and settings ---------------------------------------------------------------

    def initialize(self, options: Any) -> None:
        """initializationOptions: a flat object of settings."""
        self._apply("initial", options)

    async def start(self, root: str | None) -> None:
        """After `initialized`: read the workspace's prewrite.toml, then load the model."""
        self.root = root
        try:
            self._apply("workspace", await read_workspace_settings(root), raising=True)
        except SettingsError as exc:
            self.notify.report(exc)
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
        if not self.settings.search_on_failure:
            for doc in self.documents:
                self.searches.stop(doc)

    async def load(self, previous: Settings | None = None) -> None:
        """Load the configured model with progress; on failure the model and settings stay."""
        model = self.settings.model
        token = await self.notify.progress_begin(f"loading {model}")
        self._status("loading", f"loading {model}")
        failure: PrewriteError | None = None
        try:
            await self.worker.load(self.settings.engine_config(self.root))
        except PrewriteError as exc:
            failure = exc
        finally:  # the progress ends before the outcome is told
            self.notify.progress_end(token, "done")
        if failure is not None:
            self._load_failed(failure, previous)
            return
        info = self.worker.runtime()
        where = f" on {info.kind} ({info.device}, {info.threads} threads)" if info else ""
        loaded = self.worker.config
        if model == AUTO_MODEL and loaded is not None:  # which pack, and why
            model = f"{loaded.model} ({self.worker.model_choice})"
        self._status("ready" if self.enabled else "disabled", f"{model} is ready{where}")
        if self.settings.check_examples == "auto":
            self.drafting.examples.probe()
        self.drafting.redraft_all()

    def shutdown(self) -> None:
        """Stop model work; the process exits on `exit`."""
        self.drafting.shutdown()
        self.documents.stop_timers()
        if self._worker is not None:
            self._worker.stop()

    def _apply(self, layer: Any, values: Any, raising: bool = False) -> bool:
        try:
            self.layers.update(layer, values)
        except SettingsError as exc:
            if raising:
                raise
            self.notify.report(exc)
            return False
        if isinstance(values, dict) and (unknown := unknown_keys(values)):
            message = f"prewrite: unknown settings ignored: {', '.join(unknown)}"
            self.notify.log(types.MessageType.Warning, message)
        self.trace.configure(self.settings.trace_path, self.root)
        return True

    def _load_failed(self, exc: PrewriteError, previous: Settings | None) -> None:
        loaded = self.worker.config
        if loaded is None:
            self._status("error", str(exc))
            self.notify.report(exc)
            return
        if previous is not None:
            self.layers.update("client", previous.model_dump(by_alias=True))
        self._status("ready" if self.enabled else "disabled", f"kept {loaded.model}")
        self.notify.report(SettingsError(f"model: {exc}; keeping {loaded.model}", ["model"]))

    async def _pull_settings(self) -> Any:
        capabilities = self.server.client_capabilities.workspace
        if not (capabilities and capabilities.configuration):
            return None
        params = types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
        try:
            values = await self.server.workspace_configuration_async(params)
        except JsonRpcException as exc:
            self.notify.log(types.MessageType.Warning, f"prewrite: cannot pull settings: {exc}")
            return None
        return values[0] if values else None

    def _examples_unavailable(self, why: str) -> None:
        """The sandbox does not work here: the status says so once, beside the model's state."""
        if self.state in ("ready", "disabled"):
            self._status(self.state, f"{self._message}; examples not checked: {why}")

    def _status(self, state: ServerState, message: str) -> None:
        self.state, self._message = state, message
        loaded = self.worker.config
        self.notify.status(state, loaded.model if loaded else self.settings.model, message)

    def _settings(self) -> Settings:
        return self.layers.current

    def _get_worker(self) -> Worker:
        return self.worker

    def _snippets(self) -> bool:
        return convert.snippet_support(self.server.client_capabilities)

    # -- documents ----------------------------------------------------------------------------

    def opened(self, item: types.TextDocumentItem) -> None:
        """didOpen: track the document (drafting starts with the first edit; until then the
        start of its prompt may be encoded: `Drafting.opened`)."""
        doc = self.documents.open(item.uri, item.language_id, len(item.text), item.version)
        document = self.document(item.uri)
        doc.text = document.source if document is not None else item.text
        if document is not None:
            self.drafting.opened(doc, document)

    def changed(
        self, uri: str, version: int, changes: Sequence[types.TextDocumentContentChangeEvent]
    ) -> None:
        """didChange, after pygls applied it: drafting, and a changed spec's re-verification."""
        doc, document = self.documents.get(uri), self.document(uri)
        if doc is None or document is None:
            return
        previous, doc.text = doc.text, document.source
        point, first_start = convert.edit_point(document, changes)
        spec = self.drafting.changed(doc, document, version, changes)
        self.searches.changed(doc, spec.request if spec is not None else None)
        self.respecs.changed(doc, document, previous, point, first_start)

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        """textDocument/codeAction: the offer of a re-verified body, where asked."""
        only = params.context.only
        if only and not any(types.CodeActionKind.QuickFix.startswith(kind) for kind in only):
            return []
        return self.respecs.code_actions(params.text_document.uri, params.range)

    def closed(self, uri: str) -> None:
        """didClose: forget the document (all the server kept of it) and its engine session."""
        self.drafting.closed(uri)
        self.documents.close(uri)
        if self._worker is not None:
            self._worker.close(uri)

    # -- commands -----------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """prewrite.stats: forwards by phase, engine seconds by job kind, draft job counts, and
        per document its version and length (characters) as the server has them and the last
        triggers."""
        worker = self.worker
        return {
            "state": self.state,
            "enabled": self.enabled,
            "model": worker.config.model if worker.config else self.settings.model,
            "runtime": dataclasses.asdict(info) if (info := worker.runtime()) else None,
            "settings": self.settings.model_dump(by_alias=True),
            "forwards": {"drafting": 0, "residual": 0, "baseline": 0, **worker.forwards()},
            "busySeconds": worker.busy(),
            "drafts": worker.stats(),
            "respecs": {**worker.background_stats("respec"), "offered": self.respecs.offered},
            "prefills": worker.background_stats("prefill"),
            "memory": worker.memory(),
            "examples": self.drafting.examples.stats(),
            "searches": self.searches.stats(),
            "documents": [
                {
                    "uri": doc.uri,
                    "version": doc.version,
                    "length": doc.length,
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
            self.drafting.redraft_all()
        return {"enabled": self.enabled}
