"""A comment inside a function's body asks for the block below it, end to end on a real model.

Each case has a body with code above and below the typing point. The test types a comment there
key by key into the real server (qwen2.5-coder-0.5b on llama.cpp), presses Enter, waits for the
verified draft, triggers on the empty line, applies the inline item as an editor would, and
checks: the block lands between the comment and the code below, that code is there once and
unchanged, the file builds (Python's parser, TypeScript's `tsc`), and the answer is the one the
server's conventional request (plain greedy decoding of the final text) gives.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp

from lsp_server.client import inline_params
from tests.compilers import compile_errors
from tests.lsp_fixtures import (
    CURSOR,
    DATA,
    SERVER,
    Doc,
    PrewriteClient,
    accept,
    finish,
    plain,
    start,
    verified,
)

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(300),
]

CASES = DATA / "body"
LANGUAGE_IDS = {".py": "python", ".ts": "typescript"}


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: PrewriteClient, code_model_name: str):
    await start(lsp_client, {"model": code_model_name, "maxTokens": 96, "draftPreview": True})
    yield
    await finish(lsp_client)


def case(name: str) -> tuple[Doc, str, str, str]:
    """A case's document (cursor where the comment goes), what is typed, and the code above
    and below the typing point."""
    document = (CASES / f"{name}.txt").read_text(encoding="utf-8")
    typed = (CASES / f"{name}.typed.txt").read_text(encoding="utf-8")
    at = document.index(CURSOR)
    above = document[: document.rfind("\n", 0, at) + 1]
    below = document[document.index("\n", at) + 1 :]
    doc = Doc(f"file:///workspace/{name}", document.replace(CURSOR, ""), cursor=at)
    return doc, typed, above, below


@pytest.mark.parametrize("name", ["recent_rows.py", "summarize.ts"])
async def test_a_comment_in_a_body_gets_the_block_between_it_and_the_code_below(
    client: PrewriteClient, name: str, tmp_path: Path
):
    doc, typed, above, below = case(name)
    doc.open(client, LANGUAGE_IDS[Path(name).suffix])
    doc.type(client, typed)
    comment_line = typed.split("\n", 1)[0].strip()
    await verified(client, doc)
    result = await client.text_document_inline_completion_async(
        inline_params(doc.uri, doc.position, invoked=True)
    )
    assert result is not None and result.items, f"{name}: no block offered"
    accepted = accept(doc.text, result.items[0])

    assert accepted.startswith(above), accepted
    assert accepted.endswith(below), f"{name}: the code below changed:\n{accepted}"
    block = accepted[len(above) : len(accepted) - len(below)]
    lines = block.split("\n")
    assert lines[0].strip() == comment_line, block
    written = [line for line in lines[1:] if line.strip()]
    assert written, f"{name}: an empty block:\n{accepted}"
    indent = len(lines[0]) - len(lines[0].lstrip())
    assert all(len(line) - len(line.lstrip()) >= indent for line in written), block
    first_below = next(line for line in below.split("\n") if line.strip())
    assert accepted.count(f"\n{first_below}\n") == 1, f"{name}: repeats the code below"
    source = tmp_path / name
    source.write_text(accepted, encoding="utf-8")
    assert compile_errors(source) == "", f"{name} does not build:\n{accepted}"
    assert await plain(client, doc) == result.items[0].insert_text, "not plain greedy's answer"


async def test_the_comment_above_existing_code_is_a_spec_too(client: PrewriteClient):
    doc, _, _, _ = case("recent_rows.py")
    doc.uri = "file:///workspace/recent_rows_above.py"
    doc.open(client)
    doc.type(client, "# drop the rows without an id")
    await verified(client, doc)
    at_trigger = await client.text_document_inline_completion_async(
        inline_params(doc.uri, doc.position, invoked=True)
    )
    conventional = await plain(client, doc)
    offered = at_trigger.items[0].insert_text if at_trigger and at_trigger.items else None
    assert offered == conventional
