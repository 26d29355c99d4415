def add(a, b):
    """Return the sum."""


x = add(1, 2)‸
