"""The server runs a docstring's >>> examples against each verified draft, in the sandbox.

A real server over JSON-RPC with a real model: the draft's examples travel with its
prewrite/draft notification and the trigger's trace, and they are what running the examples
on the document with the draft accepted gives (checked independently here).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp

from inference.examples.checker import docstring_examples
from inference.examples.sandbox import Sandbox
from lsp_server.client import server_command
from tests.lsp_fixtures import (
    SERVER,
    TEST_SETTINGS,
    Doc,
    PrewriteClient,
    finish,
    inline,
    offset_in,
    start,
    stats,
)

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(600)]

FILE = 'import math\n\n\ndef hypotenuse(a: float, b: float) -> float:\n    """'
SPEC = (
    "Return the length of the hypotenuse of a right triangle with legs a and b.\n\n"
    "    >>> hypotenuse(3, 4)\n    5.0\n    >>> hypotenuse(5, 12)\n    13.0\n    "
)


async def _typed(client: PrewriteClient, tmp_path: Path) -> Doc:
    doc = Doc("file:///workspace/geometry.py", FILE + '"""\n', cursor=len(FILE))
    doc.open(client)
    doc.type(client, SPEC)
    return doc


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: PrewriteClient, tmp_path: Path) -> AsyncIterator[PrewriteClient]:
    settings = {**TEST_SETTINGS, "tracePath": str(tmp_path / "trace.jsonl")}
    await start(lsp_client, settings)
    yield lsp_client
    await finish(lsp_client)


async def test_a_verified_draft_goes_out_again_with_its_examples_and_the_trigger_records_them(
    client: PrewriteClient, tmp_path: Path
):
    doc = await _typed(client, tmp_path)
    draft = await client.watch.draft(
        lambda d: d.uri == doc.uri and d.version == doc.version and d.examples is not None
    )
    assert draft.status == "verified" and draft.examples.total == 2
    # independently: the document with the draft accepted, its examples run in the sandbox
    at = offset_in(doc.text, draft.position)
    module = doc.text[:at] + draft.text + doc.text[at:]
    spec = module[module.index('"""') : module.index('"""', module.index('"""') + 3) + 3]
    found = docstring_examples(spec)
    sandbox, why = Sandbox.probe()
    assert found is not None and sandbox is not None, why
    expected = sandbox.run(module, found[0], "geometry")
    examples = draft.examples
    assert (examples.passed, examples.failed, examples.total, examples.first_failure) == (
        expected.passed, expected.failed, expected.total, expected.first_failure,
    )  # fmt: skip
    assert await inline(client, doc, invoked=False)
    report = await stats(client)
    assert report["examples"]["checked"] is True and report["examples"]["runs"] >= 1
    trace = await _trace(tmp_path / "trace.jsonl")
    assert trace[-1]["examples"] == expected.to_wire()


async def _trace(path: Path) -> list[dict[str, Any]]:
    for _ in range(100):
        if path.exists() and path.read_text().strip():
            break
        await asyncio.sleep(0.1)
    return [json.loads(line) for line in path.read_text().splitlines()]


OFF = pytest_lsp.ClientServerConfig(
    server_command=server_command(), client_factory=PrewriteClient,
    server_env={**os.environ, "PATH": "/nonexistent"},  # no bubblewrap to be found
)  # fmt: skip


@pytest_lsp.fixture(config=OFF)
async def without_sandbox(lsp_client: PrewriteClient) -> AsyncIterator[PrewriteClient]:
    await start(lsp_client, TEST_SETTINGS)
    yield lsp_client
    await finish(lsp_client)


async def test_without_a_sandbox_examples_are_off_and_the_status_says_why(
    without_sandbox: PrewriteClient, tmp_path: Path
):
    client = without_sandbox
    status = await client.watch.status(lambda s: "examples not checked" in s.message)
    assert status.state == "ready" and "bubblewrap is not installed" in status.message
    doc = await _typed(client, tmp_path)
    draft = await client.watch.draft(
        lambda d: d.uri == doc.uri and d.version == doc.version and d.status == "verified"
    )
    assert draft.examples is None
    assert await inline(client, doc, invoked=False)  # answers go on as before
    report = await stats(client)
    assert report["examples"] == {
        "checked": False, "unavailable": status.message.split("examples not checked: ")[1],
        "runs": 0,
    }  # fmt: skip
