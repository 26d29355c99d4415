"""Exact streaming held to decoders that share none of its code, token for token.

The engine's own `generate` shares the prompt, the runtime and the stop code with streaming, so
a bug in both would pass a comparison with it. Here each session's spec is streamed in steps
and the answer compared with plain greedy decoding done by another program on the same final
prompt: llama-cpp-python's own `Llama` (qwen2.5-coder-0.5b, the same batch-invariant kernels)
and transformers' `generate` (smollm2-135m, float32). vLLM's own completion is the reference in
tests/inference/runtimes/test_vllm_runtime.py, on the same sessions. The engine's stop rule, a
function of the answer's text alone, says where each reference's answer ends.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from inference.api import Request
from inference.config import EngineConfig
from inference.engine import Engine
from inference.loading import load_engine
from tests.references import check_identical

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(1200)]

@pytest.fixture(scope="module")
def qwen_llamacpp(code_model_name: str) -> Iterator[Engine]:
    engine = load_engine(
        EngineConfig(model=code_model_name, runtime="llamacpp", max_tokens=64, threads=2)
    )
    assert engine.runtime.info.extra["numerics"] == "invariant"  # as `make venv` builds it
    yield engine
    engine.shutdown()


def test_llamacpp_streaming_equals_llama_cpp_pythons_own_greedy(qwen_llamacpp: Engine) -> None:
    """qwen2.5-coder-0.5b: the engine's streamed answers against `Llama.generate` at temp 0."""
    from inference.runtimes import model_files
    from inference.runtimes.llamacpp_runtime import library_llama

    engine = qwen_llamacpp
    gguf = model_files.resolve(engine.config.model).gguf
    llm = library_llama(gguf, engine.config, engine.runtime.info.threads, invariant=True)

    def llama_greedy(request: Request, max_tokens: int) -> list[int]:
        tokens: list[int] = []
        ids = engine.prompt(request).ids
        for token in llm.generate(ids, temp=0.0, repeat_penalty=1.0, reset=True):
            tokens.append(int(token))
            if len(tokens) == max_tokens or token == llm.token_eos():
                break
        return tokens

    try:
        check_identical(engine, llama_greedy)
    finally:
        llm.close()


def test_torch_streaming_equals_transformers_generate(real_model_name: str) -> None:
    """smollm2-135m, float32: the engine's streamed answers against `generate(do_sample=False)`,
    on the Python sessions at even places (vLLM's test takes the others)."""
    import torch
    from transformers import AutoModelForCausalLM

    from inference import packs

    engine = load_engine(
        EngineConfig(
            model=real_model_name, runtime="torch", dtype="float32", prompt_format="chat",
            max_tokens=48, threads=2,
        )
    )  # fmt: skip
    model = AutoModelForCausalLM.from_pretrained(
        packs.installed_path(real_model_name), dtype=torch.float32
    ).eval()

    def hf_greedy(request: Request, max_tokens: int) -> list[int]:
        ids = torch.tensor([engine.prompt(request).ids])
        with torch.inference_mode():
            out = model.generate(
                ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_tokens,
                do_sample=False, pad_token_id=model.config.eos_token_id,
            )  # fmt: skip
        return [int(t) for t in out[0, ids.shape[1] :]]

    try:
        check_identical(engine, hf_greedy, language="python", half=0)  # vLLM: half 1
    finally:
        engine.shutdown()
