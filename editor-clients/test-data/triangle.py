"""Right triangles."""

import math


