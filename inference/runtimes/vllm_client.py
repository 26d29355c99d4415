"""The wire to a vLLM server: OpenAI-style completions over token ids, and clear failures.

Token ids go out as the prompt and come back as ids (`return_token_ids`,
`return_tokens_as_token_ids`): text never crosses, since retokenising it would break
exactness. Every failure (refused, timed out, an HTTP error, an answer without the logprobs
asked for) is a `RuntimeFailure` that names the server and what to do; the client itself stays
usable, so the next request succeeds once the server is back.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from inference.errors import RuntimeFailure

API_KEY_ENV = "PREWRITE_VLLM_API_KEY"  # the key is read from here only, never from settings


@dataclass(frozen=True)
class Choice:
    """One position's choice: the greedy token and the logprobs the server reported there."""

    token: int
    logprobs: dict[int, float]


class VllmClient:
    """Requests to one vLLM server for one served model."""

    def __init__(self, base_url: str, model: str | None, timeout_s: float):
        self.base_url = base_url.rstrip("/")
        headers = {}
        if key := os.environ.get(API_KEY_ENV):
            headers["Authorization"] = f"Bearer {key}"
        self.timeout_s = timeout_s
        self.http = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=16),
        )
        self.model = model or self._only_model()

    def close(self) -> None:
        """Close the connections."""
        self.http.close()

    def version(self) -> str:
        """The server's vLLM version ("?" when it does not say)."""
        try:
            return str(self._call("GET", "/version").get("version", "?"))
        except RuntimeFailure:
            return "?"

    def models(self) -> list[dict[str, Any]]:
        """What the server serves (`GET /v1/models`)."""
        return list(self._call("GET", "/v1/models").get("data", []))

    def tokenize(self, text: str) -> tuple[list[int], int]:
        """The server's token ids for `text` (no special tokens added) and its max_model_len."""
        body = {"model": self.model, "prompt": text, "add_special_tokens": False}
        answer = self._call("POST", "/tokenize", body)
        return [int(t) for t in answer["tokens"]], int(answer.get("max_model_len") or 0)

    def score(self, prompt: list[int], top: int, prompt_rows: bool) -> tuple[list[Any], Choice]:
        """One greedy token after `prompt`, with per-position prompt logprobs when asked.

        Returns the server's `prompt_logprobs` list (position i: the distribution of token i
        given the ones before it; the actual token and the `top` best) and the choice after the
        whole prompt.
        """
        body = self._completion(prompt, max_tokens=1, top=top)
        if prompt_rows:
            body["prompt_logprobs"] = top
        choice = self._call("POST", "/v1/completions", body)["choices"][0]
        rows = choice.get("prompt_logprobs") if prompt_rows else []
        if prompt_rows and (not isinstance(rows, list) or len(rows) != len(prompt)):
            raise RuntimeFailure(
                f"vLLM at {self.base_url} returned no prompt logprobs for a verify request; "
                "prewrite needs a vLLM that supports `prompt_logprobs` (and --max-logprobs >= 1)"
            )
        return rows, _choice(choice, self.base_url)

    def stream(self, prompt: list[int], max_tokens: int, top: int) -> Iterator[Choice]:
        """A streamed greedy completion of `prompt`: one choice per generated token.

        Closing the iterator closes the connection, which makes vLLM abort the request.
        """
        body = self._completion(prompt, max_tokens=max_tokens, top=top)
        body.update(stream=True, ignore_eos=True)
        try:
            with self.http.stream("POST", "/v1/completions", json=body) as response:
                if response.status_code >= 400:
                    response.read()
                    raise self._http_error(response)
                for line in response.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        return
                    event = json.loads(data)
                    if "error" in event:
                        raise RuntimeFailure(f"vLLM at {self.base_url}: {event['error']}")
                    for choice in event.get("choices", []):
                        yield from _stream_steps(choice, self.base_url)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from exc

    def _completion(self, prompt: list[int], max_tokens: int, top: int) -> dict[str, Any]:
        return {
            "model": self.model,
            "prompt": prompt,
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "logprobs": top,
            "return_token_ids": True,
            "return_tokens_as_token_ids": True,
            "skip_special_tokens": False,
        }

    def _only_model(self) -> str:
        served = [str(m.get("id")) for m in self.models()]
        if len(served) != 1:
            raise RuntimeFailure(
                f"vLLM at {self.base_url} serves {served or 'no models'}: "
                "name one with the vllmModel setting"
            )
        return served[0]

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        try:
            response = self.http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from exc
        if response.status_code >= 400:
            raise self._http_error(response)
        try:
            return response.json()
        except ValueError as exc:
            raise RuntimeFailure(f"vLLM at {self.base_url}{path} answered no JSON") from exc

    def _http_error(self, response: httpx.Response) -> RuntimeFailure:
        detail = response.text.strip().replace("\n", " ")[:300]
        hint = " (check PREWRITE_VLLM_API_KEY)" if response.status_code in (401, 403) else ""
        return RuntimeFailure(
            f"vLLM at {self.base_url} answered {response.status_code}{hint}: {detail}"
        )

    def _transport_error(self, exc: httpx.HTTPError) -> RuntimeFailure:
        if isinstance(exc, httpx.TimeoutException):
            what = f"did not answer within {self.timeout_s:g} s (vllmTimeoutS)"
        elif isinstance(exc, httpx.ConnectError):
            what = "refused the connection: is it running, and is vllmUrl right?"
        elif isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
            what = f"dropped the connection mid-answer: did it stop or restart? ({exc})"
        else:
            what = f"failed: {exc.__class__.__name__}: {exc}"
        return RuntimeFailure(f"vLLM at {self.base_url} {what}")


def _choice(choice: dict[str, Any], where: str) -> Choice:
    steps = list(_stream_steps(choice, where))
    if not steps:
        raise RuntimeFailure(f"vLLM at {where} returned no token")
    return steps[0]


def _stream_steps(choice: dict[str, Any], where: str) -> Iterator[Choice]:
    """The generated tokens of one completion choice (or stream event), with their logprobs."""
    tokens = choice.get("token_ids") or []
    logprobs = choice.get("logprobs") or {}
    tops = logprobs.get("top_logprobs") or []
    if len(tops) != len(tokens):
        raise RuntimeFailure(
            f"vLLM at {where} returned {len(tokens)} tokens with {len(tops)} logprobs"
        )
    for token, top in zip(tokens, tops, strict=True):
        yield Choice(int(token), {_token_id(key): float(value) for key, value in top.items()})


def _token_id(key: str) -> int:
    """'token_id:123' (return_tokens_as_token_ids) -> 123."""
    return int(key.rsplit(":", 1)[-1])
