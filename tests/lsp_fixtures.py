"""Helpers for the end-to-end server tests: a pytest-lsp client that knows prewrite's methods.

Not a conftest (the lead owns that): test modules import what they need and define their own
pytest-lsp fixtures with `SERVER`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

from lsp_server.client import (
    Watch,
    command_params,
    inline_params,
    keystrokes,
    open_params,
    position_of,
    server_command,
)
from lsp_server.wire import PLAIN_COMPLETION, STATS_COMMAND, TOGGLE_COMMAND, WireProtocolMixin

DATA = Path(__file__).parent / "data" / "server"
CURSOR = "‸"
# smollm2-135m writes code only in the chat format; a short budget keeps the suite quick.
TEST_SETTINGS: dict[str, Any] = {
    "model": "smollm2-135m",
    "promptFormat": "chat",
    "maxTokens": 48,
    "draftPreview": True,
}


SHUTDOWN_GRACE_S = 60  # a wedged server is killed after this, so a failing test cannot hang


class CheckingProtocol(WireProtocolMixin, LanguageClientProtocol):
    """pytest-lsp's checking client protocol plus prewrite's methods."""


class PrewriteClient(LanguageClient):
    """pytest-lsp's client with a `Watch` on prewrite's notifications."""

    def __init__(self) -> None:
        super().__init__(protocol_cls=CheckingProtocol, converter_factory=default_converter)
        register_lsp_features(self)
        self.watch = Watch()
        self.watch.attach(self)


SERVER = ClientServerConfig(server_command=server_command(), client_factory=PrewriteClient)


async def start(
    client: PrewriteClient,
    settings: dict[str, Any] | None = None,
    editor: str = "visual-studio-code",
    root: Path | None = None,
) -> types.InitializeResult:
    """initialize + initialized with an editor's real capabilities; waits until loading ends."""
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(editor),
            initialization_options=TEST_SETTINGS if settings is None else settings,
            root_uri=root.as_uri() if root else None,
        )
    )
    await client.watch.settled()
    return result


async def finish(client: LanguageClient) -> None:
    """Fixture teardown: shutdown and exit if the server still runs (a failed test may leave it).

    pytest-lsp's `stop()` waits for the server process to end, so it must be told to.
    """
    server = client._server
    if server is None or server.returncode is not None:
        return
    try:
        await asyncio.wait_for(client.shutdown_session(), SHUTDOWN_GRACE_S)
    except (TimeoutError, RuntimeError, ConnectionError):
        server.kill()


@dataclass
class Doc:
    """A document as the test editor holds it: its text and version, kept in step with didChange."""

    uri: str
    text: str
    version: int = 0
    cursor: int = 0
    history: list[str] = field(default_factory=list)

    @classmethod
    def from_case(cls, name: str, uri: str | None = None) -> Doc:
        """tests/data/server/<name>.py.txt with the typing point marked ‸."""
        document = (DATA / f"{name}.py.txt").read_text(encoding="utf-8")
        uri = uri or f"file:///workspace/{name}.py"
        return cls(uri, document.replace(CURSOR, ""), cursor=document.index(CURSOR))

    def open(self, client: LanguageClient, language: str = "python") -> None:
        client.text_document_did_open(open_params(self.uri, self.text, language))

    def changes(self, typed: str) -> Iterable[types.DidChangeTextDocumentParams]:
        """didChange for each character typed at the cursor (the text moves along)."""
        for change, text in keystrokes(self.uri, self.text, self.cursor, typed, self.version):
            self.text, self.version = text, change.text_document.version
            self.cursor += 1
            yield change

    def backspace(self) -> types.DidChangeTextDocumentParams:
        """didChange deleting the character before the cursor."""
        start, end = position_of(self.text, self.cursor - 1), position_of(self.text, self.cursor)
        self.text = self.text[: self.cursor - 1] + self.text[self.cursor :]
        self.cursor -= 1
        self.version += 1
        return types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=start, end=end), text=""
                )
            ],
        )

    def type(self, client: LanguageClient, typed: str) -> None:
        """Send one didChange per character, as fast as possible."""
        for change in self.changes(typed):
            client.text_document_did_change(change)

    def typed_case(self, name: str) -> str:
        return (DATA / f"{name}.typed.txt").read_text(encoding="utf-8")

    @property
    def position(self) -> types.Position:
        return position_of(self.text, self.cursor)


async def verified(client: PrewriteClient, doc: Doc) -> Any:
    """The prewrite/draft notification saying the draft is verified for the doc's version."""
    return await client.watch.draft(
        lambda d: d.uri == doc.uri and d.version == doc.version and d.status == "verified"
    )


async def inline(client: LanguageClient, doc: Doc, invoked: bool = True) -> str | None:
    """The inline completion's text at the doc's cursor (None when there is none)."""
    result = await client.text_document_inline_completion_async(
        inline_params(doc.uri, doc.position, invoked)
    )
    return _text(result)


async def plain(client: LanguageClient, doc: Doc) -> str | None:
    """The conventional answer (no draft, decoded at trigger) at the doc's cursor."""
    result = await client.protocol.send_request_async(
        PLAIN_COMPLETION, inline_params(doc.uri, doc.position)
    )
    return _text(result)


async def stats(client: LanguageClient) -> dict[str, Any]:
    result: dict[str, Any] = await client.workspace_execute_command_async(
        command_params(STATS_COMMAND)
    )
    return result


async def toggle(client: LanguageClient, *value: bool) -> dict[str, Any]:
    result: dict[str, Any] = await client.workspace_execute_command_async(
        command_params(TOGGLE_COMMAND, *value)
    )
    return result


def last_trigger(report: dict[str, Any], uri: str) -> dict[str, Any]:
    document = next(d for d in report["documents"] if d["uri"] == uri)
    trigger: dict[str, Any] = document["triggers"][-1]
    return trigger


async def raw_request(client: LanguageClient, method: str, params: Any) -> Any:
    """Send a request with arbitrary (possibly malformed) params, bypassing type conversion."""
    protocol = client.protocol
    msg_id = str(uuid.uuid4())
    future: Future[Any] = Future()
    protocol._request_futures[msg_id] = future
    protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return await asyncio.wrap_future(future)


def raw_notification(client: LanguageClient, method: str, params: Any) -> None:
    """Send a notification with arbitrary (possibly malformed) params."""
    client.protocol._send_data({"jsonrpc": "2.0", "method": method, "params": params})


def _text(result: Any) -> str | None:
    if result is None or not result.items:
        return None
    text = result.items[0].insert_text
    return text if isinstance(text, str) else text.value


def configure(client: LanguageClient, section: dict[str, Any]) -> None:
    """workspace/didChangeConfiguration with a `prewrite` section."""
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"prewrite": section})
    )


async def shown(client: LanguageClient, contains: str) -> types.ShowMessageParams:
    """The first window/showMessage (seen or to come) whose text contains `contains`."""
    while True:
        for message in client.messages:
            if contains in message.message:
                return message
        await client.protocol.wait_for_notification_async(types.WINDOW_SHOW_MESSAGE)
