class Point:
    """A point in the plane.‸"""
