"""The streaming engine: one model, many sessions, each keeping its draft current as specs grow."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TypeVar

from inference.api import (
    CacheUse,
    Completion,
    Cost,
    FinishReason,
    ForwardCounter,
    Request,
    Rewrite,
    RuntimeInfo,
    Update,
)
from inference.config import EngineConfig
from inference.engine.acceptance import AcceptanceRule, SampleRule, make_rule
from inference.engine.kvcache import KVState, Steps, run_alone, run_together
from inference.engine.memory import MemoryBudget, default_budget_mib
from inference.engine.prompting import Prompt, PromptBuilder, extract_body
from inference.engine.realign import Contrast, realign
from inference.engine.session import Session
from inference.engine.stopping import StopRule
from inference.errors import ContextOverflowError, RequestError, Superseded, UnknownSessionError
from inference.runtimes.base import Runtime, ShapeHints

DRAFTING, RESIDUAL, BASELINE, WARMUP = "drafting", "residual", "baseline", "warmup"
PREFILL = "prefill"  # a session's prompt encoded ahead of its first draft
RESPEC = "respec"  # re-verifying bodies against changed specs
SEARCH = "search"  # sampled alternatives to an answer that fails its examples
T = TypeVar("T")


class Engine:
    """Holds one model (in a runtime) and the sessions that stream against it.

    Model work (`update`, `update_many`, `finalize`, `generate`) must come from one thread at
    a time; `supersede` may be called from any thread to make older work stop at its next
    forward.
    """

    def __init__(
        self, config: EngineConfig, runtime: Runtime, preferred_format: str | None = None
    ):
        """An engine over a loaded `runtime`; `preferred_format` is the model's own prompt
        format (its pack's) where the settings leave it to the engine."""
        self.config = config
        self.runtime = runtime
        below = config.code_below == "always" or (
            config.code_below == "auto" and runtime.info.device != "cpu"
        )
        self.builder = PromptBuilder(
            runtime.tokenizer, config.prompt_format, config.stop_strings, config.system_prompt,
            preferred=preferred_format, code_below=below,
        )  # fmt: skip
        self.counter = ForwardCounter()
        runtime.on_forward = self._record_forward
        self._phase = DRAFTING
        self._sessions: dict[str, Session] = {}
        self._latest: dict[str, int] = {}  # newest version announced: stops older work now
        self._newer: dict[str, int] = {}  # ... or after the work's `min_forwards` forwards
        self._lock = threading.Lock()
        self._eos = runtime.eos_ids
        self._piece = functools.lru_cache(maxsize=None)(self._decode_one)
        self.memory = MemoryBudget(config.memory_budget_mb or default_budget_mib())

    @property
    def batch_limit(self) -> int:
        """How many sessions `update_many` serves in one forward per step (1: no batching)."""
        return self.runtime.batch_limit

    def runtime_info(self) -> RuntimeInfo:
        """What runs the model (kind, device, threads)."""
        return self.runtime.info

    def cache_use(self) -> CacheUse:
        """The sessions' caches: bytes held, the budget, evictions so far (by either)."""
        budget = self.memory
        return CacheUse(budget.held, budget.budget, budget.evictions + self.runtime.evictions)

    def forwards(self) -> dict[str, int]:
        """Model forwards so far by phase (drafting, residual, baseline)."""
        return dict(self.counter.by_phase)

    def shutdown(self) -> None:
        """Close every session and free the model."""
        for session_id in list(self._sessions):
            self.close(session_id)
        self.runtime.close()

    # -- sessions -------------------------------------------------------------------------

    def open(self, session_id: str) -> None:
        """Start a session (re-opening one resets it)."""
        old = self._sessions.pop(session_id, None)
        if old is not None:
            old.close()
        self._sessions[session_id] = self._new_session(self.shape.lookahead, drafting=True)
        self.memory.touch(session_id)
        with self._lock:
            self._latest.setdefault(session_id, 0)

    def close(self, session_id: str) -> None:
        """Forget a session and free its cache."""
        session = self._sessions.pop(session_id, None)
        if session is not None:
            session.close()
        self.memory.forget(session_id)
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

    def update_many(
        self,
        updates: Sequence[Update],
        on_done: Callable[[int, Completion | Exception], None] | None = None,
        admit: Callable[[], Sequence[Update]] | None = None,
    ) -> list[Completion | Exception]:
        """Several sessions' `update`s at once, their forwards batched where the runtime can.

        Each gets its completion, or the error that stopped it (`Superseded`, say); the
        others go on. llama.cpp runs one decode per step for all of them. `on_done(i, result)`
        hears of update i as soon as it ends (a short one need not wait for the longest).
        Before every step `admit()` may give more updates (sessions not running now): they
        join the running ones at that step, numbered on after those given before.
        """
        results: list[Completion | Exception | None] = []
        work: list[tuple[int, Update, Session, Prompt]] = []  # per started steps
        running: set[str] = set()

        def finish(i: int, result: Completion | Exception) -> None:
            results[i] = result
            if on_done is not None:
                on_done(i, result)

        def begin(batch: Sequence[Update]) -> list[Steps[Cost]]:
            started, first = [], len(results)
            results.extend([None] * len(batch))
            if running and batch:  # joining: caches of sessions no longer running may go
                self.memory.fit(self._sessions, keep=running | {u.session_id for u in batch})
            for i, job in enumerate(batch, first):
                try:
                    if job.session_id in running:
                        raise ValueError(f"session {job.session_id!r} is running already")
                    session, prompt = self._session(job.session_id), self.prompt(job.request)
                except (UnknownSessionError, ContextOverflowError, ValueError) as exc:
                    finish(i, exc)
                    continue
                self.memory.touch(job.session_id)
                running.add(job.session_id)
                check = self._checker(job.session_id, job.version, job.min_forwards)
                chunk = self.shape.prefill_chunk
                started.append(session.sync(prompt.ids, self.stop_rule(prompt), check, chunk))
                work.append((i, job, session, prompt))
            return started

        def ended(k: int, cost: Cost | Exception) -> None:
            i, job, session, prompt = work[k]
            running.discard(job.session_id)
            finish(i, cost if isinstance(cost, Exception) else
                   self._completion(session, prompt, cost, job.version))  # fmt: skip

        more = (lambda: begin(admit())) if admit is not None else None
        try:
            with self._in_phase(DRAFTING):
                run_together(begin(updates), self.runtime.forward, ended, admit=more)
        finally:
            self.memory.fit(self._sessions, keep={job.session_id for _, job, _, _ in work})
        return [r for r in results if r is not None]

    def prefill(
        self, session_id: str, request: Request, stopped_by: tuple[str, int] | None = None
    ) -> int:
        """Encode `request`'s prompt into an open session's cache ahead of its first draft (a
        document just opened, read before it is edited): a draft whose prompt begins the same
        way reads that part from the cache. Nothing where the session has drafted already (the
        cache is its draft's). Returns how many tokens the cache holds. In forwards of
        `prefill_chunk` tokens where the runtime splits prompts; `stopped_by` (an id, a
        version): a `supersede` of that id newer than the version stops the work at its next
        forward, what was encoded staying cached."""
        session = self._session(session_id)
        ids = self.prompt(request).ids
        check = self._checker(*stopped_by, 0) if stopped_by else lambda: None
        self.memory.touch(session_id)
        try:
            with self._in_phase(PREFILL):
                return self._run(session.prefill(ids, check, self.shape.prefill_chunk))
        finally:
            self.memory.fit(self._sessions, keep={session_id})

    def finalize(self, session_id: str, request: Request, version: int = 0) -> Completion:
        """The user triggered: finish the answer for exactly this request; cost is residual."""
        return self._sync(session_id, request, version, RESIDUAL)

    def rewrite(
        self,
        session_id: str,
        request: Request,
        body: str,
        version: int = 0,
        before: Request | None = None,
    ) -> Rewrite:
        """The body `request` (a function's changed spec) asks for, from the `body` a person
        wrote: the lines the change does not make unlikely stay, the others are rewritten
        greedily (realign.py). `before` is the request as it was before the spec changed: a
        token stays while the new spec gives it `respec_ratio` of what the old one gives it
        (without it, while it has `respec_threshold`); the old spec is scored in a second
        cache of the session. A `supersede` of a newer version stops the work at its next
        forward."""
        session = self._session(session_id)
        prompt = self.prompt(request)
        old = self.prompt(before) if before is not None else None
        if prompt.whole_function:
            raise RequestError("re-verifying a body needs a raw or fill-in-the-middle prompt")
        texts = body_lines(body)
        tokenize = self.runtime.tokenizer
        lines = [tokenize(text, add_special_tokens=False)["input_ids"] for text in texts]
        stop = self.stop_rule(prompt, extra=sum(map(len, lines)))
        check = self._checker(session_id, version, 0)
        self.memory.touch(session_id)
        start = time.perf_counter()
        before_new = session.kv.forwards
        if old is not None and session.contrast is None:
            # the old spec's cache starts as a copy of the new one's (no compute): the code
            # before the spec is encoded once
            self.memory.fit(self._sessions, keep={session_id})
            check()
            with self._in_phase(RESPEC):
                self._run(session.kv.score(prompt.ids, []))
            session.contrast = session.kv.fork()
        caches = [session.kv, *([session.contrast] if session.contrast else [])]
        forwards = before_new + sum(kv.forwards for kv in caches[1:])
        config = self.config
        rule = Contrast(session.contrast if old else None, old.ids if old else [],
                        config.respec_ratio, config.respec_threshold)  # fmt: skip
        try:
            with self._in_phase(RESPEC):
                steps = realign(session.kv, prompt.ids, lines, texts, stop, check, rule)
                result = self._run(steps)
        finally:
            for kv in caches:
                kv.settle()
            self.memory.fit(self._sessions, keep={session_id})
        cost = Cost(
            forwards=sum(kv.forwards for kv in caches) - forwards,
            wall_ms=(time.perf_counter() - start) * 1000.0,
            draft_tokens=sum(map(len, lines)),
            generated_tokens=len(result.tokens),
            acceptance="threshold",
        )
        text, reason = stop.answer(result.tokens)
        if not result.ended and reason == "unfinished":  # the person's own end, kept
            reason = "stop"
        return Rewrite(text, reason, result.kept_lines, len(lines), cost, version)

    def generate(
        self,
        request: Request,
        warm_from: Request | None = None,
        use_drafter: bool = False,
        cached_by: str | None = None,
        body_rule: bool = True,
    ) -> Completion:
        """Plain greedy (or sampled) decoding, no draft: the conventional server's answer.

        With `warm_from`, that request's prompt is encoded first and not charged, like a
        server that reuses the KV of a prefix it has already seen. With `cached_by`, decoding
        starts from what that open session has cached (its draft is not used: only the
        prefix its tokens share with the request is kept). `use_drafter` decodes with the
        parallel drafter (same answer in exact mode, fewer forwards). `body_rule=False` lets the
        answer run past the function's end (to EOS or the budget): what the model would write
        after the body, for the bench's look at what the stop rule cut.
        """
        session = self._new_session(lookahead=0, drafting=use_drafter)
        never = lambda: None  # noqa: E731 - plain decoding is never superseded
        return self._throwaway(session, request, never, BASELINE, cached_by, warm_from, body_rule)

    def sample(
        self,
        request: Request,
        seed: int,
        temperature: float | None = None,
        cached_by: str | None = None,
        stopped_by: tuple[str, int] | None = None,
    ) -> Completion:
        """One answer to `request` sampled at `temperature` (the configured one by default)
        with `seed`: the same seed gives the same answer. An alternative to the greedy answer
        when that one fails its spec's examples. `cached_by` as in `generate`; `stopped_by`
        (a session id, a version): a `supersede` of that id newer than the version stops the
        work at its next forward (`Superseded`)."""
        temperature = self.config.temperature if temperature is None else temperature
        if not 0.0 < temperature <= 5.0:
            raise RequestError(f"temperature must be in (0, 5], not {temperature}")
        session = self._new_session(0, drafting=False, rule=SampleRule(temperature, seed))
        check = self._checker(*stopped_by, 0) if stopped_by else lambda: None
        return self._throwaway(session, request, check, SEARCH, cached_by)

    def _throwaway(
        self,
        session: Session,
        request: Request,
        check: Callable[[], None],
        phase: str,
        cached_by: str | None = None,
        warm_from: Request | None = None,
        body_rule: bool = True,
    ) -> Completion:
        """Decode `request` in a throwaway session (generate, sample): see `generate`."""
        if cached_by is not None and cached_by in self._sessions:
            session.kv.close()
            session.kv = self._sessions[cached_by].kv.fork()
        try:
            if warm_from is not None:
                with self._in_phase(WARMUP):
                    self._run(session.kv.score(self.prompt(warm_from).ids, []))
            prompt = self.prompt(request)
            if not body_rule:
                prompt = replace(prompt, body_end=replace(prompt.body_end, def_indent=None))
            with self._in_phase(phase):
                cost = self._run(session.sync(prompt.ids, self.stop_rule(prompt), check))
            return self._completion(session, prompt, cost, 0)
        finally:
            session.kv.close()

    def warm_up(self, text: str) -> None:
        """One uncharged forward over `text`, so later timings skip lazy initialisation."""
        kv = KVState(self.runtime.open_sequence())
        try:
            with self._in_phase(WARMUP):
                self._run(kv.score(self.runtime.tokenizer(text)["input_ids"], []))
        finally:
            kv.close()

    def draft_of(self, session_id: str, request: Request) -> Completion:
        """The current draft of a session rendered as an answer to `request`, with no model work."""
        session = self._session(session_id)
        prompt = self.prompt(request)
        return self._completion(session, prompt, Cost(acceptance=session.rule.name), 0)

    def is_verified(self, session_id: str, request: Request) -> bool:
        """True when the session's draft is a finished answer verified for exactly `request`."""
        session = self._session(session_id)
        return session.finished and session.prompt_ids == self.prompt(request).ids

    # -- internals ------------------------------------------------------------------------

    def _sync(
        self, session_id: str, request: Request, version: int, phase: str, min_forwards: int = 0
    ) -> Completion:
        session = self._session(session_id)
        prompt = self.prompt(request)
        check = self._checker(session_id, version, min_forwards)
        # drafting only: a trigger's own residual runs in as few forwards as it can
        chunk = self.shape.prefill_chunk if phase == DRAFTING else 0
        self.memory.touch(session_id)
        try:
            with self._in_phase(phase):
                cost = self._run(session.sync(prompt.ids, self.stop_rule(prompt), check, chunk))
        finally:
            self.memory.fit(self._sessions, keep={session_id})
        return self._completion(session, prompt, cost, version)

    def _run(self, steps: Steps[T]) -> T:
        return run_alone(steps, self.runtime.forward)

    def _session(self, session_id: str) -> Session:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise UnknownSessionError(f"no open session {session_id!r}") from None

    def _new_session(
        self, lookahead: int, drafting: bool, rule: AcceptanceRule | None = None
    ) -> Session:
        kv = KVState(self.runtime.open_sequence())
        rule = rule or make_rule(
            self.config.acceptance,
            threshold=self.config.threshold,
            temperature=self.config.temperature,
            seed=self.config.seed,
        )
        drafter = self.runtime.drafter if drafting else None
        shape = replace(self.shape, lookahead=lookahead)
        return Session(kv, rule, shape, drafter)

    @property
    def shape(self) -> ShapeHints:
        """The forward shapes in use: the settings, or the runtime's hints where unset."""
        config, hints = self.config, self.runtime.hints
        lookahead = hints.lookahead if config.lookahead is None else config.lookahead
        chunk = hints.verify_chunk if config.verify_chunk is None else config.verify_chunk
        prefill = hints.prefill_chunk if config.prefill_chunk is None else config.prefill_chunk
        return replace(hints, lookahead=lookahead, verify_chunk=chunk, prefill_chunk=prefill)

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

    def prompt(self, request: Request) -> Prompt:
        """`request` rendered for the model; ContextOverflowError when it does not fit."""
        prompt = self.builder.build(request)
        limit = self.runtime.context_length
        if len(prompt.ids) >= limit:
            raise ContextOverflowError(
                f"the request is {len(prompt.ids)} tokens; the model's context is {limit}"
            )
        return prompt

    def stop_rule(self, prompt: Prompt, extra: int = 0) -> StopRule:
        """Where an answer to `prompt` ends (the same rule for streaming and plain decoding);
        `extra` tokens more than `max_tokens` allows (a person's body being re-verified)."""
        budget = self.config.max_tokens + extra
        budget = min(budget, self.runtime.context_length - len(prompt.ids))
        return StopRule(
            prompt.body_end,
            prompt.answer_start,
            self._piece,
            self._decode,
            self._eos | prompt.extra_eos,
            budget,
        )

    def answer_text(self, prompt: Prompt, tokens: Sequence[int]) -> tuple[str, FinishReason]:
        """The editor's text of an answer's tokens (a chat answer's body only), and its end."""
        text, reason = self.stop_rule(prompt).answer(tokens)
        if prompt.whole_function:
            body = extract_body(text, prompt.request)
            if body is None:  # another function, say: no suggestion, and the reason says so
                return "", "not_a_body" if reason != "unfinished" else reason
            text = body
        return text, reason

    def _completion(self, session: Session, prompt: Prompt, cost: Cost, version: int) -> Completion:
        tokens = session.draft[: session.verified] if session.prompt_ids == prompt.ids else []
        text, reason = self.answer_text(prompt, tokens)
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

    def _decode_one(self, token: int) -> str:
        return str(self.runtime.tokenizer.decode([token]))

    def _decode(self, tokens: Sequence[int]) -> str:
        return str(self.runtime.tokenizer.decode(list(tokens), skip_special_tokens=True))


def body_lines(body: str) -> list[str]:
    """A body's lines, each with its newline, trailing blank lines left out."""
    lines = body.rstrip(" \t\n").split("\n")
    return [f"{line}\n" for line in lines] if body.strip() else []
