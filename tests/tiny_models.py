"""Tiny random-weight causal LMs with a real tokenizer, built offline from a config."""

from __future__ import annotations

import inspect
import string
import textwrap
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

SPECIAL = ["<|endoftext|>", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"]


def build_tokenizer(vocab_size: int = 400) -> PreTrainedTokenizerFast:
    """A byte-level BPE trained on a small code corpus, with EOS and FIM tokens."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    corpus = inspect.getsource(textwrap) + inspect.getsource(string)  # stdlib: on every machine
    tokenizer.train_from_iterator([corpus], trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|endoftext|>")


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
