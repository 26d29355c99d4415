"""Broken frames and messages on the real stdio wire: each is answered or logged, and the server
reads the next frame and serves it.

Bytes are written to a real `prewrite serve` (pytest-lsp cannot send a broken frame). No model
is loaded: `prewrite.stats` is the well-formed request that must be answered after each.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from tests.lsp_fixtures import RawServer, frame, request, stats_request

pytestmark = pytest.mark.timeout(60)

PARSE_ERROR, INVALID_REQUEST = -32700, -32600


@pytest_asyncio.fixture
async def server() -> AsyncIterator[RawServer]:
    server = await RawServer.start()
    yield server
    assert await server.close() == 0
    assert b"Traceback" not in server.stderr


async def serves(server: RawServer, msg_id: int) -> None:
    """A well-formed request sent now is answered, and nothing was answered after it."""
    await server.send(frame(stats_request(msg_id)))
    answer = await server.response(msg_id)
    assert answer["result"]["state"] == "loading"  # initialized never came: no model
    assert server.responses()[-1] is answer


def error_of(response: dict) -> int:
    assert "result" not in response
    code: int = response["error"]["code"]
    return code


async def test_a_body_that_is_not_json_is_a_parse_error_answered_to_its_id(server):
    broken = b'{"jsonrpc": "2.0", "id": 7, "method": "workspace/executeCommand", "params": {'
    await server.send(frame(broken + b"oops}"), frame(b"certainly not JSON"))

    assert error_of(await server.response(7)) == PARSE_ERROR
    assert error_of(await server.response(None)) == PARSE_ERROR  # no id to be read: null
    await serves(server, 8)
    assert sum("Parse error" in text for text in server.logged()) == 2


async def test_invalid_utf8_in_a_body_is_a_parse_error_answered_to_its_id(server):
    body = json.dumps(request(9, "workspace/executeCommand", {"command": "prewrite.XX"}))
    await server.send(frame(body.encode().replace(b"XX", b"\xff\xfe")))

    answer = await server.response(9)
    assert error_of(answer) == PARSE_ERROR and "utf-8" in answer["error"]["message"]
    await serves(server, 10)


@pytest.mark.parametrize(
    ("message", "answered_id"),
    [
        ([stats_request(11)], None),  # a batch: LSP has none
        (42, None),
        ({"id": 11, "method": "shutdown"}, 11),  # no "jsonrpc"
        ({"jsonrpc": "1.0", "id": 11, "method": "shutdown"}, 11),
        ({"jsonrpc": "2.0", "id": 11, "method": 5}, 11),
        ({"jsonrpc": "2.0", "id": [11], "method": "shutdown"}, None),
        ({"jsonrpc": "2.0", "id": 11}, None),  # neither a request nor a response
    ],
)
async def test_json_that_is_no_json_rpc_message_is_an_invalid_request(server, message, answered_id):
    await server.send(frame(message))

    answer = await server.response(answered_id)
    assert error_of(answer) == INVALID_REQUEST
    await serves(server, 12)  # not shut down by the "shutdown" that was no request


async def test_a_header_without_content_length_skips_its_body_up_to_the_next_frame(server):
    body = json.dumps(stats_request(14)).encode()
    await server.send(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + body)
    await serves(server, 15)  # the body ran into this frame's header: both are read

    answer = await server.response(14)
    assert (
        error_of(answer) == PARSE_ERROR and "without Content-Length" in answer["error"]["message"]
    )
    assert [r["id"] for r in server.responses()] == [0, 14, 15]


async def test_a_content_length_that_is_no_number_skips_its_body_up_to_the_next_frame(server):
    body = json.dumps(stats_request(16)).encode()
    await server.send(b"Content-Length: twelve\r\n\r\n" + body, frame(stats_request(17)))

    answer = await server.response(16)
    assert error_of(answer) == PARSE_ERROR and "twelve" in answer["error"]["message"]
    assert "result" in await server.response(17)
    await serves(server, 18)


async def test_a_content_length_too_short_answers_its_id_and_reads_the_next_frame(server):
    body = json.dumps(stats_request(19)).encode()
    cut = len(body) - len(b'prewrite.stats"}}')  # inside the params: id and method were read
    await server.send(frame(body, length=cut), frame(stats_request(20)))

    assert error_of(await server.response(19)) == PARSE_ERROR
    assert "result" in await server.response(20)
    assert [r["id"] for r in server.responses()] == [0, 19, 20]  # the rest was only logged
    assert any("outside any frame" in text for text in server.logged())


async def test_a_content_length_too_long_runs_into_the_next_frame_which_is_read_again(server):
    # The server cannot tell a length too long from a slow client: it waits for that many
    # bytes. Here the next frame brings them; the frame the length ran into is read again.
    body = json.dumps(stats_request(21)).encode()
    await server.send(frame(body, length=len(body) + 30))
    await server.send(frame(stats_request(22)))

    answer = await server.response(21)
    assert error_of(answer) == PARSE_ERROR and "ran 30 bytes into" in answer["error"]["message"]
    assert "result" in await server.response(22)
    await serves(server, 23)


async def test_bytes_between_frames_are_logged_and_skipped(server):
    await server.send(b"\r\n", b"stray output\r\n", b"\xff\xfe more", frame(stats_request(24)))
    await server.send(b"content-length: %d\r\n\r\n" % len(json.dumps(stats_request(25))))
    await server.send(json.dumps(stats_request(25)).encode())  # header names ignore case

    assert "result" in await server.response(24)
    assert "result" in await server.response(25)
    assert [r["id"] for r in server.responses()] == [0, 24, 25]  # nothing to answer: logged
    assert sum("outside any frame" in text for text in server.logged()) == 1


async def test_the_stream_ending_inside_a_frame_ends_the_server_cleanly():
    server = await RawServer.start()
    await server.send(frame(stats_request(26), length=500)[:-10])

    assert await server.end() == 0
    assert b"Traceback" not in server.stderr
