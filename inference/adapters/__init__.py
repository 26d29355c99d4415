"""LoRA adapters and the gated drafter, as a runtime loads them (training is in `inference.lab`)."""
