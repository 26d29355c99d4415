package stats

// Mean returns the arithmetic mean of xs, or 0 for none.‸
func Mean(xs []float64) float64 {
}
