"""Small helpers for points in the plane."""

import math


def distance(a, b):
    """Return the Euclidean distance between the points a and b."""
    return math.hypot(a[0] - b[0], a[1] - b[1])


