"""Small helpers for points in the plane."""

import math

ORIGIN = (0.0, 0.0)


