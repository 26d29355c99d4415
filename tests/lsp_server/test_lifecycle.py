"""Server lifecycle over real JSON-RPC: initialize, capabilities, settings sources, readiness, exit.

Run with the client capabilities pytest-lsp captured from real VS Code and Neovim.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import sys
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pygls.lsp.client import LanguageClient

from lsp_server.client import ClientProtocol, inline_params, last_trigger
from lsp_server.wire import STATS_COMMAND, STATUS, TOGGLE_COMMAND
from tests.lsp_fixtures import (
    DATA,
    SERVER,
    TEST_SETTINGS,
    Doc,
    PrewriteClient,
    finish,
    frame,
    inline,
    plain,
    raw_notification,
    shown,
    start,
    stats,
    verified,
)

pytestmark = pytest.mark.timeout(600)

MISSING_MODEL = "/nonexistent/prewrite-model"


@pytest_lsp.fixture(config=SERVER, params=["visual-studio-code", "neovim"])
async def client(lsp_client: PrewriteClient, request: pytest.FixtureRequest):
    lsp_client.editor = request.param  # type: ignore[attr-defined]
    yield
    await finish(lsp_client)


async def test_initialize_reports_features_settings_and_a_model_that_fails_to_load(
    client, tmp_path
):
    shutil.copy(DATA / "workspace" / "prewrite.toml", tmp_path / "prewrite.toml")
    options = {"model": MISSING_MODEL, "maxTokens": 64, "serverPath": "/usr/bin/x"}
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities(client.editor),
            initialization_options=options,
            root_uri=tmp_path.as_uri(),
        )
    )

    capabilities = result.capabilities
    assert capabilities.inline_completion_provider is not None
    assert capabilities.completion_provider is not None
    assert capabilities.text_document_sync.change == types.TextDocumentSyncKind.Incremental
    assert set(capabilities.execute_command_provider.commands) == {STATS_COMMAND, TOGGLE_COMMAND}
    status = await client.watch.settled()
    assert status.state == "error" and MISSING_MODEL in status.message
    assert (await shown(client, MISSING_MODEL)).type == types.MessageType.Error
    assert any("serverPath" in m.message for m in client.log_messages)
    if client.capabilities.window and client.capabilities.window.work_done_progress:
        (reports,) = client.progress_reports.values()
        assert [r.kind for r in reports] == ["begin", "end"]

    doc = Doc.from_case("numbers")
    doc.open(client)
    doc.type(client, doc.typed_case("numbers"))
    assert await inline(client, doc) is None
    report = await stats(client)
    assert report["state"] == "error"
    assert report["settings"]["maxTokens"] == 48  # prewrite.toml wins over the client

    await client.shutdown_session()
    assert client._server.returncode == 0


@pytest_lsp.fixture(config=SERVER)
async def loading_client(lsp_client: PrewriteClient, real_model_name: str):
    yield
    await finish(lsp_client)


@pytest.mark.real_model
async def test_a_trigger_before_the_model_is_ready_gets_an_empty_answer(loading_client):
    client = loading_client
    client.capabilities = pytest_lsp.client_capabilities("neovim")
    await client.initialize_async(  # no `initialized` yet: the model loads after it
        types.InitializeParams(
            capabilities=client.capabilities, initialization_options=TEST_SETTINGS
        )
    )
    doc = Doc.from_case("numbers")
    doc.open(client)
    doc.type(client, doc.typed_case("numbers"))

    assert await inline(client, doc) is None
    assert await plain(client, doc) is None
    report = await stats(client)
    assert report["state"] == "loading" and client.watch.statuses == []
    assert report["drafts"]["submitted"] == 0  # no draft to fail with "no model is loaded"
    client.initialized(types.InitializedParams())
    assert (await client.watch.settled()).state == "ready"
    assert await inline(client, doc)  # the same trigger, once the model is ready
    await client.shutdown_session()


@pytest.mark.real_model
async def test_a_cancelled_trigger_stops_the_engine_at_its_next_forward(loading_client):
    client = loading_client
    await start(client, {**TEST_SETTINGS, "drafting": False, "maxTokens": 256})
    doc = Doc.from_case("numbers", uri="file:///workspace/cancelled.py")
    doc.open(client)
    doc.type(client, doc.typed_case("numbers"))
    before = (await stats(client))["forwards"]["residual"]

    pending = client.protocol.send_request(
        types.TEXT_DOCUMENT_INLINE_COMPLETION, inline_params(doc.uri, doc.position), msg_id="x"
    )
    raw_notification(client, "$/cancelRequest", {"id": "x"})
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wrap_future(pending)
    at_cancel = (await stats(client))["forwards"]["residual"]
    await plain(client, doc)  # queued behind the cancelled job: it has ended
    report = await stats(client)

    assert report["forwards"]["residual"] - at_cancel <= 1  # the forward under way, no more
    assert last_trigger(report, doc.uri) == {}  # never answered, nor resumed as drafting
    assert report["drafts"]["submitted"] == 0
    cancelled = report["forwards"]["residual"] - before
    full = Doc.from_case("numbers", uri="file:///workspace/not-cancelled.py")
    full.open(client)
    full.type(client, full.typed_case("numbers"))
    assert await inline(client, full)
    assert cancelled < last_trigger(await stats(client), full.uri)["residualForwards"]


async def test_serve_over_tcp_binds_localhost_and_exits_cleanly():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "lsp_server.cli",
        "serve",
        "--tcp",
        str(port),
        "--log-level",
        "INFO",
        stderr=asyncio.subprocess.PIPE,
    )
    assert server.stderr is not None
    while b"Serving on" not in (line := await server.stderr.readline()):
        assert line, "the server ended before listening"
    assert b"127.0.0.1" in line
    drain = asyncio.ensure_future(server.stderr.read())

    client = LanguageClient("tcp-test", "0", protocol_cls=ClientProtocol)
    await client.start_tcp("127.0.0.1", port)
    result = await client.initialize_async(
        types.InitializeParams(capabilities=types.ClientCapabilities())
    )
    assert result.server_info is not None and result.server_info.name == "prewrite"
    await client.shutdown_async(None)
    client.exit(None)

    assert await server.wait() == 0
    await drain
    await client.stop()


async def read_frame(stream: asyncio.StreamReader) -> dict[str, Any]:
    length = 0
    while (line := await stream.readline()).strip():
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    message: dict[str, Any] = json.loads(await stream.readexactly(length))
    return message


async def test_model_auto_loads_the_pack_chosen_on_this_machine_and_says_why(
    client, code_model_name
):
    from inference.model_choice import resolve

    chosen = resolve("auto").model  # the 0.5B unless this machine has the 1.5B and AVX-512
    await start(client, {"maxTokens": 16}, editor=client.editor)  # `model` unset: auto

    status = client.watch.statuses[-1]
    assert status.state == "ready", status
    assert status.message.startswith(f"{chosen} (auto: "), status.message
    assert " is ready on llamacpp " in status.message
    assert (await stats(client))["model"] == chosen


async def test_loading_a_model_writes_no_progress_bars_to_stderr(real_model_name):
    # VS Code shows every stderr line of a server as an error in its output channel.
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "lsp_server.cli", "serve", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    settings = {"model": real_model_name, "runtime": "torch"}
    params = {"capabilities": {}, "initializationOptions": settings}
    server.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}))
    server.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    state = "loading"
    while state == "loading":
        message = await asyncio.wait_for(read_frame(server.stdout), 300)
        if message.get("method") == STATUS:
            state = message["params"]["state"]
    server.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    server.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
    _, err = await asyncio.wait_for(server.communicate(), 120)
    assert state == "ready"
    assert b"Loading weights" not in err


async def test_a_cancel_that_comes_after_its_answer_writes_nothing_to_stderr():
    # VS Code cancels many automatic requests after they were answered; pygls warned each time.
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "lsp_server.cli", "serve", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}},  # answered
        {"jsonrpc": "2.0", "method": "$/unknownNotification", "params": {}},  # still warned
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    wire = b"".join(frame(m) for m in messages)
    _, err = await asyncio.wait_for(server.communicate(wire), 120)
    assert b"unknownNotification" in err  # stderr is read, and other warnings stay
    assert b"Cancel notification" not in err


@pytest.mark.real_model
async def test_documents_beyond_the_cached_sequences_are_evicted_and_answer_when_back(
    loading_client,
):
    client = loading_client
    await start(client, {**TEST_SETTINGS, "runtime": "llamacpp", "sequences": 2})
    cases = [("geometry", None), ("numbers", None), ("geometry", "file:///workspace/again.py")]
    docs = []
    for case, uri in cases:
        doc = Doc.from_case(case, uri)
        doc.open(client)
        doc.type(client, doc.typed_case(case))
        await verified(client, doc)
        docs.append(doc)

    assert (await stats(client))["memory"]["evictions"] >= 1  # two sequences, three drafts
    first = docs[0]
    assert await inline(client, first) == await plain(client, first)
