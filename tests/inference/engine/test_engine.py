"""Exact streaming equals plain greedy decoding, with exact forward counts (tiny random models).

Every test runs on both runtimes, the same tiny model as a float64 transformers model (torch)
and as a float32 GGUF (llama.cpp); each is checked against its own library's greedy decoding.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from inference.api import Request
from inference.config import EngineConfig
from inference.engine import Engine
from inference.errors import RequestError, Superseded
from inference.loading import load_engine

pytestmark = pytest.mark.timeout(60)

# No `def` in the text: the body-end rule is off, so answers run to the token budget.
OLD = Request("values = [3, 1, 2]\n# sort the values\n")
NEW = Request("values = [3, 1, 2]\n# sort the values in place and print them\n")
BUDGET = 24


@dataclass(frozen=True)
class Backend:
    """One runtime with the tiny model: engines, and that library's own greedy decoding."""

    runtime: str
    model_dir: Path

    def engine(self, **overrides) -> Engine:
        settings = {"model": str(self.model_dir), "runtime": self.runtime, "threads": 1,
                    "max_tokens": BUDGET, "lookahead": 0, "verify_chunk": 0,
                    "prefill_chunk": 0}  # fmt: skip
        if self.runtime == "torch":
            settings["dtype"] = "float64"
        settings.update(overrides)
        return load_engine(EngineConfig(**settings))

    def reference(self, engine: Engine, request: Request) -> list[int]:
        """Greedy decoding by the runtime library itself, cut by the engine's stop rule."""
        prompt = engine.prompt(request)
        eos = sorted(engine._eos)
        if self.runtime == "torch":
            tokens = _transformers_greedy(engine, prompt.ids, eos)
        else:
            tokens = _llama_cpp_greedy(self.model_dir / "tiny.gguf", prompt.ids, eos)
        _, end = engine.stop_rule(prompt).scan(tokens)
        return tokens[:end] if end else tokens


def _transformers_greedy(engine: Engine, ids: list[int], eos: list[int]) -> list[int]:
    model = engine.runtime.loaded.model  # type: ignore[attr-defined]
    with torch.inference_mode():
        out = model.generate(
            torch.tensor([ids]), max_new_tokens=BUDGET, do_sample=False, eos_token_id=eos,
            pad_token_id=0,
        )  # fmt: skip
    return out[0, len(ids) :].tolist()


def _llama_cpp_greedy(gguf: Path, ids: list[int], eos: list[int]) -> list[int]:
    from llama_cpp import Llama

    llm = Llama(model_path=str(gguf), n_ctx=512, n_threads=1, verbose=False)
    tokens: list[int] = []
    for token in llm.generate(ids, temp=0.0, repeat_penalty=1.0):
        tokens.append(int(token))
        if token in eos or len(tokens) == BUDGET:
            break
    llm.close()
    return tokens


@pytest.fixture(scope="module", params=["torch", "llamacpp"])
def backend(request, tiny_model_dir, tiny_gguf_dir) -> Backend:
    return Backend(request.param, tiny_model_dir if request.param == "torch" else tiny_gguf_dir)


def seed_draft(engine: Engine, sid: str, draft: list[int]) -> None:
    """Give a session a draft written for some earlier text (so none of it is verified)."""
    engine.open(sid)
    session = engine._sessions[sid]
    session.prompt_ids = engine.prompt(OLD).ids
    session.draft = list(draft)
    session.verified, session.finished = len(draft), True


def superseded_update(engine: Engine, sid: str, forwards: int) -> list[int]:
    """`update` of NEW (version 1), superseded by version 2 during its `forwards`-th forward:
    the tokens of each forward it ran."""
    record = engine.runtime.on_forward
    fed: list[int] = []

    def supersede_at(tokens: int) -> None:
        record(tokens)
        fed.append(tokens)
        if len(fed) == forwards:
            engine.supersede(sid, 2)

    engine.runtime.on_forward = supersede_at
    try:
        with pytest.raises(Superseded):
            engine.update(sid, NEW, version=1)
    finally:
        engine.runtime.on_forward = record
    return fed


@pytest.fixture(scope="module")
def engine(backend) -> Engine:
    return backend.engine()


@pytest.fixture(scope="module")
def greedy(backend, engine) -> list[int]:
    tokens = backend.reference(engine, NEW)
    assert len(tokens) == BUDGET, "the tiny model should run to the budget for these tests"
    return tokens


def test_plain_generate_matches_the_runtime_librarys_own_greedy(engine, greedy):
    completion = engine.generate(NEW)
    assert completion.token_ids == greedy
    assert completion.cost.forwards == BUDGET  # one prefill + one forward per later token
    assert completion.finish_reason == "length"


def test_fully_right_draft_costs_one_forward(engine, greedy):
    seed_draft(engine, "right", greedy)
    completion = engine.finalize("right", NEW)
    assert completion.token_ids == greedy
    assert completion.cost.forwards == 1
    assert completion.cost.accepted_tokens == BUDGET


