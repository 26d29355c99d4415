"""The language ids the server finds specs in, as initialize reports them to clients."""

from __future__ import annotations

import pytest

from lsp_server.spec import language_of
from tests.lsp_fixtures import RawServer

pytestmark = pytest.mark.timeout(120)


async def test_initialize_lists_the_language_ids_the_server_finds_specs_in() -> None:
    server = await RawServer.start()
    try:
        (answer,) = [m for m in server.received if m.get("id") == 0]
        ids = answer["result"]["capabilities"]["experimental"]["prewrite"]["languageIds"]
    finally:
        assert await server.close() == 0
    assert {"python", "javascript", "typescript", "typescriptreact", "go", "rust"} <= set(ids)
    assert ids == sorted(set(ids))
    # each listed id is one the server reads specs in, whatever the file is called
    assert [language_of(i, "file:///x") for i in ids] == [
        "python" if i == "python" else "brace" for i in ids
    ]
    assert language_of("markdown", "file:///x") is None and "markdown" not in ids
