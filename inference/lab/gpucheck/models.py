"""Random-weight Qwen2 models of real Qwen2.5-Coder sizes, with a self-made tokenizer: no download.

What a property or a timing needs of a model is its shape, not its weights: these models have the
real configurations (layers, widths, heads, vocabulary) and random weights, built on the device
itself, so that nothing but this code travels to a GPU machine. The tokenizer is a byte-level BPE
trained here on the standard library's source, with Qwen's special tokens; the embedding rows
past it are zero, so greedy decoding only ever picks tokens the tokenizer can decode while every
forward still computes the full vocabulary's logits.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import torch
from transformers import (
    AutoModelForCausalLM,
    PreTrainedModel,
    PreTrainedTokenizerFast,
    Qwen2Config,
)

# Qwen's special tokens that the engine looks for (EOS, fill-in-the-middle, its stops)
SPECIAL = ["<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
           "<|repo_name|>", "<|file_sep|>", "<|im_start|>", "<|im_end|>"]  # fmt: skip

_QWEN2 = {
    "max_position_embeddings": 32768,
    "rope_theta": 1000000.0,
    "rms_norm_eps": 1e-6,
    "hidden_act": "silu",
    "initializer_range": 0.02,
    "use_sliding_window": False,
    "max_window_layers": 28,
}
# The configurations of Qwen/Qwen2.5-Coder-1.5B and -7B (config.json on the hub; the Instruct
# models share them). The 7B's vocabulary is padded to 152064 rows, the smaller models' to 151936.
SHAPES: dict[str, dict[str, Any]] = {
    "qwen2.5-coder-1.5b": {
        **_QWEN2, "hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 28,
        "num_attention_heads": 12, "num_key_value_heads": 2, "vocab_size": 151936,
        "tie_word_embeddings": True,
    },
    "qwen2.5-coder-7b": {
        **_QWEN2, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
        "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
        "tie_word_embeddings": False,
    },
}  # fmt: skip
# The dry run's stand-ins keep the vocabulary and the tied or untied embeddings; two narrow layers.
# At the real init (std 0.02) two tied layers of width 64 repeat their last input token forever
# (the output embedding is the input one); std 0.1 makes their answers vary with the context, as
# the real shapes' do at 0.02 (28 layers of 1536: 11 distinct tokens in 12, float32 on a CPU).
TINY = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "initializer_range": 0.1}  # fmt: skip


def tiny_shape(shape: dict[str, Any]) -> dict[str, Any]:
    """`shape` scaled down for a CPU (the same vocabulary and embedding ties)."""
    return {**shape, **TINY}


def shape_params(shape: dict[str, Any]) -> int:
    """The parameter count of a shape (embeddings counted once when tied)."""
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(qwen2_config(shape, eos_id=0))
    return sum(p.numel() for p in model.parameters())


def qwen2_config(shape: dict[str, Any], eos_id: int) -> Qwen2Config:
    """The transformers configuration of `shape`, its EOS the tokenizer's."""
    return Qwen2Config(**shape, eos_token_id=eos_id, bos_token_id=None, sliding_window=None)


def build_tokenizer(vocab_size: int = 4096) -> PreTrainedTokenizerFast:
    """A byte-level BPE trained on a few standard-library modules' source, with Qwen's specials."""
    import argparse
    import dataclasses
    import string
    import textwrap

    corpus = [inspect.getsource(m) for m in (argparse, dataclasses, string, textwrap)]
    return byte_level_bpe(corpus, vocab_size, SPECIAL)


def byte_level_bpe(
    corpus: list[str], vocab_size: int, special: list[str]
) -> PreTrainedTokenizerFast:
    """A byte-level BPE of `vocab_size` trained on `corpus`; the first special token is EOS."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token=special[0])


def random_model(
    shape: dict[str, Any],
    tokenizer: PreTrainedTokenizerFast,
    device: torch.device,
    dtype: torch.dtype,
    seed: int = 0,
) -> PreTrainedModel:
    """A Qwen2 causal LM of `shape` with random weights, initialised on `device` in `dtype`."""
    torch.manual_seed(seed)
    config = qwen2_config(shape, eos_id=int(tokenizer.eos_token_id))
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    known = len(tokenizer)
    with torch.no_grad():  # rows the tokenizer cannot decode: logit 0, below the real tokens' max
        model.get_output_embeddings().weight[known:] = 0.0
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model.eval()


def write_folder(model: PreTrainedModel, tokenizer: PreTrainedTokenizerFast, folder: Path) -> Path:
    """`model` and its tokenizer as a Hugging Face folder that `prewrite serve` can load."""
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
