"""Adapters: save -> load gives the same logits (merged and not); a wrong one is a clear error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

from inference.adapters.adapter import (
    MANIFEST,
    apply_adapter,
    quiet_peft,
    with_adapter_settings,
    write_adapter,
)
from inference.adapters.errors import AdapterFolderError, AdapterMismatchError
from inference.cli import engine_config_from
from inference.config import EngineConfig
from inference.errors import ModelError
from inference.loading import load_engine
from inference.runtimes.torch_runtime import load_model
from lsp_server.cli import build_parser
from tests.tiny_models import build_tiny_model

pytestmark = [pytest.mark.usefixtures("one_torch_thread"), pytest.mark.timeout(60)]

IDS = torch.tensor([[5, 17, 42, 99, 7, 250, 3]])  # [1, S]
LORA = {"r": 4, "lora_alpha": 8, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"],
        "task_type": "CAUSAL_LM"}  # fmt: skip


def base(folder: Path) -> torch.nn.Module:
    return AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float64).eval()


def logits(model: torch.nn.Module) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=IDS).logits


def trained_lora(folder: Path, seed: int = 1) -> PeftModel:
    """A LoRA model whose B matrices are not zero (as after training), in eval mode."""
    torch.manual_seed(seed)
    with quiet_peft():
        model = get_peft_model(base(folder), LoraConfig(**LORA))
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(std=0.2)
    return model.eval()  # type: ignore[return-value]


def variant(folder: Path, source: Path, **changes) -> Path:
    """A random model like `source` with some config values changed (same tokenizer)."""
    config = LlamaConfig.from_pretrained(source)
    for key, value in changes.items():
        setattr(config, key, value)
    LlamaForCausalLM(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(source).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def adapter(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    """A saved adapter for the tiny model and the logits of the model it was saved from."""
    model = trained_lora(tiny_model_dir)
    folder = tmp_path_factory.mktemp("adapter")
    manifest = {"base_model": "tiny", "prompt_format": "chat", "system_prompt": "Be brief."}
    write_adapter(model, folder, manifest)
    return folder, logits(model)


def test_saved_adapter_loads_to_identical_logits(tiny_model_dir: Path, adapter) -> None:
    folder, expected = adapter
    unmerged = apply_adapter(base(tiny_model_dir), str(folder), "tiny", merge=False)
    assert isinstance(unmerged, PeftModel)
    assert torch.equal(logits(unmerged), expected)
    merged = load_model(
        str(tiny_model_dir), torch.device("cpu"), torch.float64, adapter=str(folder)
    )
    assert type(merged.model) is LlamaForCausalLM  # merged: no LoRA layers left at run time
    assert torch.allclose(logits(merged.model), expected, rtol=0, atol=1e-10)
    assert not torch.allclose(logits(base(tiny_model_dir)), expected, atol=1e-3)  # it matters


def test_the_engine_loads_the_adapter_from_its_config(tiny_model_dir: Path, adapter) -> None:
    folder, expected = adapter
    config = EngineConfig(model=str(tiny_model_dir), adapter=str(folder), dtype="float64")
    engine = load_engine(config)
    model = engine.runtime.loaded.model  # type: ignore[attr-defined]
    assert torch.allclose(logits(model), expected, rtol=0, atol=1e-10)


def test_an_adapter_for_another_shape_is_refused(
    tiny_model_dir: Path, adapter, tmp_path: Path
) -> None:
    folder, _ = adapter
    narrow = variant(tmp_path / "narrow", tiny_model_dir, hidden_size=32, intermediate_size=64)
    with pytest.raises(AdapterMismatchError, match="hidden_size is 32, the adapter expects 64"):
        load_model(str(narrow), torch.device("cpu"), torch.float64, adapter=str(folder))
    foreign = tmp_path / "foreign"  # no prewrite manifest: peft's own shape check speaks
    shutil.copytree(folder, foreign)
    (foreign / MANIFEST).unlink()
    with pytest.raises(AdapterMismatchError, match="does not fit .*size mismatch"):
        apply_adapter(base(narrow), str(foreign), "narrow")


def test_an_adapter_for_other_weights_is_refused(adapter, tmp_path: Path) -> None:
    folder, _ = adapter
    other = build_tiny_model(tmp_path / "other", seed=1)  # same shapes, other weights
    with pytest.raises(AdapterMismatchError, match="trained on tiny, not on .*different weights"):
        apply_adapter(base(other), str(folder), str(other))


def test_an_adapter_for_a_deeper_model_is_refused(tiny_model_dir: Path, tmp_path: Path) -> None:
    deeper = variant(tmp_path / "deeper", tiny_model_dir, num_hidden_layers=3)
    trained_lora(deeper).save_pretrained(tmp_path / "adapter")  # peft only, no manifest
    with pytest.raises(AdapterMismatchError, match="saved tensors have no place"):
        apply_adapter(base(tiny_model_dir), str(tmp_path / "adapter"), "tiny")


def test_a_missing_or_incomplete_adapter_folder_is_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(AdapterFolderError, match="does not exist") as missing:
        with_adapter_settings({"adapter": str(tmp_path / "nowhere")})
    assert isinstance(missing.value, ModelError)
    with pytest.raises(AdapterFolderError, match="no adapter_config.json"):
        with_adapter_settings({"adapter": str(tmp_path)})


def test_the_adapters_prompt_settings_fill_in_defaults_only(adapter) -> None:
    folder, _ = adapter
    filled = with_adapter_settings({"adapter": str(folder), "prompt_format": "auto"})
    assert (filled["prompt_format"], filled["system_prompt"]) == ("chat", "Be brief.")
    given = {"adapter": str(folder), "prompt_format": "raw", "system_prompt": "Mine."}
    assert with_adapter_settings(given) == given
    args = build_parser().parse_args(["bench", "--adapter", str(folder)])
    assert engine_config_from(args)["adapter"] == str(folder)
    assert engine_config_from(build_parser().parse_args(["bench"])).get("adapter") is None


def test_the_server_worker_loads_the_adapters_prompt_settings(
    tiny_model_dir: Path, adapter, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lsp_server.worker import _load_engine

    loaded: list[EngineConfig] = []
    monkeypatch.setattr("inference.loading.load_engine", loaded.append)
    folder, _ = adapter
    _load_engine(EngineConfig(model=str(tiny_model_dir), adapter=str(folder)))
    _load_engine(EngineConfig(model=str(tiny_model_dir), adapter=str(folder), prompt_format="raw"))
    assert (loaded[0].prompt_format, loaded[0].system_prompt) == ("chat", "Be brief.")
    assert (loaded[1].prompt_format, loaded[1].system_prompt) == ("raw", "Be brief.")


def test_an_adapter_runs_on_llama_cpp_as_a_gguf_lora(tiny_gguf_dir: Path, adapter) -> None:
    """Converted once to a GGUF LoRA, it gives llama.cpp the logits of the merged model."""
    from inference.adapters.gguf import GGUF_LORA
    from inference.engine.kvcache import KVState, run_alone

    folder, expected = adapter
    config = EngineConfig(model=str(tiny_gguf_dir), adapter=str(folder), runtime="llamacpp")
    runtime = load_engine(config).runtime
    assert runtime.info.kind == "llamacpp" and (folder / GGUF_LORA).is_file()
    kv = KVState(runtime.open_sequence())
    rows, _ = run_alone(kv.feed(IDS[0].tolist()), runtime.forward)
    # float32 weights, float16 KV cache: within 2e-2 of the float64 merged model
    torch.testing.assert_close(rows.double(), expected[0], rtol=0, atol=2e-2)
    stamp = (folder / GGUF_LORA).stat().st_mtime_ns
    load_engine(config)  # a second load reuses the converted file
    assert (folder / GGUF_LORA).stat().st_mtime_ns == stamp


def test_an_adapter_for_another_model_is_refused_on_llama_cpp(
    tiny_gguf_dir: Path, adapter, tmp_path: Path
) -> None:
    folder, _ = adapter
    other = build_tiny_model(tmp_path / "other", seed=5)
    from tests.tiny_models import write_tiny_gguf

    other_gguf = write_tiny_gguf(other, tmp_path / "other-gguf")
    with pytest.raises(AdapterMismatchError, match="embedding signature differs"):
        load_engine(EngineConfig(model=str(other_gguf), adapter=str(folder), runtime="llamacpp"))
