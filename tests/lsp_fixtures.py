"""Helpers for the end-to-end server tests: a pytest-lsp client that knows prewrite's methods.

Not a conftest (the lead owns that): test modules import what they need and define their own
pytest-lsp fixtures with `SERVER`.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

from lsp_server.client import Watch, command_params, inline_params, open_params, server_command
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


def units(text: str, encoding: str = "utf-16") -> int:
    """The code units of `text` in an LSP position encoding: utf-8, utf-16 or utf-32."""
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text.encode("utf-8")) if encoding == "utf-8" else len(text)


def position_in(text: str, offset: int, encoding: str = "utf-16") -> types.Position:
    """The LSP position of a string offset."""
    line_start = text.rfind("\n", 0, offset) + 1
    character = units(text[line_start:offset], encoding)
    return types.Position(line=text.count("\n", 0, offset), character=character)


def offset_in(text: str, position: types.Position, encoding: str = "utf-16") -> int:
    """The string offset of an LSP position; it must fall between characters of a line."""
    lines = text.split("\n")
    assert position.line < len(lines), f"{position} is past the last line"
    offset = sum(len(line) + 1 for line in lines[: position.line])
    counted = 0
    for char in lines[position.line]:
        if counted >= position.character:
            break
        counted, offset = counted + units(char, encoding), offset + 1
    assert counted == position.character, f"{position} is not between characters ({encoding})"
    return offset


def apply_edit(text: str, edit_range: types.Range, new_text: str, encoding: str = "utf-16") -> str:
    """The text with `edit_range` replaced by `new_text`, as an editor applies an edit."""
    start, end = (
        offset_in(text, edit_range.start, encoding),
        offset_in(text, edit_range.end, encoding),
    )
    assert start <= end
    return text[:start] + new_text + text[end:]


def accept(text: str, item: types.InlineCompletionItem, encoding: str = "utf-16") -> str:
    """The document after the editor applies an inline item (its range and text)."""
    assert item.range is not None, "an inline item without a range"
    insert = item.insert_text if isinstance(item.insert_text, str) else item.insert_text.value
    return apply_edit(text, item.range, insert, encoding)


@dataclass
class Doc:
    """A document as the test editor holds it: its text and version, kept in step with didChange.

    Positions are in `encoding`, the one the server chose from the client's offer (utf-16 when
    the client offers none).
    """

    uri: str
    text: str
    version: int = 0
    cursor: int = 0
    history: list[str] = field(default_factory=list)
    encoding: str = "utf-16"

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
        for char in typed:
            yield self.replace(self.cursor, self.cursor, char)

    def backspace(self) -> types.DidChangeTextDocumentParams:
        """didChange deleting the character before the cursor."""
        return self.replace(self.cursor - 1, self.cursor, "")

    def replace(
        self, start: int, end: int, text: str, version: int | None = None
    ) -> types.DidChangeTextDocumentParams:
        """didChange replacing text[start:end] (string offsets) with `text`, labelled `version`
        (default: the next); the cursor ends after the new text."""
        edit_range = types.Range(
            start=position_in(self.text, start, self.encoding),
            end=position_in(self.text, end, self.encoding),
        )
        self.text = self.text[:start] + text + self.text[end:]
        self.cursor = start + len(text)
        self.version = self.version + 1 if version is None else version
        return types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=[types.TextDocumentContentChangePartial(range=edit_range, text=text)],
        )

    def type(self, client: LanguageClient, typed: str) -> None:
        """Send one didChange per character, as fast as possible."""
        for change in self.changes(typed):
            client.text_document_did_change(change)

    def typed_case(self, name: str) -> str:
        return (DATA / f"{name}.typed.txt").read_text(encoding="utf-8")

    @property
    def position(self) -> types.Position:
        return position_in(self.text, self.cursor, self.encoding)


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


def frame(message: Any, length: int | None = None) -> bytes:
    """One LSP frame: a JSON value (or raw body bytes) with its Content-Length (or `length`)."""
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body) if length is None else length, body)


def request(msg_id: int | str, method: str, params: Any = None) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    return message if params is None else {**message, "params": params}


def stats_request(msg_id: int | str) -> dict[str, Any]:
    """A well-formed request any server answers, before initialized and without a model."""
    return request(msg_id, "workspace/executeCommand", {"command": STATS_COMMAND})


class RawServer:
    """`prewrite serve` over stdio, written to byte by byte: for what pytest-lsp cannot send.

    Every message the server writes is kept in `received`, in order.
    """

    def __init__(self, process: asyncio.subprocess.Process):
        self.process = process
        self.received: list[dict[str, Any]] = []
        self._stderr = asyncio.ensure_future(self._read_stderr())
        self.stderr = b""

    @classmethod
    async def start(cls) -> RawServer:
        """A server that has answered `initialize` (no `initialized`: no model loads)."""
        process = await asyncio.create_subprocess_exec(
            *server_command(), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        server = cls(process)
        await server.send(frame(request(0, "initialize", {"capabilities": {}})))
        assert "result" in await server.response(0)
        return server

    async def send(self, *data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"".join(data))
        await self.process.stdin.drain()

    async def message(self, match: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first message (seen or to come) that matches."""
        for seen in self.received:
            if match(seen):
                return seen
        while True:
            message = await self._read_frame()
            self.received.append(message)
            if match(message):
                return message

    async def response(self, msg_id: int | str | None) -> dict[str, Any]:
        """The response to `msg_id` (None: the first error answered to `"id": null`)."""
        return await self.message(lambda m: "method" not in m and m.get("id", 0) == msg_id)

    def responses(self) -> list[dict[str, Any]]:
        """The responses received so far, in order."""
        return [m for m in self.received if "method" not in m]

    def logged(self) -> list[str]:
        """window/logMessage texts received so far."""
        return [
            m["params"]["message"] for m in self.received if m.get("method") == "window/logMessage"
        ]

    async def close(self) -> int:
        """shutdown and exit (when still running); the exit code; stderr is in `stderr`."""
        if self.process.returncode is None:
            await self.send(
                frame(request("shutdown", "shutdown")), frame({"jsonrpc": "2.0", "method": "exit"})
            )
        return await self.end()

    async def end(self) -> int:
        """Close stdin and wait for the process to end; its exit code."""
        assert self.process.stdin is not None
        if not self.process.stdin.is_closing():
            self.process.stdin.close()
        code = await self.process.wait()
        await self._stderr
        return code

    async def _read_frame(self) -> dict[str, Any]:
        stdout = self.process.stdout
        assert stdout is not None
        length = None
        while (line := await stdout.readline()).strip():
            name, _, value = line.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        assert length is not None, f"the server wrote no frame: {line!r}"
        message: dict[str, Any] = json.loads(await stdout.readexactly(length))
        return message

    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        self.stderr = await self.process.stderr.read()
