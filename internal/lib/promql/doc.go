// Package promql holds the arithmetic behind the pod metrics endpoint: it
// turns stored samples into the points a Prometheus range query would
// return, aggregates per-GPU series into per-pod ones, computes
// histogram quantiles, and formats values for the wire (instants leave
// through models.FormatTime, the one instant format of the API).
//
// The package does no I/O. A typical flow, as the store reads a series, is:
//
//	steps := promql.Steps(start, end, n)
//	from, to := steps[0].Add(-promql.LookbackDelta), steps[len(steps)-1]
//	rows := /* samples with from <= T <= to, ordered by T */
//	points := promql.AtSteps(rows, steps)
//	// for a type that is only stored per GPU:
//	pod := promql.Aggregate([][]promql.Point{gpu0, gpu1}, promql.Sum)
//	for _, p := range points {
//		emit(models.FormatTime(p.T), promql.FormatValue(p.V))
//	}
//
// Semantics follow Prometheus 3 (query_range, the 5 minute lookback
// delta, histogram_quantile over classic buckets); each function
// documents where it departs from or narrows Prometheus's behaviour.
package promql
