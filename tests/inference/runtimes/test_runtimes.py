"""The runtime seam on both runtimes: KV reuse, rewinding, interleaving, batching, eviction."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from inference.api import Request
from inference.config import EngineConfig
from inference.engine import Engine
from inference.engine.engine import Update
from inference.engine.kvcache import KVState, run_alone
from inference.errors import ConfigError, ContextOverflowError, ModelFolderError
from inference.loading import load_engine
from inference.runtimes import choose_runtime, load_runtime, model_files
from inference.runtimes.base import Feed, Runtime
from tests.tiny_models import tiny_settings as settings

pytestmark = pytest.mark.timeout(60)

# Measured on the tiny model (logits of magnitude ~16): torch float32 agrees with a fresh
# forward to 4e-6. llama.cpp with batch-invariant numerics (the default where the build allows
# it, as `make venv` builds it: llamacpp_numerics.py) gives the very same logits whatever the
# batch shape; with its fast kernels they differ by up to 6e-3 when the shape differs (several
# sequences in one decode, a feed cut into chunks).
TOLERANCE = {"torch": 1e-4, "llamacpp": 2e-2, "llamacpp-invariant": 0.0}
PROMPT = "values = [3, 1, 2]\n# sort the values in place and print them\n"


@pytest.fixture(scope="module", params=["torch", "llamacpp"])
def runtime(request, tiny_model_dir, tiny_gguf_dir) -> Runtime:
    folder = tiny_model_dir if request.param == "torch" else tiny_gguf_dir
    loaded = load_runtime(settings(request.param, folder))
    assert loaded.info.kind == request.param
    assert "cores" in str(loaded.info.extra["cpu"])  # results name the CPU they were got on
    return loaded


def run(runtime: Runtime, steps):
    return run_alone(steps, runtime.forward)


def fresh_logits(runtime: Runtime, tokens: list[int]) -> torch.Tensor:
    kv = KVState(runtime.open_sequence())
    rows, _ = run(runtime, kv.feed(tokens))
    kv.close()
    return rows


def numerics_key(runtime: Runtime) -> str:
    invariant = runtime.info.extra.get("numerics") == "invariant"
    return f"{runtime.info.kind}-invariant" if invariant else runtime.info.kind


def close(runtime: Runtime, actual: torch.Tensor, expected: torch.Tensor) -> None:
    tolerance = TOLERANCE[numerics_key(runtime)]
    torch.testing.assert_close(actual, expected, rtol=0, atol=tolerance)
    assert torch.equal(actual.argmax(-1), expected.argmax(-1))


def test_kv_reuse_matches_a_fresh_forward(runtime):
    kv = KVState(runtime.open_sequence())
    old = list(range(40, 70))
    new = old[:20] + list(range(100, 112))
    proposals = [7, 8, 9, 10]
    run(runtime, kv.score(old, [1, 2, 3]))
    rows, _ = run(runtime, kv.score(new, proposals))  # reuses the first 20 cached positions
    assert kv.ids == new + proposals
    close(runtime, rows, fresh_logits(runtime, new + proposals)[len(new) - 1 :])
    assert kv.forwards == 2
    kv.close()


def test_score_uses_the_tail_without_a_forward(runtime):
    kv = KVState(runtime.open_sequence())
    context = list(range(50, 60))
    first, _ = run(runtime, kv.score(context, []))
    again, _ = run(runtime, kv.score(context, []))
    assert kv.forwards == 1
    torch.testing.assert_close(first, again)
    kv.close()


def test_truncate_then_feed_matches_fresh(runtime):
    kv = KVState(runtime.open_sequence())
    run(runtime, kv.feed(list(range(30, 50))))
    kv.truncate(12)
    rows, _ = run(runtime, kv.feed([5, 6, 7]))
    close(runtime, rows, fresh_logits(runtime, list(range(30, 42)) + [5, 6, 7])[-3:])
    kv.close()


def test_interleaved_sequences_do_not_disturb_each_other(runtime):
    a, b = KVState(runtime.open_sequence()), KVState(runtime.open_sequence())
    tokens_a, tokens_b = list(range(60, 90)), list(range(200, 215))
    rows_a = []
    for i in range(0, 30, 10):  # a and b take turns, b also rewinds in between
        rows_a.append(run(runtime, a.feed(tokens_a[i : i + 10]))[0])
        run(runtime, b.feed(tokens_b))
        b.truncate(5)
        del tokens_b[5:]
        tokens_b += [300 + i, 301 + i]
    close(runtime, torch.cat(rows_a), fresh_logits(runtime, tokens_a))
    a.close()
    b.close()


def test_a_fork_starts_with_the_cache_and_goes_its_own_way(runtime):
    base = KVState(runtime.open_sequence())
    run(runtime, base.feed(list(range(70, 100))))
    twin = base.fork()
    assert twin.ids == base.ids and twin.sequence.length == 30
    twin.truncate(20)
    mine, _ = run(runtime, twin.feed([1, 2, 3]))
    theirs, _ = run(runtime, base.feed([4, 5]))
    close(runtime, mine, fresh_logits(runtime, list(range(70, 90)) + [1, 2, 3])[-3:])
    close(runtime, theirs, fresh_logits(runtime, list(range(70, 100)) + [4, 5])[-2:])
    base.close()
    twin.close()


def test_plain_decoding_from_a_sessions_cache_is_plain_decoding(
    runtime, tiny_model_dir, tiny_gguf_dir
):
    folder = tiny_model_dir if runtime.info.kind == "torch" else tiny_gguf_dir
    engine = load_engine(settings(runtime.info.kind, folder, max_tokens=12, lookahead=0))
    engine.open("doc")
    engine.update("doc", Request(PROMPT), 1)
    before = dict(engine.counter.tokens_by_phase)
    warm = engine.generate(Request(PROMPT + "# then sum them\n"), cached_by="doc")
    prompt_tokens = engine.counter.tokens_by_phase["baseline"] - before.get("baseline", 0)
    cold = engine.generate(Request(PROMPT + "# then sum them\n"))
    assert warm.token_ids == cold.token_ids
    assert prompt_tokens < cold.prompt_tokens  # the cached prefix was not encoded again
    assert engine.update("doc", Request(PROMPT), 1).cost.forwards == 0  # its draft untouched


def test_several_sequences_in_one_forward_equal_separate_forwards(runtime):
    contexts = [list(range(10 + 7 * i, 40 + 7 * i)) for i in range(4)]
    states = [KVState(runtime.open_sequence()) for _ in contexts]
    feeds = [Feed(kv.sequence, c, len(c) - 9) for kv, c in zip(states, contexts, strict=True)]
    outputs = runtime.forward(feeds)
    for output, context in zip(outputs, contexts, strict=True):
        assert output.rows.shape[0] == 9  # only the rows asked for
        close(runtime, output.rows, fresh_logits(runtime, context)[-9:])
    for kv in states:
        kv.close()


def test_update_many_gives_each_session_its_own_answer(runtime, tiny_model_dir, tiny_gguf_dir):
    folder = tiny_model_dir if runtime.info.kind == "torch" else tiny_gguf_dir
    engine = load_engine(settings(runtime.info.kind, folder, max_tokens=12, lookahead=0,
                                  prefill_chunk=0))  # one decode per step
    requests = [Request(PROMPT), Request("x = 1\n# add one to x\n"), Request("# print it\n")]
    alone = [engine.generate(r).token_ids for r in requests]
    for i in range(3):
        engine.open(f"s{i}")
    before = engine.counter.by_phase.get("drafting", 0)
    updates = [Update(f"s{i}", r, version=1) for i, r in enumerate(requests)]
    together = engine.update_many(updates)
    assert [c.token_ids for c in together] == alone  # type: ignore[union-attr]
    forwards = engine.counter.by_phase["drafting"] - before
    if runtime.info.kind == "llamacpp":  # one decode per step for all three sessions
        assert forwards == max(len(a) for a in alone)
    else:
        assert forwards == sum(len(a) for a in alone)


def test_an_admitted_update_joins_the_running_ones(runtime, tiny_model_dir, tiny_gguf_dir):
    folder = tiny_model_dir if runtime.info.kind == "torch" else tiny_gguf_dir
    engine = load_engine(settings(runtime.info.kind, folder, max_tokens=12, lookahead=0))
    requests = [Request(PROMPT), Request("x = 1\n# add one to x\n")]
    alone = [engine.generate(r).token_ids for r in requests]
    engine.open("first")
    engine.open("late")
    rounds, done = [], []

    def admit() -> list[Update]:  # the second joins at the third step, then a duplicate
        rounds.append(len(rounds))
        if len(rounds) == 3:
            return [Update("late", requests[1], 1), Update("late", requests[1], 1)]
        return []

    answers = engine.update_many(
        [Update("first", requests[0], 1)], lambda i, r: done.append(i), admit
    )
    assert [a.token_ids for a in answers[:2]] == alone  # type: ignore[union-attr]
    assert isinstance(answers[2], ValueError)  # a session cannot run twice at once
    assert sorted(done) == [0, 1, 2]


def test_update_many_reports_a_failure_and_serves_the_rest(runtime, tiny_model_dir, tiny_gguf_dir):
    folder = tiny_model_dir if runtime.info.kind == "torch" else tiny_gguf_dir
    engine = load_engine(settings(runtime.info.kind, folder, max_tokens=6))
    engine.open("ok")
    engine.open("old")
    engine.supersede("old", 5)
    ok, old, missing = engine.update_many(
        [Update("ok", Request(PROMPT), 1), Update("old", Request(PROMPT), 4),
         Update("never-opened", Request(PROMPT), 1)]
    )  # fmt: skip
    assert ok.finished  # type: ignore[union-attr]
    assert type(old).__name__ == "Superseded" and type(missing).__name__ == "UnknownSessionError"


# -- llama.cpp only ---------------------------------------------------------------------------


def llama_engine(folder: Path, **overrides) -> Engine:
    return load_engine(settings("llamacpp", folder, max_tokens=16, lookahead=0, **overrides))


def test_more_sessions_than_sequence_ids_evicts_the_least_recently_used(tiny_gguf_dir):
    engine = llama_engine(tiny_gguf_dir, sequences=2)
    texts = [f"x{i} = {i}\n# double x{i}\n" for i in range(3)]
    expected = [engine.generate(Request(t)).token_ids for t in texts]
    for i, text in enumerate(texts):
        engine.open(f"s{i}")
        assert engine.update(f"s{i}", Request(text), 1).token_ids == expected[i]
    assert engine._sessions["s0"].kv.sequence.length == 0  # evicted by s2
    assert engine.runtime.evictions == 1
    before = engine.counter.tokens_by_phase.get("residual", 0)
    again = engine.finalize("s0", Request(texts[0] + "# then print it\n"), 2)
    assert again.finished
    # coming back re-encoded the whole prompt (nothing was cached any more)
    assert engine.counter.tokens_by_phase["residual"] - before >= again.prompt_tokens


def test_a_full_context_evicts_idle_sessions_and_answers_stay_exact(tiny_gguf_dir):
    # cells shared by the sequences (fast numerics); invariant numerics give each its own
    engine = llama_engine(tiny_gguf_dir, context_size=256, batch_size=64, numerics="fast")
    assert engine.runtime.info.extra["numerics"] == "fast"
    texts = [PROMPT * 2, "x = 1\n# add one to x\n" * 4, "# print them\n" * 6]
    expected = [engine.generate(Request(t)).token_ids for t in texts]
    for round_ in range(2):
        for i, text in enumerate(texts):
            engine.open(f"s{i}") if round_ == 0 else None
            assert engine.update(f"s{i}", Request(text), round_ + 1).token_ids == expected[i]


def test_a_feed_longer_than_the_batch_is_chunked(tiny_gguf_dir):
    small = load_runtime(settings("llamacpp", tiny_gguf_dir, batch_size=16))
    big = load_runtime(settings("llamacpp", tiny_gguf_dir))
    tokens = list(range(20, 70))
    chunked = fresh_logits(small, tokens)
    assert chunked.shape[0] == len(tokens)
    close(big, chunked, fresh_logits(big, tokens))


def test_the_built_llama_cpp_runs_batch_invariant_and_fast_numerics_can_be_chosen(tiny_gguf_dir):
    # `make venv` builds llama.cpp without llamafile, so `auto` gets the invariant kernels
    invariant = load_runtime(settings("llamacpp", tiny_gguf_dir))
    assert invariant.info.extra["numerics"] == "invariant", invariant.info.extra["numerics_note"]
    cells = invariant.lib.llama_n_ctx_seq  # a sequence's cells
    assert cells(invariant.context) == 32768 // 8  # split between the sequences
    fast = load_runtime(settings("llamacpp", tiny_gguf_dir, numerics="fast"))
    assert fast.info.extra["numerics"] == "fast" and cells(fast.context) == 32768  # shared
    kv, tokens = KVState(invariant.open_sequence()), list(range(20, 60))
    one_by_one = torch.cat([run(invariant, kv.feed([token]))[0] for token in tokens])
    assert torch.equal(fresh_logits(invariant, tokens), one_by_one)  # a pass: one at a time


def test_a_request_longer_than_the_context_is_refused_as_on_torch(tiny_gguf_dir):
    engine = llama_engine(tiny_gguf_dir, context_size=256)
    engine.open("s")
    with pytest.raises(ContextOverflowError, match="context is 256"):
        engine.update("s", Request("x = 1\n" * 200))
    assert engine.update("s", Request("x = 1\n")).finished  # still usable


def test_one_session_larger_than_the_cells_is_a_context_error(tiny_gguf_dir):
    runtime = load_runtime(settings("llamacpp", tiny_gguf_dir, context_size=256))
    kv = KVState(runtime.open_sequence())
    with pytest.raises(ContextOverflowError, match="raise context_size"):
        run(runtime, kv.feed(list(range(1, 300))))


def test_a_full_stream_under_invariant_numerics_evicts_no_other_sequence(tiny_gguf_dir):
    # each sequence has its own cells: evicting another would free none of this one's
    runtime = load_runtime(settings("llamacpp", tiny_gguf_dir, context_size=512, sequences=2))
    assert runtime.info.extra["numerics"] == "invariant"
    kept, full = KVState(runtime.open_sequence()), KVState(runtime.open_sequence())
    run(runtime, kept.feed(list(range(1, 40))))
    with pytest.raises(ContextOverflowError, match=r"256 tokens \(context_size / 2 sequences\)"):
        run(runtime, full.feed(list(range(1, 300))))
    assert kept.sequence.length == 39  # still cached
    full.close()
    close(runtime, run(runtime, kept.feed([7]))[0], fresh_logits(runtime, [*range(1, 40), 7])[-1:])
    assert runtime.evictions == 0  # neither the overflow nor a close counts


def test_a_file_that_is_not_a_gguf_is_refused(tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(ModelFolderError, match="not a GGUF file"):
        load_engine(EngineConfig(model=str(fake), runtime="llamacpp"))


def test_a_truncated_gguf_is_refused(tiny_gguf_dir, tmp_path):
    cut = tmp_path / "cut"
    shutil.copytree(tiny_gguf_dir, cut)
    data = (cut / "tiny.gguf").read_bytes()
    (cut / "tiny.gguf").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFolderError, match="could not load"):
        load_engine(EngineConfig(model=str(cut), runtime="llamacpp"))


def test_torch_only_settings_are_refused_on_llama_cpp(tiny_gguf_dir, tiny_model_dir):
    with pytest.raises(ConfigError, match="dtype 'float64' is a torch setting"):
        load_runtime(EngineConfig(model=str(tiny_gguf_dir), runtime="llamacpp", dtype="float64"))
    with pytest.raises(ConfigError, match="drafter runs on the torch runtime"):
        load_runtime(EngineConfig(model=str(tiny_gguf_dir), runtime="llamacpp", drafter="x"))
    with pytest.raises(ConfigError, match="has none"):
        load_runtime(EngineConfig(model=str(tiny_model_dir), runtime="llamacpp"))


def test_auto_picks_llama_cpp_for_a_gguf_on_the_cpu_and_torch_otherwise(
    tiny_gguf_dir, tiny_model_dir
):
    gguf, hf = model_files.resolve(str(tiny_gguf_dir)), model_files.resolve(str(tiny_model_dir))
    expected = "torch" if torch.cuda.is_available() else "llamacpp"
    assert choose_runtime(EngineConfig(model=str(tiny_gguf_dir)), gguf) == expected
    assert choose_runtime(EngineConfig(model=str(tiny_model_dir)), hf) == "torch"
    as_torch = EngineConfig(model=str(tiny_gguf_dir), dtype="float32")
    assert choose_runtime(as_torch, gguf) == "torch"


def test_caches_beyond_the_memory_budget_are_evicted_least_recently_used_first(tiny_model_dir):
    engine = load_engine(settings("torch", tiny_model_dir, dtype="float64", max_tokens=8,
                                  lookahead=0, memory_budget_mb=1))  # fmt: skip
    texts = [f"# note {i}\n" + "values = [3, 1, 2]\n" * 24 for i in range(3)]  # ~390 tokens
    answers = [engine.generate(Request(t)).token_ids for t in texts]
    for i, text in enumerate(texts):
        engine.open(f"s{i}")
        engine.update(f"s{i}", Request(text), 1)
    held = [engine._sessions[f"s{i}"].kv.sequence.cache_bytes for i in range(3)]
    assert held[0] == 0 and held[2] > 0  # the oldest gave its cache up
    assert sum(held) <= 1 << 20 and engine.memory.evictions >= 1
    before = engine.counter.tokens_by_phase.get("residual", 0)
    back = engine.finalize("s0", Request(texts[0] + "# sorted\n"), 2)
    assert back.finished  # its draft was kept; the cache is rebuilt by this forward
    encoded = engine.counter.tokens_by_phase["residual"] - before
    assert encoded >= len(engine.prompt(Request(texts[0])).ids)
    assert engine.generate(Request(texts[0])).token_ids == answers[0]
