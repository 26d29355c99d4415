"""Brace languages end to end on a real code model: the accepted file compiles.

The editor has closed the function's `{` already (VS Code and most Neovim setups auto-close),
so the model's answer, which ends with the function's `}`, must not repeat it. Each case types
a spec key by key into the real server (qwen2.5-coder-0.5b on llama.cpp), triggers at the end
of it, applies the inline item (its range and text) as an editor would, and hands the file to
the language's own compiler: TypeScript's `tsc` (from the VS Code extension's node_modules,
which `make test` installs) and `javac`.
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
    start,
    verified,
)

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(300),
]

CASES = DATA / "brace"
LANGUAGE_IDS = {".ts": "typescript", ".java": "java"}


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: PrewriteClient, code_model_name: str):
    await start(lsp_client, {"model": code_model_name, "maxTokens": 96, "draftPreview": True})
    yield
    await finish(lsp_client)


def case(name: str) -> tuple[Doc, str]:
    """A case's document (cursor where the spec is typed) and what is typed there."""
    document = (CASES / f"{name}.txt").read_text(encoding="utf-8")
    typed = (CASES / f"{name}.typed.txt").read_text(encoding="utf-8")
    doc = Doc(f"file:///workspace/{name}", document.replace(CURSOR, ""))
    doc.cursor = document.index(CURSOR)
    return doc, typed


@pytest.mark.parametrize("name", ["clamp_all.ts", "point_add.ts", "Stats.java"])
async def test_the_accepted_answer_compiles_and_repeats_no_closing_brace(
    client: PrewriteClient, name: str, tmp_path: Path
):
    doc, typed = case(name)
    doc.open(client, LANGUAGE_IDS[Path(name).suffix])
    doc.type(client, typed)
    await verified(client, doc)
    result = await client.text_document_inline_completion_async(
        inline_params(doc.uri, doc.position, invoked=True)
    )
    assert result is not None and result.items, f"{name}: no answer"
    accepted = accept(doc.text, result.items[0])

    code = [line for line in accepted.splitlines() if line.strip()]
    assert len(code) > len([line for line in doc.text.splitlines() if line.strip()]), accepted
    assert accepted.count("{") == accepted.count("}"), f"{name}: unbalanced braces:\n{accepted}"
    source = tmp_path / name
    source.write_text(accepted, encoding="utf-8")
    assert compile_errors(source) == "", f"{name} does not compile:\n{accepted}"
