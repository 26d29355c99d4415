"""Training sequences: prompt + answer tokens, left-padded batches, and the loss on the answer only.

Prompts are built by the engine's `PromptBuilder`, so training sees exactly the tokens the
engine sends; the answer tokens follow them unchanged. Batches are padded on the left with
explicit position ids, so every answer ends at the last position and only the last K logits
(K = longest answer + 1) are computed: the vocabulary projection is not paid on prompts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from transformers import PreTrainedTokenizerBase

from inference.api import Request
from inference.engine.prompting import PromptBuilder
from inference.errors import RequestError
from inference.lab.adapt.errors import DatasetError

IGNORE = -100  # label of positions that carry no loss


@dataclass(frozen=True)
class Feature:
    """One training sequence: prompt and answer token ids, and where the answer starts."""

    row_id: str
    ids: list[int]
    answer_start: int

    @property
    def answer_tokens(self) -> int:
        """How many tokens carry loss."""
        return len(self.ids) - self.answer_start


@dataclass
class Batch:
    """Left-padded tensors for one forward, with labels for the last `keep` positions."""

    input_ids: torch.Tensor  # [B, S]
    attention_mask: torch.Tensor  # [B, S]
    position_ids: torch.Tensor  # [B, S]
    labels: torch.Tensor  # [B, keep]: the token each kept position predicts, or IGNORE
    keep: int

    @property
    def tokens(self) -> int:
        """Answer tokens in the batch."""
        return int((self.labels != IGNORE).sum())


def make_features(
    rows: Sequence[dict[str, Any]],
    builder: PromptBuilder,
    max_length: int,
    counts: Counter[str],
) -> list[Feature]:
    """Tokenised rows; rows longer than `max_length` are skipped and counted."""
    tokenizer = builder.tokenizer
    vocab = len(tokenizer)
    features = []
    for row in rows:
        try:
            prompt = builder.build(Request(row["prompt"])).ids
        except RequestError as exc:
            raise DatasetError(f"row {row['id']}: the prompt cannot be built: {exc}") from exc
        answer = row.get("answer_ids") or reference_ids(tokenizer, row["answer"], builder)
        if max(answer) >= vocab:
            raise DatasetError(f"row {row['id']}: token id {max(answer)} is outside the vocabulary")
        if len(prompt) + len(answer) > max_length:
            counts["rows longer than max length"] += 1
            continue
        features.append(Feature(row["id"], list(prompt) + list(answer), len(prompt)))
    return features


def reference_ids(
    tokenizer: PreTrainedTokenizerBase, answer: str, builder: PromptBuilder
) -> list[int]:
    """A written answer's tokens with an end: EOS after a raw body (chat ends at its fence)."""
    ids = list(tokenizer(answer, add_special_tokens=False)["input_ids"])
    if builder.prompt_format != "chat" and tokenizer.eos_token_id is not None:
        ids.append(int(tokenizer.eos_token_id))
    return ids


def collate(features: Sequence[Feature], pad_id: int, device: torch.device) -> Batch:
    """Left-pad features into one batch; labels cover the last `keep` positions."""
    width = max(len(f.ids) for f in features)
    keep = max(f.answer_tokens for f in features) + 1  # + the position after the last token
    input_ids = torch.full((len(features), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(features), width), dtype=torch.long)
    labels = torch.full((len(features), keep), IGNORE, dtype=torch.long)
    for b, feature in enumerate(features):
        offset = width - len(feature.ids)
        input_ids[b, offset:] = torch.tensor(feature.ids)
        mask[b, offset:] = 1
        answer = torch.tensor(feature.ids[feature.answer_start :])
        # kept position j sits at width - keep + j and predicts the token after it: the
        # answer's tokens are predicted by the `len(answer)` positions before the last one
        labels[b, keep - 1 - len(answer) : keep - 1] = answer
    positions = (mask.cumsum(dim=1) - 1).clamp(min=0)  # each sequence starts at position 0
    return Batch(
        input_ids.to(device), mask.to(device), positions.to(device), labels.to(device), keep
    )


def answer_loss(model: torch.nn.Module, batch: Batch) -> torch.Tensor:
    """Summed cross-entropy over the batch's answer tokens (divide by the step's token count)."""
    out = model(
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=batch.position_ids,
        logits_to_keep=batch.keep,
        use_cache=False,
    )
    logits = out.logits  # [B, keep, V]; the loss in at least float32 (bfloat16 on CUDA)
    logits = logits.to(torch.promote_types(logits.dtype, torch.float32))
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), batch.labels.reshape(-1),
        ignore_index=IGNORE, reduction="sum",
    )  # fmt: skip
