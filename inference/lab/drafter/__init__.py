"""Uno-style parallel drafter: a per-position gated LoRA inside the same model drafts blocks."""
