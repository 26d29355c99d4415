"""searchOnFailure: when the verified draft fails its docstring's examples, sampled answers are
tried in spare time and the first that passes is offered first, marked as not the greedy answer.

A real server over JSON-RPC with a real code model (qwen2.5-coder-0.5b, llama.cpp): its greedy
answer to this spec fails the example, and a sampled one passes it. What the server says of the
alternative is checked independently: its examples run here in the sandbox, the greedy answer
is the conventional request's, and the trigger's items are the alternative and then the greedy
answer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types

from inference.examples.checker import docstring_examples
from inference.examples.sandbox import Sandbox
from lsp_server.client import inline_params
from lsp_server.wire import DraftParams
from tests.lsp_fixtures import SERVER, Doc, PrewriteClient, finish, offset_in, plain, start, stats

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(900)]

FILE = 'def flip_case(string: str) -> str:\n    """'
SPEC = (
    "For a given string, flip lowercase characters to uppercase and uppercase to lowercase.\n"
    "    >>> flip_case('Hello')\n    'hELLO'\n    "
)
TRIES = 4


@pytest.fixture
def sandbox() -> Sandbox:
    found, why = Sandbox.probe()
    if found is None:
        pytest.skip(f"no sandbox here: {why}")
    return found


@pytest_lsp.fixture(config=SERVER)
async def client(
    lsp_client: PrewriteClient, code_model_name: str, tmp_path: Path
) -> AsyncIterator[PrewriteClient]:
    settings = {
        "model": code_model_name,
        "draftPreview": True,
        "searchOnFailure": True,
        "searchTries": TRIES,
        "tracePath": str(tmp_path / "trace.jsonl"),
    }
    await start(lsp_client, settings)
    yield lsp_client
    await finish(lsp_client)


def _typed(client: PrewriteClient) -> Doc:
    doc = Doc("file:///workspace/strings.py", FILE + '"""\n', cursor=len(FILE))
    doc.open(client)
    doc.type(client, SPEC)
    return doc


def _run_here(sandbox: Sandbox, doc: Doc, draft: DraftParams, text: str) -> tuple[int, int]:
    """(passed, total) of the spec's examples with `text` applied where the draft goes."""
    at = offset_in(doc.text, draft.position)
    module = doc.text[:at] + text + doc.text[at:]
    start_at = module.index('"""')
    found = docstring_examples(module[start_at : module.index('"""', start_at + 3) + 3])
    assert found is not None
    run = sandbox.run(module, found[0], "strings")
    return run.passed, run.total


async def test_a_failing_draft_gets_an_alternative_that_passes_offered_first(
    client: PrewriteClient, sandbox: Sandbox, tmp_path: Path
):
    doc = _typed(client)
    failed = await _draft(
        client, lambda d: d.uri == doc.uri and d.version == doc.version and d.examples is not None
    )
    assert failed.examples.failed > 0, "the greedy answer was meant to fail its example"
    assert failed.alternative is None
    found = await _draft(
        client,
        lambda d: d.uri == doc.uri and d.version == doc.version and d.alternative is not None,
    )
    alternative = found.alternative
    assert found.text == failed.text  # the draft is still the greedy answer
    assert alternative.passed == alternative.total == failed.examples.total
    assert 1 <= alternative.seed <= alternative.drawn <= TRIES
    assert alternative.text != found.text
    assert _run_here(sandbox, doc, found, alternative.text) == (1, 1)
    assert _run_here(sandbox, doc, found, found.text)[0] == 0

    result = await client.text_document_inline_completion_async(
        inline_params(doc.uri, doc.position, True)
    )
    assert result is not None
    items = result.items if isinstance(result, types.InlineCompletionList) else result
    offered, greedy = (_inserted(item) for item in items)  # the alternative first, then greedy
    assert offered.endswith(alternative.text.split("\n", 1)[1])
    assert greedy.endswith(found.text.split("\n", 1)[1])
    assert await plain(client, doc) == greedy  # the greedy answer is the conventional one
    trace = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    record = trace[-1]
    assert record["fromDraft"] is True
    assert record["alternative"]["greedy"] is False
    assert record["alternative"]["seed"] == alternative.seed
    assert record["alternative"]["examples"]["passed"] == 1
    report = (await stats(client))["searches"]
    assert report["started"] == 1 and report["found"] == 1
    assert report["samples"]["processed"] == alternative.drawn


async def test_typing_stops_the_search_and_an_edit_elsewhere_in_the_spec_forgets_it(
    client: PrewriteClient,
):
    doc = _typed(client)
    await client.watch.draft(
        lambda d: d.uri == doc.uri and d.version == doc.version and d.examples is not None
    )
    await _until(client, lambda s: s["samples"]["submitted"] >= 1)
    doc.type(client, "Any string.")  # the spec changes: the search for the old one stops
    report = await _until(client, lambda s: s["samples"]["pending"] == 0)
    assert report["samples"]["dropped"] >= 1
    assert report["found"] == 0 or report["samples"]["processed"] >= 1


async def _draft(client: PrewriteClient, match: Any, timeout: float = 400) -> DraftParams:
    """The first prewrite/draft that matches; on a timeout, the failure says what the server did."""
    try:
        return await asyncio.wait_for(client.watch.draft(match), timeout)
    except TimeoutError:
        report = await stats(client)
        raise AssertionError(
            f"no such draft: {report['searches']}, {report['examples']}, {report['drafts']}"
        ) from None


async def _until(client: PrewriteClient, done: Any, timeout: float = 300) -> dict[str, Any]:
    """prewrite.stats' searches once `done(searches)` holds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        report = (await stats(client))["searches"]
        if done(report) or loop.time() > deadline:
            assert done(report), report
            return report
        await asyncio.sleep(0.1)


def _inserted(item: types.InlineCompletionItem) -> str:
    text = item.insert_text
    return text if isinstance(text, str) else text.value
