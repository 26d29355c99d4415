"""The llama.cpp conventional request: llama-cpp-python's greedy decoding at the trigger.

As llama-server serves llama.vim: the slot keeps the previous request's prompt cached, so a new
request encodes only what changed, then decodes the whole answer. The same GGUF, the same
prompt tokens and the same stop rule as the engine, so its answers compare with the engine's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from inference.api import Request
from inference.config import EngineConfig
from inference.loading import load_engine
from inference.runtimes import model_files


@dataclass(frozen=True)
class ConventionalAnswer:
    """What the conventional request cost and said."""

    ms: float  # request to answer: the changed prompt tokens encoded, the answer decoded
    tokens: list[int]
    text: str


class LlamaConventional:
    """llama-cpp-python's `Llama` on the engine's GGUF, with the engine's prompts and stop rule.

    By default on llama.cpp's fast kernels, as a user of llama.cpp runs it (the baseline to
    time); with `same_numerics` on the kernels the engine runs, batch-invariant where it is, so
    that its greedy answers are the ones exact streaming must give, token for token.
    """

    def __init__(self, config: EngineConfig, same_numerics: bool = False):
        from inference.runtimes.llamacpp_runtime import library_llama

        self.engine = load_engine(config.model_copy(update={"runtime": "llamacpp"}))
        gguf = model_files.resolve(config.model).gguf
        info = self.engine.runtime.info
        self.engine_invariant = info.extra.get("numerics") == "invariant"
        invariant = same_numerics and self.engine_invariant
        self.llm = library_llama(gguf, config, info.threads, invariant)

    def answer(self, final: Request, cached: Request | None = None) -> ConventionalAnswer:
        """Time `final`'s answer with `cached`'s prompt in the cache (encoded, not timed)."""
        prompt = self.engine.prompt(final)
        self.llm.reset()
        if cached is not None:
            self.llm.eval(self.engine.prompt(cached).ids)
        stop = self.engine.stop_rule(prompt)
        state, tokens = stop.start, []
        started = time.perf_counter()
        for token in self.llm.generate(prompt.ids, temp=0.0, repeat_penalty=1.0, reset=True):
            tokens.append(int(token))
            state, done = stop.advance(state, int(token), len(tokens))
            if done:
                break
        ms = (time.perf_counter() - started) * 1000.0
        text, _ = self.engine.answer_text(prompt, tokens)
        return ConventionalAnswer(ms, tokens, text)

    def close(self) -> None:
        """Free both models."""
        self.llm.close()
        self.engine.shutdown()
