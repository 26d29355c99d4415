"""Tiny random-weight causal LMs with a real tokenizer, built offline from a config.

The same model is written as a Hugging Face folder (the torch runtime) and as a float32 GGUF
(the llama.cpp runtime), so that properties that hold for any model are tested on both.
"""

from __future__ import annotations

import inspect
import json
import shutil
import string
import textwrap
from pathlib import Path

import gguf
import numpy as np
import torch
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from inference.config import EngineConfig
from inference.lab.gpucheck.models import byte_level_bpe

SPECIAL = ["<|endoftext|>", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"]


def build_tokenizer(vocab_size: int = 400) -> PreTrainedTokenizerFast:
    """A byte-level BPE trained on a small code corpus, with EOS and FIM tokens."""
    corpus = inspect.getsource(textwrap) + inspect.getsource(string)  # stdlib: on every machine
    return byte_level_bpe([corpus], vocab_size, SPECIAL)


def build_tiny_model(folder: Path, seed: int = 0, max_positions: int = 512) -> Path:
    """Save a 2-layer random Llama (float64-friendly) and its tokenizer into `folder`."""
    tokenizer = build_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    with torch.no_grad():  # sharper logits than the default init, so greedy choices are clear
        model.lm_head.weight.mul_(25.0)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_settings(runtime: str, folder: Path, **overrides) -> EngineConfig:
    """Engine settings for a tiny model on `runtime`: one thread, float32 weights on torch."""
    values = {"model": str(folder), "runtime": runtime, "threads": 1}
    if runtime == "torch":
        values["dtype"] = "float32"
    return EngineConfig(**{**values, **overrides})


def write_tiny_gguf(model_dir: Path, out: Path) -> Path:
    """A folder with the tiny model as a float32 GGUF, its tokenizer and configs (no safetensors).

    Tensors are named and laid out as llama.cpp's converter does for a Llama.
    """
    out.mkdir(parents=True, exist_ok=True)
    kept = ("tokenizer.json", "tokenizer_config.json", "config.json", "generation_config.json")
    for name in kept:
        if (model_dir / name).exists():
            shutil.copy(model_dir / name, out / name)
    model = LlamaForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    config = model.config
    writer = gguf.GGUFWriter(out / "tiny.gguf", "llama")
    writer.add_name("tiny-llama")
    writer.add_file_type(int(gguf.LlamaFileType.ALL_F32))
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(config.num_attention_heads)
    writer.add_head_count_kv(config.num_key_value_heads)
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_rope_freq_base(float(config.rope_parameters["rope_theta"]))
    writer.add_rope_dimension_count(config.hidden_size // config.num_attention_heads)
    writer.add_vocab_size(config.vocab_size)
    _add_tokenizer(writer, model_dir / "tokenizer.json", config.vocab_size, config.eos_token_id)
    for name, tensor in _gguf_tensors(model).items():
        writer.add_tensor(name, tensor)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


def _add_tokenizer(writer: gguf.GGUFWriter, path: Path, vocab_size: int, eos: int) -> None:
    spec = json.loads(path.read_text())
    tokens, types = [""] * vocab_size, [int(gguf.TokenType.NORMAL)] * vocab_size
    for text, index in spec["model"]["vocab"].items():
        tokens[index] = text
    for added in spec.get("added_tokens", []):
        tokens[added["id"]] = added["content"]
        types[added["id"]] = int(gguf.TokenType.CONTROL)
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_eos_token_id(eos)
    writer.add_add_bos_token(False)


def _gguf_tensors(model: LlamaForCausalLM) -> dict[str, np.ndarray]:
    config = model.config
    weights = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    tensors = {
        "token_embd.weight": weights["model.embed_tokens.weight"],
        "output_norm.weight": weights["model.norm.weight"],
        "output.weight": weights["lm_head.weight"],
    }
    names = {"self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down",
             "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm"}  # fmt: skip
    for i in range(config.num_hidden_layers):
        layer = f"model.layers.{i}."
        q, k = (weights[f"{layer}self_attn.{x}_proj.weight"] for x in "qk")
        tensors[f"blk.{i}.attn_q.weight"] = _rope_permute(q, config.num_attention_heads)
        tensors[f"blk.{i}.attn_k.weight"] = _rope_permute(k, config.num_key_value_heads)
        for hf_name, gguf_name in names.items():
            tensors[f"blk.{i}.{gguf_name}.weight"] = weights[layer + hf_name + ".weight"]
    return tensors


def _rope_permute(weight: np.ndarray, heads: int) -> np.ndarray:
    """Rows of q/k from transformers' rotate-half order to llama.cpp's interleaved pairs."""
    shape = weight.shape
    pairs = weight.reshape(heads, 2, shape[0] // heads // 2, *shape[1:])
    return pairs.swapaxes(1, 2).reshape(shape)