def test_a_draft_running_past_the_answers_end_is_verified_only_up_to_it(engine, greedy):
    # A draft written for other text can go on past where the new answer stops (here the
    # budget; in an editor, the end of the body): those tokens are never part of the answer.
    seed_draft(engine, "long", greedy + greedy[:10])
    completion = engine.finalize("long", NEW)
    assert completion.token_ids == greedy
    assert completion.cost.forwards == 1
    assert completion.cost.draft_tokens == BUDGET  # not BUDGET + 10


@pytest.mark.parametrize("diverge_at", [0, 5, 17])
def test_partly_right_draft_regenerates_only_the_rest(engine, greedy, diverge_at):
    wrong = (greedy[diverge_at] + 1) % len(engine.runtime.tokenizer)
    draft = greedy[:diverge_at] + [wrong] + greedy[diverge_at + 1 :]
    seed_draft(engine, f"part{diverge_at}", draft)
    completion = engine.finalize(f"part{diverge_at}", NEW)
    assert completion.token_ids == greedy
    assert completion.cost.accepted_tokens == diverge_at
    # verify pass (it also yields the corrected token), then one forward per remaining token
    assert completion.cost.forwards == 1 + (BUDGET - 1 - diverge_at)


@pytest.mark.parametrize(("diverge_at", "chunks"), [(0, 1), (3, 1), (4, 2), (17, 3), (None, 3)])
def test_a_chunked_verify_stops_at_the_chunk_with_the_first_rejection(
    backend, greedy, diverge_at, chunks
):
    """Chunks of 4, 8, 16 tokens: a rejection at j costs the chunks up to j and no more."""
    engine = backend.engine(verify_chunk=4)
    draft = list(greedy)
    if diverge_at is not None:
        draft[diverge_at] = (greedy[diverge_at] + 1) % len(engine.runtime.tokenizer)
    seed_draft(engine, "chunked", draft)
    completion = engine.finalize("chunked", NEW)
    assert completion.token_ids == greedy
    kept = BUDGET if diverge_at is None else diverge_at
    assert completion.cost.accepted_tokens == kept
    regenerated = 0 if diverge_at is None else BUDGET - 1 - diverge_at
    assert completion.cost.forwards == chunks + regenerated


def test_a_supersede_between_verify_chunks_keeps_the_chunks_verified(backend, greedy):
    engine = backend.engine(verify_chunk=4)
    seed_draft(engine, "between", greedy)
    superseded_update(engine, "between", 2)
    assert engine._sessions["between"].verified == 12  # chunks of 4 and 8, checked
    completion = engine.finalize("between", NEW, version=2)
    assert completion.token_ids == greedy
    assert completion.cost.forwards == 2  # the 12 tokens left, in chunks of 4 and 8 again


def test_a_changed_prompt_goes_in_prefill_chunks_that_newer_text_stops_between(backend, greedy):
    engine = backend.engine(prefill_chunk=2)
    seed_draft(engine, "prefill", greedy)  # a draft for another prompt
    changed = len(engine.prompt(NEW).ids) - 1  # encoded ahead of the proposals
    assert changed > 4
    fed = superseded_update(engine, "prefill", 2)
    assert fed == [2, 2]  # stopped between two chunks, not after the whole prompt
    completion = engine.finalize("prefill", NEW, version=2)  # a trigger: in one forward
    assert completion.token_ids == greedy  # exact: the chunks' cache is the one-forward cache
    engine.open("whole")
    assert engine.update("whole", NEW, version=1).token_ids == greedy
    drafting = backend.engine(prefill_chunk=0)
    drafting.open("one")
    assert drafting.update("one", NEW, version=1).token_ids == greedy


def test_a_prefill_before_the_first_draft_leaves_only_the_rest_to_encode(backend, greedy):
    engine = backend.engine(prefill_chunk=2)
    head = Request("values = [3, 1, 2]\n")  # what the document began with when opened
    engine.open("read")
    cached = engine.prefill("read", head)
    assert cached == len(engine.prompt(head).ids)
    assert engine.forwards()["prefill"] > 1  # in chunks
    record, fed = engine.runtime.on_forward, []
    engine.runtime.on_forward = lambda tokens: (record(tokens), fed.append(tokens))
    try:
        completion = engine.finalize("read", NEW, version=1)
    finally:
        engine.runtime.on_forward = record
    assert completion.token_ids == greedy  # exact
    shared = 0  # the prompt tokens the prefill had encoded
    for a, b in zip(engine.prompt(head).ids, engine.prompt(NEW).ids, strict=False):
        if a != b:
            break
        shared += 1
    assert shared > 2
    assert fed[0] == len(engine.prompt(NEW).ids) - shared  # only the rest of the prompt
    # a session that has drafted keeps its cache: a prefill does nothing there
    assert engine.prefill("read", Request("something else entirely\n")) == 0
    assert engine.finalize("read", NEW, version=2).cost.forwards == 0


def test_a_prefill_stops_at_a_newer_version_of_its_stopper(backend):
    engine = backend.engine(prefill_chunk=2)
    engine.open("opened")
    engine.supersede("opened\x00stop", 5)
    with pytest.raises(Superseded):
        engine.prefill("opened", NEW, stopped_by=("opened\x00stop", 4))
    assert engine.forwards().get("prefill", 0) == 0


