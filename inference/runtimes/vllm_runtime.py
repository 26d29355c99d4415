"""The vLLM runtime: the model runs in a vLLM server; this side holds only token ids.

A sequence's "cache" is its list of token ids (vLLM keeps the KV cache, with its prefix
cache). A feed that wants several rows (a verify pass) is one completion request over the
whole sequence with `prompt_logprobs`; a feed that wants only its last row (a decode step)
reads the next token of a streamed greedy completion started from that sequence, so
regenerating costs one request however long the answer: the stream is kept while the engine
feeds back exactly the tokens it produced, and closed (vLLM aborts it) as soon as the engine
does anything else with the sequence or settles. Feeds of several sequences go out at once,
for vLLM to batch. Logits rows hold the logprobs the server reported (the greedy token, the
fed token, the `top` best) and -inf elsewhere: the argmax is the server's greedy choice.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import torch

from inference.api import RuntimeInfo
from inference.errors import ConfigError, ContextOverflowError, ModelError, RuntimeFailure
from inference.runtimes import model_files
from inference.runtimes.base import Feed, ForwardHook, Output, ShapeHints, eos_ids
from inference.runtimes.model_files import ModelFiles
from inference.runtimes.vllm_client import Choice, VllmClient

if TYPE_CHECKING:
    from inference.adapters.drafter import Drafter
    from inference.config import EngineConfig

TOP = 1  # logprobs asked per position beyond the fed token: the greedy one is all exact needs
_PROBE = 'def héllo_wörld(x):\n\t"""Return x² — «ok»."""\n    return {"a": [1, 2.5e-3]}  # 你好\n'


class _Stream:
    """A running greedy completion of a sequence: the tokens it will produce next."""

    def __init__(self, steps: Iterator[Choice], start: int):
        self.steps = steps
        self.position = start  # the sequence length the next produced token follows
        self.last: int | None = None  # the token just produced, which the engine feeds back

    def next(self) -> Choice:
        try:
            choice = next(self.steps)
        except StopIteration:
            raise _StreamEnded from None
        self.last = choice.token
        return choice

    def close(self) -> None:
        close = getattr(self.steps, "close", None)
        if close is not None:
            close()


class _StreamEnded(Exception):
    """The stream reached its max_tokens; a new one is started."""


class VllmSequence:
    """One session's token ids (vLLM holds the cache) and its running stream, if any."""

    def __init__(self, runtime: VllmRuntime, tokens: list[int] | None = None):
        self.runtime = runtime
        self.tokens: list[int] = tokens or []
        self.stream: _Stream | None = None

    @property
    def length(self) -> int:
        """Tokens in the sequence (vLLM's prefix cache is not ours to evict)."""
        return len(self.tokens)

    @property
    def cache_bytes(self) -> int:
        """0: the KV cache lives in the vLLM server."""
        return 0

    def truncate(self, length: int) -> None:
        """Keep the first `length` tokens; a stream past them is stopped."""
        if length < len(self.tokens):
            del self.tokens[length:]
            self.stop_stream()

    def fork(self) -> VllmSequence:
        """A sequence with the same tokens (vLLM's prefix cache shares their KV)."""
        return VllmSequence(self.runtime, list(self.tokens))

    def settle(self) -> None:
        """The engine is done with this sequence for now: stop the stream running ahead."""
        self.stop_stream()

    def close(self) -> None:
        """Stop the stream; the tokens are dropped."""
        self.stop_stream()
        self.tokens = []

    def stop_stream(self) -> None:
        stream, self.stream = self.stream, None
        if stream is not None:
            self.runtime.count("streams_cancelled")
            stream.close()


