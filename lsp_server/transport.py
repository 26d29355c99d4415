"""The wire: LSP's Content-Length frames read off a byte stream into JSON-RPC messages.

pygls 2.1's reader reads header lines and trusts the Content-Length: after one broken frame
(no Content-Length, a value that is not a number, a length too short) the rest of its body
runs into the next frame's header line and every message after it is lost. Here a broken
frame or message is answered with a JSON-RPC error (to its request's id when that can be read,
else to `null`, as JSON-RPC 2.0 says), logged, and skipped: reading goes on at the next
`Content-Length` header, found even at the end of a line of leftover bytes. A length longer
than the message runs into the next frame; once that many bytes have come, the frame found
inside is read again. Until they come the server waits: no reader can tell a long length from
a slow client.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.protocol import JsonRPCProtocol

logger = logging.getLogger(__name__)

CHUNK = 1 << 16  # bytes asked for per read; a read returns what has arrived, at least one
# A frame's header, at the end of a line (leftovers of a broken frame may come before it).
FRAME_HEADER = re.compile(rb"content-length:[ \t]*(\d+)[ \t]*\r?\n\Z", re.IGNORECASE)
# The same header anywhere: where a frame starts inside a body read with too long a length.
FRAME_INSIDE = re.compile(rb"content-length:[ \t]*\d+[ \t]*\r?\n", re.IGNORECASE)
HEADER_LINE = re.compile(rb"[!-9;-~]+:[^\r\n]*\r?\n")  # `Name: value`, e.g. Content-Type

Read = Callable[[], Awaitable[bytes]]  # the next bytes that arrived; b"" at the end


@dataclass(frozen=True)
class Broken:
    """Bytes that are no message: a frame that did not parse, or leftovers between frames."""

    data: bytes
    reason: str
    framed: bool  # a frame's body (answered even without an id), not leftovers (only logged)


class FrameReader:
    """Frames from a stream of bytes, with the bytes of broken ones reported as `Broken`."""

    def __init__(self, read: Read):
        self._read = read
        self._buffer = bytearray()
        self._ended = False

    async def next(self) -> Any:
        """The next message as parsed JSON (any JSON value), a `Broken`, or None at the end."""
        frame = await self._frame()
        if not isinstance(frame, bytes):
            return frame
        try:
            return json.loads(frame)
        except ValueError as exc:  # not JSON, or not UTF-8
            inside = FRAME_INSIDE.search(frame, 1)
            if inside is None:
                return Broken(frame, f"the body is not JSON: {exc}", framed=True)
            self._buffer[:0] = frame[inside.start() :]  # a frame the length ran into
            reason = f"its Content-Length ran {len(frame) - inside.start()} bytes into the next"
            return Broken(frame[: inside.start()], reason, framed=True)

    async def _frame(self) -> bytes | Broken | None:
        length: int | None = None
        headers = 0
        problem = ""  # why the bytes up to the next frame are skipped; "" while none are
        bad_length = b""  # a Content-Length header whose value is no length
        skipped = bytearray()
        while line := await self._line():
            header = FRAME_HEADER.search(line)
            if header is not None and (header.start() > 0 or problem):
                self._buffer[:0] = line[header.start() :]  # read as the next frame
                skipped += line[: header.start()]
                return Broken(bytes(skipped), problem or "bytes outside any frame", framed=False)
            if problem:
                skipped += line
            elif header is not None:
                length, headers = int(header.group(1)), headers + 1
            elif not line.strip():
                if length is not None:
                    return await self._body(length)
                if headers:  # the body follows, with no length to read it by
                    problem = _no_length(bad_length)
            elif HEADER_LINE.fullmatch(line):
                headers += 1
                if line[: len(b"content-length:")].lower() == b"content-length:":
                    bad_length = line
            else:
                problem, skipped = "bytes outside any frame", skipped + line
        if problem or headers:
            return Broken(bytes(skipped), f"the stream ended after {problem or 'a header'}", False)
        return None

    async def _body(self, length: int) -> bytes | Broken:
        while len(self._buffer) < length and await self._fill():
            pass
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        if len(body) < length:
            return Broken(body, f"the stream ended {length - len(body)} bytes short", True)
        return body

    async def _line(self) -> bytes:
        """Up to and including the next b'\\n'; what is left at the end; b'' after it."""
        while (end := self._buffer.find(b"\n")) < 0 and await self._fill():
            pass
        size = end + 1 if end >= 0 else len(self._buffer)
        line = bytes(self._buffer[:size])
        del self._buffer[:size]
        return line

    async def _fill(self) -> bool:
        if self._ended:
            return False
        data = await self._read()
        self._ended = not data
        self._buffer += data
        return bool(data)


def _no_length(header: bytes) -> str:
    if not header:
        return "a header without Content-Length"
    return f"{header.strip().decode(errors='replace')!r} gives no length"


def stdin_reader(stdin: BinaryIO, executor: Executor) -> Read:
    """Reads of what has arrived on a buffered binary stream, off the event loop."""
    read1 = getattr(stdin, "read1", None)
    if read1 is None:  # unbuffered: a raw read returns what has arrived too
        read1 = stdin.read

    def read() -> Awaitable[bytes]:
        return asyncio.get_running_loop().run_in_executor(executor, read1, CHUNK)

    return read


def invalid_message(message: Any) -> str | None:
    """Why a JSON value is no JSON-RPC 2.0 message LSP has (None when it is one)."""
    if isinstance(message, list):
        return "a batch (LSP has none)"
    if not isinstance(message, dict):
        return f"not a JSON object but {type(message).__name__}"
    if message.get("jsonrpc") != "2.0":
        return 'its "jsonrpc" is not "2.0"'
    if "id" in message and not _valid_id(message["id"]) and message["id"] is not None:
        return '"id" is neither a string nor an integer'
    if "method" in message:
        if not isinstance(message["method"], str):
            return '"method" is not a string'
        if "id" in message and message["id"] is None:
            return 'a request\'s "id" is null'
    elif "id" not in message or ("result" not in message and "error" not in message):
        return 'neither a request (no "method") nor a response'
    return None


def request_id(data: bytes | Any) -> int | str | None:
    """The id of the request in a broken frame or an invalid message, when it can be read.

    Bytes are read leniently (bad UTF-8 replaced; a body cut short still has the keys before
    the cut): only a request's id counts, a top-level "id" next to a "method", never an
    id nested in params (`$/cancelRequest`'s names another request).
    """
    if isinstance(data, bytes):
        data = _top_level(data.decode("utf-8", errors="replace"))
    if not isinstance(data, dict) or "method" not in data:
        return None
    msg_id = data.get("id")
    return msg_id if _valid_id(msg_id) else None


def _valid_id(msg_id: Any) -> bool:
    return isinstance(msg_id, str) or (isinstance(msg_id, int) and not isinstance(msg_id, bool))


def _top_level(text: str) -> dict[str, Any]:
    """The members of a JSON object read in order until the first one that does not parse."""
    decoder, members = json.JSONDecoder(), dict[str, Any]()
    at = _skip_space(text, 0)
    if not text.startswith("{", at):
        return {}
    at += 1
    while True:
        try:
            key, at = decoder.raw_decode(text, _skip_space(text, at))
            at = _skip_space(text, at)
            if not isinstance(key, str) or not text.startswith(":", at):
                return members
            value, at = decoder.raw_decode(text, _skip_space(text, at + 1))
        except ValueError:
            return members
        members[key] = value
        at = _skip_space(text, at)
        if not text.startswith(",", at):
            return members
        at += 1


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


async def serve(
    read: Read,
    protocol: JsonRPCProtocol,
    stop: threading.Event,
    report: Callable[[Exception], None],
) -> None:
    """Hand each message read to the protocol until the stream ends or `stop` is set.

    What is no message is answered with ParseError (-32700) or InvalidRequest (-32600) and
    reported; a message whose handling fails is reported; either way the next one is read.
    """
    reader = FrameReader(read)
    while not stop.is_set():
        message = await reader.next()
        if message is None:
            return
        if isinstance(message, Broken):
            error: JsonRpcException = JsonRpcParseError(f"Parse error: {message.reason}")
            _refuse(protocol, report, error, request_id(message.data), message.framed)
        elif (problem := invalid_message(message)) is not None:
            error = JsonRpcInvalidRequest(f"Invalid request: {problem}")
            _refuse(protocol, report, error, request_id(message), answer=True)
        else:
            _handle(protocol, report, message)
        # let the handler's task start before the next message, as pygls' reader (a read in
        # a thread per line) does: a request is not overtaken by edits already buffered
        await asyncio.sleep(0)


def _refuse(
    protocol: JsonRPCProtocol,
    report: Callable[[Exception], None],
    error: JsonRpcException,
    msg_id: int | str | None,
    answer: bool,
) -> None:
    """Log what was refused; answer its request (or `null`: JSON-RPC's id for an unknown one)."""
    logger.warning("%s (request id %r)", error.message, msg_id)
    report(error)
    if answer or msg_id is not None:
        # pygls' ResponseErrorMessage drops an id of None; JSON-RPC wants `"id": null` there
        error_object = {"code": error.code, "message": error.message}
        protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": error_object})


def _handle(
    protocol: JsonRPCProtocol, report: Callable[[Exception], None], message: dict[str, Any]
) -> None:
    try:
        protocol.handle_message(protocol.structure_message(message))
    except JsonRpcException as exc:  # params that do not parse (answered if it was a request)
        logger.warning("Unable to handle message: %s", exc)
        report(exc)
    except Exception as exc:  # noqa: BLE001 - the reading loop: one message's failure is reported
        logger.exception("Unable to handle message")
        report(exc)
