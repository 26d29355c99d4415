// Small helpers for points in the plane.

export type Point = [number, number];

/** Return the Euclidean distance between the points a and b. */
export function distance(a: Point, b: Point): number {
  return Math.hypot(a[0] - b[0], a[1] - b[1]);
}
