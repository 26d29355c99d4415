"""Lists in pieces."""


def chunks(items, size):
    """Split items into lists of at most size items, in order.
    """
    out = []
    for start in range(0, len(items), size):
        out.append(items[start:start + size])
    return out


def pairs(items):
    return chunks(items, 2)
