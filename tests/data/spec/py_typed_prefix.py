def double(x: int) -> int:
    """Return x doubled."""
    ret‸
