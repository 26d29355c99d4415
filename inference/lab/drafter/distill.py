"""Diffusion distillation in one forward: clean text (teacher) and noisy blocks (student) together.

A training sequence is the clean prompt + answer (L tokens, gate closed) followed by noisy
slots (gate open). A block is anchored at a clean position P, as at inference, where the
last committed token sits at P and B-1 noise tokens follow it: the slot at position q
(P < q < P + B) sees the clean tokens up to P and the slots of its block up to itself, and
predicts the token after q. Its teacher is the AR model at clean position q, which predicts
the same token from the true prefix. Teacher and student come out of the same forward
(the seed's gated-LoRA trick); a custom 4D mask keeps every block to its own context, and
slots reuse the position ids of the clean tokens they stand for.

The loss per slot is a * KL(teacher || student) + b * TV(teacher, student) (the seed's
ablation favours TV with the KL weighted 0.01).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import DynamicCache

from inference.adapters.gate import PositionGate
from inference.lab.adapt.batches import Feature


@dataclass
class DistillSequence:
    """One forward's tensors: clean tokens then noisy slots, and where teacher/student sit."""

    input_ids: torch.Tensor  # [1, T]
    position_ids: torch.Tensor  # [1, T]
    attention_mask: torch.Tensor  # [1, 1, T, T] bool, True = may attend
    gate: torch.Tensor  # [1, T] bool, True at noisy slots
    keep: torch.Tensor  # [2N] indices: the N teacher positions, then the N slots

    @property
    def slots(self) -> int:
        """Noisy positions that carry loss."""
        return int(self.keep.numel() // 2)


def anchors(answer_start: int, length: int, block: int, offset: int) -> list[int]:
    """Clean anchor positions P tiling the answer: a-1+offset, then every `block` positions."""
    first = answer_start - 1 + offset
    return list(range(first, length - 1, block))


def build_sequence(
    feature: Feature, block: int, noise_id: int, offset: int, device: torch.device
) -> DistillSequence | None:
    """The layout of one feature for block size B = `block`; None when no slot fits."""
    ids = feature.ids
    length = len(ids)
    slots: list[tuple[int, int]] = []  # (anchor P, position q)
    for anchor in anchors(feature.answer_start, length, block, offset):
        slots += [(anchor, q) for q in range(anchor + 1, min(anchor + block, length))]
    if not slots:
        return None
    total = length + len(slots)
    mask = torch.zeros((total, total), dtype=torch.bool)
    mask[:length, :length] = torch.tril(torch.ones((length, length), dtype=torch.bool))
    for i, (anchor, q) in enumerate(slots):
        row = length + i
        mask[row, : anchor + 1] = True
        first = i - (q - anchor - 1)  # index of the block's first slot
        mask[row, length + first : row + 1] = True
    positions = list(range(length)) + [q for _, q in slots]
    gate = torch.zeros((1, total), dtype=torch.bool)
    gate[0, length:] = True
    keep = [q for _, q in slots] + list(range(length, total))
    return DistillSequence(
        torch.tensor([ids + [noise_id] * len(slots)], device=device),
        torch.tensor([positions], device=device),
        mask[None, None].to(device),
        gate.to(device),
        torch.tensor(keep, device=device),
    )


def distill_loss(
    model: torch.nn.Module,
    gate: PositionGate,
    sequence: DistillSequence,
    kl_weight: float,
    tv_weight: float,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Summed loss over the sequence's slots, and the summed KL and TV for logging.

    Computed in two passes that give the one-forward layout's numbers: the clean tokens
    without gradients (teacher logits, and the keys and values the slots attend to), then
    the slots on top of that cache with the gate open. Nothing trainable acts on clean
    positions, so the backward pass only runs over the slots.
    """
    n = sequence.slots
    clean_length = sequence.input_ids.shape[1] - n
    cache = DynamicCache()
    with torch.no_grad():
        teacher_out = model(
            input_ids=sequence.input_ids[:, :clean_length],
            cache=cache,
            use_cache=True,
            logits_to_keep=sequence.keep[:n],
        )
    teacher = torch.log_softmax(teacher_out.logits[0].float(), dim=-1)  # [N, V]
    with gate.open_at(sequence.gate[:, clean_length:]):
        out = model(
            input_ids=sequence.input_ids[:, clean_length:],
            position_ids=sequence.position_ids[:, clean_length:],
            attention_mask=sequence.attention_mask[:, :, clean_length:, :],
            cache=cache,
            use_cache=True,
        )
    student = torch.log_softmax(out.logits[0].float(), dim=-1)  # [N, V]
    p = teacher.exp()
    kl = (p * (teacher - student)).sum(dim=-1)  # [N]
    tv = 0.5 * (p - student.exp()).abs().sum(dim=-1)  # [N]
    loss = kl_weight * kl.sum() + tv_weight * tv.sum()
    return loss, {"kl": float(kl.sum().detach()), "tv": float(tv.sum().detach())}


def block_for(step: int, steps: int, blocks: tuple[int, ...]) -> int:
    """The curriculum: the block sizes in turn, each for an equal share of the steps."""
    stage = min(step * len(blocks) // max(steps, 1), len(blocks) - 1)
    return blocks[stage]
