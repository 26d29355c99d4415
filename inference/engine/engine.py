"""The streaming engine: one model, many sessions, each keeping its draft current as specs grow."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from inference.api import Completion, Cost, ForwardCounter, Request
from inference.config import EngineConfig
from inference.engine.acceptance import make_rule
from inference.engine.kvcache import KVState
from inference.engine.prompting import Prompt, PromptBuilder, extract_body
from inference.engine.session import Session
from inference.engine.stopping import StopRule
from inference.errors import ContextOverflowError, Superseded, UnknownSessionError
from inference.runtimes.device import resolve_device, resolve_dtype, set_threads
from inference.runtimes.torch_runtime import LoadedModel, load_model

DRAFTING, RESIDUAL, BASELINE, WARMUP = "drafting", "residual", "baseline", "warmup"


class Engine:
    """Holds one model and the sessions that stream against it.

    Model work (`update`, `finalize`, `generate`) must come from one thread at a time;
    `supersede` may be called from any thread to make older work stop at its next forward.
    """

    def __init__(self, config: EngineConfig, loaded: LoadedModel):
        self.config = config
        self.loaded = loaded
        self.builder = PromptBuilder(
            loaded.tokenizer, config.prompt_format, config.stop_strings, config.system_prompt
        )
        self.counter = ForwardCounter()
        self._phase = DRAFTING
        self._sessions: dict[str, Session] = {}
        self._latest: dict[str, int] = {}  # newest version announced: stops older work now
        self._newer: dict[str, int] = {}  # ... or after the work's `min_forwards` forwards
        self._lock = threading.Lock()
        self._eos = self._eos_ids()
        self._piece = functools.lru_cache(maxsize=None)(self._decode_one)

    @classmethod
    def load(cls, config: EngineConfig) -> Engine:
        """Load the configured model on the configured device and build an engine around it."""
        set_threads(config.threads)
        device = resolve_device(config.device)
        dtype = resolve_dtype(device, config.dtype)
        loaded = load_model(
            config.model,
            device,
            dtype,
            trust_remote_code=config.trust_remote_code,
            adapter=config.adapter,
            drafter=config.drafter,
            drafter_block=config.drafter_block,
            drafter_mode=config.drafter_mode,
        )
        return cls(config, loaded)

    # -- sessions -------------------------------------------------------------------------

    def open(self, session_id: str) -> None:
        """Start a session (re-opening one resets it)."""
        self._sessions[session_id] = self._new_session(self.config.lookahead, drafting=True)
        with self._lock:
            self._latest.setdefault(session_id, 0)

    def close(self, session_id: str) -> None:
        """Forget a session and free its cache."""
        self._sessions.pop(session_id, None)
        with self._lock:
            self._latest.pop(session_id, None)
            self._newer.pop(session_id, None)

    def supersede(self, session_id: str, version: int, soft: bool = False) -> None:
        """Announce `version` for a session: work on older versions stops at its next forward.

        A `soft` announcement lets an `update` first run the `min_forwards` it was given, so
        that drafting makes progress while a user types faster than a forward takes.
        """
        with self._lock:
            table = self._newer if soft else self._latest
            table[session_id] = max(version, table.get(session_id, 0))

    def sessions(self) -> list[str]:
        """Ids of the open sessions."""
        return list(self._sessions)

    # -- model work ---------------------------------------------------------------------------

    def update(
        self, session_id: str, request: Request, version: int = 0, min_forwards: int = 0
    ) -> Completion:
        """The request changed: verify the draft against it and regenerate what failed.

        A soft `supersede` of a newer version stops this work only after `min_forwards`.
        """
        return self._sync(session_id, request, version, DRAFTING, min_forwards)

    def finalize(self, session_id: str, request: Request, version: int = 0) -> Completion:
        """The user triggered: finish the answer for exactly this request; cost is residual."""
        return self._sync(session_id, request, version, RESIDUAL)

    def generate(
        self, request: Request, warm_from: Request | None = None, use_drafter: bool = False
    ) -> Completion:
        """Plain greedy (or sampled) decoding, no draft: the conventional server's answer.

        With `warm_from`, that request's prompt is encoded first and not charged, like a
        server that reuses the KV of a prefix it has already seen. `use_drafter` decodes
        with the parallel drafter (same answer in exact mode, fewer forwards).
        """
        session = self._new_session(lookahead=0, drafting=use_drafter)
        never = lambda: None  # noqa: E731 - plain decoding is never superseded
        if warm_from is not None:
            with self._in_phase(WARMUP):
                session.kv.score(self._prompt(warm_from).ids, [])
        prompt = self._prompt(request)
        with self._in_phase(BASELINE):
            cost = session.sync(prompt.ids, self._stop_rule(prompt), never)
        return self._completion(session, prompt, cost, 0)

    def draft_of(self, session_id: str, request: Request) -> Completion:
        """The current draft of a session rendered as an answer to `request`, with no model work."""
        session = self._session(session_id)
        prompt = self._prompt(request)
        return self._completion(session, prompt, Cost(acceptance=session.rule.name), 0)

    def is_verified(self, session_id: str, request: Request) -> bool:
        """True when the session's draft is a finished answer verified for exactly `request`."""
        session = self._session(session_id)
        return session.finished and session.prompt_ids == self._prompt(request).ids

    # -- internals ------------------------------------------------------------------------

    def _sync(
        self, session_id: str, request: Request, version: int, phase: str, min_forwards: int = 0
    ) -> Completion:
        session = self._session(session_id)
        prompt = self._prompt(request)
        check = self._checker(session_id, version, min_forwards)
        with self._in_phase(phase):
            cost = session.sync(prompt.ids, self._stop_rule(prompt), check)
        return self._completion(session, prompt, cost, version)

    def _session(self, session_id: str) -> Session:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise UnknownSessionError(f"no open session {session_id!r}") from None

    def _new_session(self, lookahead: int, drafting: bool) -> Session:
        loaded = self.loaded
        kv = KVState(loaded.model, loaded.device, self._record_forward)
        rule = make_rule(
            self.config.acceptance,
            threshold=self.config.threshold,
            temperature=self.config.temperature,
            seed=self.config.seed,
        )
        return Session(kv, rule, lookahead, loaded.drafter if drafting else None)

    def _checker(self, session_id: str, version: int, min_forwards: int) -> Callable[[], None]:
        forwards = 0  # checks passed: the forwards this work has started

        def check() -> None:
            nonlocal forwards
            with self._lock:
                latest = self._latest.get(session_id, 0)
                newer = self._newer.get(session_id, 0)
            if latest > version or (newer > version and forwards >= min_forwards):
                raise Superseded(
                    f"session {session_id!r}: version {version} < {max(latest, newer)}"
                )
            forwards += 1

        return check

    def _prompt(self, request: Request) -> Prompt:
        prompt = self.builder.build(request)
        limit = self.loaded.context_length
        if len(prompt.ids) >= limit:
            raise ContextOverflowError(
                f"the request is {len(prompt.ids)} tokens; the model's context is {limit}"
            )
        return prompt

    def _stop_rule(self, prompt: Prompt) -> StopRule:
        budget = min(self.config.max_tokens, self.loaded.context_length - len(prompt.ids))
        return StopRule(
            prompt.body_end,
            prompt.answer_start,
            self._piece,
            self._decode,
            self._eos | prompt.extra_eos,
            budget,
        )

    def _completion(
        self, session: Session, prompt: Prompt, cost: Cost, version: int
    ) -> Completion:
        tokens = session.draft[: session.verified] if session.prompt_ids == prompt.ids else []
        text, reason = self._stop_rule(prompt).answer(tokens)
        if prompt.whole_function:
            text = extract_body(text, prompt.request)
        if not session.finished or session.prompt_ids != prompt.ids:
            reason = "unfinished"
        return Completion(text, list(tokens), reason, cost, version, len(prompt.ids))

    def _record_forward(self, tokens: int) -> None:
        self.counter.record(self._phase, tokens)

    @contextmanager
    def _in_phase(self, phase: str) -> Iterator[None]:
        previous, self._phase = self._phase, phase
        try:
            yield
        finally:
            self._phase = previous

    def _eos_ids(self) -> frozenset[int]:
        ids: set[int] = set()
        tokenizer = self.loaded.tokenizer
        if tokenizer.eos_token_id is not None:
            ids.add(int(tokenizer.eos_token_id))
        generation = getattr(self.loaded.model, "generation_config", None)
        configured = getattr(generation, "eos_token_id", None)
        if isinstance(configured, int):
            ids.add(configured)
        elif configured:
            ids.update(int(i) for i in configured)
        return frozenset(ids)

    def _decode_one(self, token: int) -> str:
        return str(self.loaded.tokenizer.decode([token]))

    def _decode(self, tokens: Sequence[int]) -> str:
        return str(self.loaded.tokenizer.decode(list(tokens), skip_special_tokens=True))

