import os‸


def add(a, b):
    """Return the sum."""
