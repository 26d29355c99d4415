"""The language server: thin LSP handlers over the service, and the protocol it speaks."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Generator
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from lsp_server import convert, transport
from lsp_server.errors import answering
from lsp_server.lines import LspWorkspace
from lsp_server.service import Service
from lsp_server.spec import BRACE_IDS, PYTHON_IDS
from lsp_server.wire import PLAIN_COMPLETION, STATS_COMMAND, TOGGLE_COMMAND, WireProtocolMixin

VERSION = "0.1.0"
LANGUAGE_IDS = sorted(PYTHON_IDS | BRACE_IDS)  # initialize's experimental.prewrite.languageIds
logger = logging.getLogger(__name__)


class PrewriteProtocol(WireProtocolMixin, LanguageServerProtocol):
    """pygls' protocol plus prewrite's methods; it answers requests whose params do not parse."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            # pygls only logs a request whose params do not parse; the client would wait forever.
            if isinstance(data, dict) and "id" in data and "method" in data:
                self._send_response(data["id"], error=exc.to_response_error())
            raise

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        """pygls' initialize, plus what clients cannot ask otherwise: the language ids the
        server finds specs in (clients serve those by default instead of repeating the list)."""
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"prewrite": {"languageIds": LANGUAGE_IDS}}
        return result


class PrewriteServer(LanguageServer):
    """The prewrite language server; its state lives in `service`."""

    def __init__(self) -> None:
        super().__init__(
            "prewrite",
            VERSION,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=PrewriteProtocol,
        )
        self.service = Service(self)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log protocol errors: a client's malformed messages must not pop up per keystroke."""
        self.window_log_message(convert.log_message(types.MessageType.Error, f"prewrite: {error}"))

    # pygls' own start_io and start_tcp, with prewrite's frame reader (lsp_server/transport.py)
    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over stdin and stdout until the client exits the server or closes stdin."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        read = transport.stdin_reader(stdin or sys.stdin.buffer, self.thread_pool)
        try:
            asyncio.run(self._serve(read))
        except BrokenPipeError:
            logger.error("Connection to the client is lost! Shutting down the server.")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one client at a time on a TCP port until it exits the server."""
        self._stop_event = threading.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.protocol.set_writer(writer)  # type: ignore[arg-type]
            await self._serve(lambda: reader.read(transport.CHUNK))
            self.shutdown()

        async def listen() -> None:
            self._server = await asyncio.start_server(connection, host, port)
            addresses = ", ".join(str(s.getsockname()) for s in self._server.sockets)
            logger.info("Serving on %s", addresses)
            async with self._server:
                await self._server.serve_forever()

        try:
            asyncio.run(listen())
        except asyncio.CancelledError:
            logger.debug("Server was cancelled")

    async def _serve(self, read: transport.Read) -> None:
        assert self._stop_event is not None
        report = lambda error: self._report_server_error(error, JsonRpcException)  # noqa: E731
        await transport.serve(read, self.protocol, self._stop_event, report)


def initialize(ls: PrewriteServer, params: types.InitializeParams) -> None:
    # pygls made the workspace just now, and no document is open yet: make it count lines as
    # the client does (lsp_server/lines.py)
    ls.protocol._workspace = LspWorkspace.like(ls.workspace, ls._text_document_sync_kind)
    ls.service.initialize(params.initialization_options)


async def initialized(ls: PrewriteServer, params: types.InitializedParams) -> None:
    await ls.service.start(ls.workspace.root_path)


async def did_change_configuration(
    ls: PrewriteServer, params: types.DidChangeConfigurationParams
) -> None:
    await ls.service.configure(params.settings)


def did_open(ls: PrewriteServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.service.opened(params.text_document)


def did_change(ls: PrewriteServer, params: types.DidChangeTextDocumentParams) -> None:
    document = params.text_document
    ls.service.changed(document.uri, document.version, params.content_changes)


def did_close(ls: PrewriteServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.service.closed(params.text_document.uri)


@answering
async def code_action(
    ls: PrewriteServer, params: types.CodeActionParams
) -> list[types.CodeAction]:
    return ls.service.code_actions(params)


@answering
async def inline_completion(
    ls: PrewriteServer, params: types.InlineCompletionParams
) -> types.InlineCompletionList:
    return await ls.service.answers.inline(params)


@answering
async def completion(ls: PrewriteServer, params: types.CompletionParams) -> types.CompletionList:
    return await ls.service.answers.completion(params)


@answering
async def plain_completion(
    ls: PrewriteServer, params: types.InlineCompletionParams
) -> types.InlineCompletionList:
    return await ls.service.answers.plain(params)


def stats(ls: PrewriteServer, *args: Any) -> dict[str, Any]:
    return ls.service.stats()


def toggle(ls: PrewriteServer, *args: Any) -> dict[str, Any]:
    return ls.service.toggle(args[0] if args else None)


def shutdown(ls: PrewriteServer, params: None) -> None:
    ls.service.shutdown()


def create_server() -> PrewriteServer:
    """A new server with every feature registered."""
    server = PrewriteServer()
    features: list[tuple[str, Any, Any]] = [
        (types.INITIALIZE, initialize, None),
        (types.INITIALIZED, initialized, None),
        (types.WORKSPACE_DID_CHANGE_CONFIGURATION, did_change_configuration, None),
        (types.TEXT_DOCUMENT_DID_OPEN, did_open, None),
        (types.TEXT_DOCUMENT_DID_CHANGE, did_change, None),
        (types.TEXT_DOCUMENT_DID_CLOSE, did_close, None),
        (types.TEXT_DOCUMENT_INLINE_COMPLETION, inline_completion, types.InlineCompletionOptions()),
        (types.TEXT_DOCUMENT_COMPLETION, completion, types.CompletionOptions()),
        (
            types.TEXT_DOCUMENT_CODE_ACTION,
            code_action,
            types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
        ),
        (PLAIN_COMPLETION, plain_completion, None),
        (types.SHUTDOWN, shutdown, None),
    ]
    for method, handler, options in features:
        server.feature(method, options)(handler)
    server.command(STATS_COMMAND)(stats)
    server.command(TOGGLE_COMMAND)(toggle)
    return server