def test_unrelated_draft_gives_the_greedy_answer(engine, greedy):
    generator = torch.Generator().manual_seed(7)
    unrelated = torch.randint(0, len(engine.runtime.tokenizer), (30,), generator=generator)
    seed_draft(engine, "unrelated", unrelated.tolist())
    completion = engine.finalize("unrelated", NEW)
    assert completion.token_ids == greedy
    assert completion.cost.forwards == BUDGET


def test_verified_draft_costs_zero_forwards_at_trigger(engine, greedy):
    engine.open("typed")
    engine.update("typed", OLD, version=1)
    engine.update("typed", NEW, version=2)
    assert engine.is_verified("typed", NEW)
    completion = engine.finalize("typed", NEW, version=2)
    assert completion.cost.forwards == 0
    assert completion.token_ids == greedy


def test_stale_draft_lookahead_is_lossless_and_saves_forwards(backend, greedy):
    engine = backend.engine(lookahead=8)
    # a substitution at 3 and an insertion at 10: the rest of the draft realigns after each
    draft = greedy[:3] + [greedy[3] + 1] + greedy[4:10] + [5] + greedy[10:]
    seed_draft(engine, "stale", draft)
    completion = engine.finalize("stale", NEW)
    assert completion.token_ids == greedy
    assert completion.cost.lookahead_tokens > 0
    assert completion.cost.forwards < 1 + (BUDGET - 1 - 3)


def test_forward_counter_splits_phases(backend):
    engine = backend.engine()
    engine.open("s")
    engine.update("s", OLD, version=1)
    engine.finalize("s", NEW, version=2)
    engine.generate(NEW, warm_from=OLD)
    phases = engine.counter.by_phase
    assert phases["drafting"] == BUDGET
    assert phases["warmup"] == 1
    assert phases["baseline"] == BUDGET
    assert phases["residual"] >= 1


def test_supersede_mid_regeneration_leaves_a_consistent_session(backend, greedy):
    engine = backend.engine()
    engine.open("s")
    fed = superseded_update(engine, "s", 5)
    partial = engine.draft_of("s", NEW)
    assert partial.finish_reason == "unfinished"
    assert partial.token_ids == greedy[: len(partial.token_ids)]
    completion = engine.finalize("s", NEW, version=2)
    assert completion.token_ids == greedy
    # resumed where it stopped: total work equals one uninterrupted decode
    assert len(fed) + completion.cost.forwards == BUDGET


def test_superseded_work_does_not_start(engine):
    engine.open("old")
    engine.supersede("old", 5)
    with pytest.raises(Superseded):
        engine.update("old", NEW, version=4)
    assert engine._sessions["old"].draft == []


def test_a_soft_supersede_lets_the_work_run_its_minimum_forwards_first(engine, greedy):
    engine.open("soft")
    engine.supersede("soft", 5, soft=True)  # a newer keystroke is already waiting
    before = engine.counter.by_phase.get("drafting", 0)
    with pytest.raises(Superseded):
        engine.update("soft", NEW, version=4, min_forwards=3)
    assert engine.counter.by_phase["drafting"] - before == 3
    assert engine.draft_of("soft", NEW).token_ids == greedy[:3]  # progress that will be kept
    engine.supersede("soft", 7)  # a trigger (hard): stops at once, whatever min_forwards says
    with pytest.raises(Superseded):
        engine.update("soft", NEW, version=6, min_forwards=3)
    assert engine.counter.by_phase["drafting"] - before == 3
    engine.close("soft")


def test_a_sampled_answer_is_the_seeds_whoever_caches_the_prefix(engine, greedy):
    """`sample` (searchOnFailure's alternatives): a seed gives one answer, from a fresh cache
    or from an open session's; other seeds give others, and none of it touches the session."""
    answers = [engine.sample(NEW, seed, temperature=1.5).token_ids for seed in (1, 2, 3)]
    assert engine.sample(NEW, 1, temperature=1.5).token_ids == answers[0]
    assert len({tuple(a) for a in answers}) > 1 and any(a != greedy for a in answers)
    assert all(len(a) == BUDGET for a in answers)
    engine.open("cached")
    engine.update("cached", NEW)
    assert engine.sample(NEW, 2, temperature=1.5, cached_by="cached").token_ids == answers[1]
    assert engine.finalize("cached", NEW).token_ids == greedy  # the draft is as it was
    assert engine.finalize("cached", NEW).cost.forwards == 0
    engine.close("cached")
    assert engine.counter.by_phase["search"] >= 4 * BUDGET - 1


def test_a_sampled_answer_stops_at_a_newer_version_of_its_stopper(engine):
    engine.supersede("stopper", 5)
    with pytest.raises(Superseded):
        engine.sample(NEW, 1, stopped_by=("stopper", 4))
    assert len(engine.sample(NEW, 1, stopped_by=("stopper", 5)).token_ids) == BUDGET
    with pytest.raises(RequestError):
        engine.sample(NEW, 1, temperature=0.0)
