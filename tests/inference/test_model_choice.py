"""`model: auto`: which pack it stands for on which machine, and that loading resolves it."""

from __future__ import annotations

import pytest

from inference import model_choice
from inference.config import EngineConfig
from inference.loading import resolve_model
from inference.model_choice import LARGER_MODEL, Choice, Machine, choose
from inference.packs import AUTO_MODEL, DEFAULT_MODEL

AVX512 = frozenset({"sse4_2", "avx2", "avx512f", "avx512bw"})
AVX2 = frozenset({"sse4_2", "avx2"})


def everything_installed(name: str) -> bool:
    return True


def test_the_larger_model_where_llama_cpp_has_avx512_and_two_cores():
    assert choose(Machine(AVX512, 2, False), everything_installed) == Choice(
        LARGER_MODEL, "AVX-512 and 2 cores"
    )
    assert choose(Machine(frozenset(), 1, True), everything_installed).model == LARGER_MODEL


@pytest.mark.parametrize(
    ("machine", "why"),
    [
        (Machine(AVX2, 16, False), "no AVX-512, 16 cores"),
        (Machine(AVX512, 1, False), "AVX-512, 1 cores"),
        (Machine(frozenset(), 4, False), "no AVX-512, 4 cores"),
    ],
)
def test_the_default_model_where_the_larger_one_falls_behind_typing(machine: Machine, why: str):
    choice = choose(machine, everything_installed)
    assert choice.model == DEFAULT_MODEL and why in choice.why and "too slow" in choice.why


def test_a_larger_model_not_installed_is_named_with_its_install_command():
    choice = choose(Machine(AVX512, 2, False), lambda name: name != LARGER_MODEL)
    assert choice.model == DEFAULT_MODEL
    assert f"prewrite models install {LARGER_MODEL}" in choice.why


def test_torch_on_a_cpu_and_the_vllm_runtime_keep_the_default_model():
    fast = Machine(AVX512, 8, False)
    assert choose(fast, everything_installed, runtime="torch").model == DEFAULT_MODEL
    assert choose(fast, everything_installed, runtime="llamacpp").model == LARGER_MODEL
    gpu = Machine(AVX512, 8, True)
    assert choose(gpu, everything_installed, runtime="torch").model == LARGER_MODEL
    assert choose(gpu, everything_installed, runtime="vllm").model == DEFAULT_MODEL


def test_the_settings_default_is_auto_and_loading_resolves_it(monkeypatch: pytest.MonkeyPatch):
    assert EngineConfig().model == AUTO_MODEL
    monkeypatch.setattr(model_choice, "_cpu_flags", lambda: AVX2)
    monkeypatch.setattr(model_choice, "_cuda", lambda: False)
    config, why = resolve_model(EngineConfig(max_tokens=7))
    assert config.model == DEFAULT_MODEL and config.max_tokens == 7
    assert why.startswith("auto: ") and "too slow" in why
    named = EngineConfig(model="smollm2-135m")
    assert resolve_model(named) == (named, "as set")  # a named model is never replaced


def test_this_machines_flags_are_read_from_proc_cpuinfo():
    flags = model_choice._cpu_flags()
    assert not flags or "fpu" in flags  # x86: the flags line; elsewhere none
