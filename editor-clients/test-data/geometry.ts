// Small helpers for points in the plane.

export type Point = [number, number];

export const ORIGIN: Point = [0, 0];
