def clamp(x: float, lo: float, hi: float) -> float:
    """Clamp x into [lo, hi].
    Raise ValueError when lo > hi‸

def after():
    """A later docstring must not close the one above."""
