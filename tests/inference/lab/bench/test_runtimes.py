"""`prewrite bench runtimes` (`inference/lab/bench/runtimes.py`): each runtime's forward costs."""

from __future__ import annotations

import pytest

from tests.tiny_models import tiny_settings as settings

pytestmark = pytest.mark.timeout(60)

PROMPT = "values = [3, 1, 2]\n# sort the values in place and print them\n"


@pytest.mark.parametrize("kind", ["torch", "llamacpp"])
def test_the_runtimes_benchmark_measures_each_runtime(kind, tiny_model_dir, tiny_gguf_dir):
    from inference.lab.bench.runtimes import format_figures, measure_runtime

    folder = tiny_model_dir if kind == "torch" else tiny_gguf_dir
    prompts = [PROMPT, "def add(a, b):\n    # return the sum\n", "text = 'abc'\n# reverse it\n"]
    figures = measure_runtime(
        settings(kind, folder, max_tokens=6), prompts, sizes=[1, 4], prefix_tokens=8,
        repeats=2,
    )  # fmt: skip
    assert figures.runtime == kind and set(figures.forward_ms) == {1, 4}
    assert all(ms > 0 for ms in figures.forward_ms.values())
    assert figures.batched_ms > 0 and figures.separate_ms > 0
    assert figures.decoded_tokens > 0 and figures.prompts == 3
    if kind == "llamacpp":  # llama-cpp-python's own greedy decodes the very same tokens
        assert figures.answers_agree == 3 and figures.library_decode_ms_per_token > 0
    table = format_figures([figures])
    assert f"| {kind} (1 threads) |" in table and "one call / four" in table
