/**
 * Return the median of the numbers; NaN for an empty array.‸
 */
export function median(values: number[]): number {
}
