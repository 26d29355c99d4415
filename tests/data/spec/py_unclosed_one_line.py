import math


def circle_area(radius: float) -> float:
    """Return the area of a circle with the given radius‸


def main():
    print(circle_area(2.0))
