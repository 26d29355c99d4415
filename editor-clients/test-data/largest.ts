/** The largest number in xs. */
export function largest(xs: number[]): number {
  let best = xs[0];
  for (const x of xs) {
    if (x > best) {
      best = x;
    }
  }
  return best;
}
