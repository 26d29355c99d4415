"""Server lifecycle over real JSON-RPC: initialize, capabilities, settings sources, readiness, exit.

Run with the client capabilities pytest-lsp captured from real VS Code and Neovim.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from lsp_server.client import ClientProtocol
from lsp_server.wire import STATS_COMMAND, TOGGLE_COMMAND
from tests.lsp_fixtures import (
    DATA,
    SERVER,
    TEST_SETTINGS,
    Doc,
    PrewriteClient,
    finish,
    inline,
    shown,
    stats,
)

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
    await client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("neovim"),
            initialization_options=TEST_SETTINGS,
        )
    )
    doc = Doc.from_case("numbers")
    doc.open(client)
    doc.type(client, doc.typed_case("numbers"))

    answer = await inline(client, doc)
    ready_before = any(s.state == "ready" for s in client.watch.statuses)

    assert answer is None or ready_before
    assert (await client.watch.settled()).state == "ready"
    await client.shutdown_session()


async def test_serve_over_tcp_binds_localhost_and_exits_cleanly():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "lsp_server.cli", "serve", "--tcp", str(port),
        "--log-level", "INFO", stderr=asyncio.subprocess.PIPE,
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


async def test_loading_a_model_writes_no_progress_bars_to_stderr(real_model_name, capfd):
    # VS Code shows every stderr line of a server as an error in its output channel.
    from lsp_server.client import Editor

    editor = Editor("stderr-probe")
    status = await editor.start({"model": real_model_name, "runtime": "torch"})
    await editor.close()
    assert status.state == "ready"
    assert "Loading weights" not in capfd.readouterr().err