class VllmRuntime:
    """A model served by vLLM behind the runtime seam."""

    def __init__(self, config: EngineConfig, files: ModelFiles):
        self.name = config.model
        self.tokenizer = model_files.load_tokenizer(files)
        self.eos_ids = eos_ids(self.tokenizer, model_files.configured_eos(files))
        self.max_tokens = config.max_tokens
        try:
            self.client = VllmClient(config.vllm_url, config.vllm_model, config.vllm_timeout_s)
        except RuntimeFailure as exc:
            raise ModelError(f"cannot use the vLLM runtime: {exc}") from exc
        self.context_length = self._check_vocabulary()
        self.drafter: Drafter | None = None
        self.batch_limit = config.sequences
        self.evictions = 0  # vLLM's own cache is vLLM's to manage
        # a verify request recomputes the whole prompt (prompt logprobs bypass vLLM's prefix
        # cache), so chunks would pay for it again; proposals ride on nothing here: off
        self.hints = ShapeHints(lookahead=0, verify_chunk=0)
        self.on_forward: ForwardHook = lambda tokens: None
        self.info = RuntimeInfo(
            kind="vllm",
            device=self.client.base_url,
            dtype="as served",
            threads=0,
            version=self.client.version(),
            extra={"served_model": self.client.model, "max_model_len": self.context_length},
        )
        self.counts: dict[str, int] = {}
        self._counts_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=max(1, config.sequences),
                                        thread_name_prefix="prewrite-vllm")  # fmt: skip

    # -- the seam -------------------------------------------------------------------------------

    def open_sequence(self) -> VllmSequence:
        """A new, empty sequence."""
        return VllmSequence(self)

    def forward(self, feeds: Sequence[Feed]) -> list[Output]:
        """Each feed's request at once (vLLM batches them); an error fails the whole call."""
        before = [len(self._sequence(f).tokens) for f in feeds]
        for feed, length in zip(feeds, before, strict=True):
            if feed.noise:
                raise ConfigError("the parallel drafter runs on the torch runtime only")
            if length + len(feed.tokens) > self.context_length:
                raise ContextOverflowError(
                    f"{length + len(feed.tokens)} tokens do not fit "
                    f"the {self.context_length} the vLLM server serves (max_model_len)"
                )
        try:
            if len(feeds) == 1:
                outputs = [self._run(feeds[0])]
            else:
                outputs = list(self._pool.map(self._run, feeds))
        except BaseException:
            for feed, length in zip(feeds, before, strict=True):  # the call did not happen
                self._sequence(feed).truncate(length)
            raise
        self.on_forward(sum(len(f.tokens) for f in feeds))
        return outputs

    def close(self) -> None:
        """Close the connections (the server keeps running)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.client.close()

    def count(self, what: str, n: int = 1) -> None:
        """Add to the runtime's request counters (requests, tokens sent, streamed tokens)."""
        with self._counts_lock:
            self.counts[what] = self.counts.get(what, 0) + n

    # -- requests -------------------------------------------------------------------------------

    def _run(self, feed: Feed) -> Output:
        sequence = self._sequence(feed)
        if feed.first_row >= len(feed.tokens) - 1:
            rows, sent = self._step(sequence, feed.tokens)
        else:
            rows, sent = self._verify(sequence, feed.tokens, feed.first_row)
        sequence.tokens.extend(feed.tokens)
        return Output(rows, requests=1 if sent else 0, request_tokens=sent)

    def _step(self, sequence: VllmSequence, tokens: list[int]) -> tuple[torch.Tensor, int]:
        """The row after `tokens` from the sequence's stream, started anew when it cannot serve."""
        stream = sequence.stream
        if stream is not None and not (
            len(tokens) == 1 and stream.last == tokens[0] and stream.position == sequence.length
        ):
            sequence.stop_stream()
            stream = None
        if stream is not None:
            try:
                choice = stream.next()
                stream.position += 1
                self.count("streamed_tokens")
                return self._rows([choice.logprobs]), 0
            except _StreamEnded:
                sequence.stop_stream()
            except RuntimeFailure:
                sequence.stream = None
                raise
        prompt = sequence.tokens + tokens
        budget = max(1, min(self.max_tokens, self.context_length - len(prompt)))
        stream = _Stream(self.client.stream(prompt, budget, TOP), start=len(prompt))
        self.count("stream_requests")
        self.count("tokens_sent", len(prompt))
        try:
            choice = stream.next()  # a RuntimeFailure leaves no stream behind
        except _StreamEnded:
            raise RuntimeFailure(f"vLLM at {self.client.base_url} streamed no token") from None
        sequence.stream = stream
        self.count("streamed_tokens")
        return self._rows([choice.logprobs]), len(prompt)

    def _verify(
        self, sequence: VllmSequence, tokens: list[int], first_row: int
    ) -> tuple[torch.Tensor, int]:
        """One request with prompt logprobs: the rows from `first_row` of `tokens` on."""
        sequence.stop_stream()
        prompt = sequence.tokens + tokens
        self.count("verify_requests")
        self.count("tokens_sent", len(prompt))
        positions, last = self.client.score(prompt, TOP, prompt_rows=True)
        start = len(sequence.tokens) + first_row  # row r predicts prompt[r + 1]
        wanted = [_position(positions[r + 1]) for r in range(start, len(prompt) - 1)]
        return self._rows([*wanted, last.logprobs]), len(prompt)

    def _rows(self, entries: list[dict[int, float]]) -> torch.Tensor:
        rows = torch.full((len(entries), len(self.tokenizer)), float("-inf"))
        for i, entry in enumerate(entries):
            for token, logprob in entry.items():
                if 0 <= token < rows.shape[1]:
                    rows[i, token] = logprob
        return rows

    def _sequence(self, feed: Feed) -> VllmSequence:
        sequence = feed.sequence
        assert isinstance(sequence, VllmSequence) and sequence.runtime is self
        return sequence

    # -- connecting -----------------------------------------------------------------------------

    def _check_vocabulary(self) -> int:
        """Refuse a server whose tokenizer differs from ours; its max_model_len."""
        probes = [_PROBE, *(t for t in self.tokenizer.all_special_tokens if t)]
        try:
            for text in probes:
                theirs, length = self.client.tokenize(text)
                ours = self.tokenizer.encode(text, add_special_tokens=False)
                if theirs != ours:
                    raise ModelError(
                        f"vLLM at {self.client.base_url} serves {self.client.model!r} with "
                        f"another vocabulary than {self.name!r} (tokens of {text[:20]!r}: "
                        f"{theirs[:8]} vs {ours[:8]}); serve the same model, or name the "
                        "pack or folder it was served from as the model"
                    )
        except RuntimeFailure as exc:
            raise ModelError(f"cannot use the vLLM runtime: {exc}") from exc
        if length <= 0:
            raise ModelError(f"vLLM at {self.client.base_url} reported no max_model_len")
        return length


def _position(entry: dict[str, Any] | None) -> dict[int, float]:
    """One prompt position's logprobs as {token id: logprob}."""
    if not entry:
        return {}
    return {int(token): float(value["logprob"]) for token, value in entry.items()}
