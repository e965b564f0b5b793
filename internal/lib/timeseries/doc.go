// Package timeseries holds the arithmetic behind the pod metrics endpoint:
// not PromQL (it parses no query language) but what a Prometheus range
// query does to the samples. It turns stored samples into the points a
// Prometheus range query would return, aggregates per-GPU series into
// per-pod ones, computes histogram quantiles, and formats values for the
// wire (instants leave through models.FormatTime, the one instant format
// of the API).
//
// The package does no I/O. A typical flow, as the store reads a series, is:
//
//	steps := timeseries.Steps(start, end, n)
//	from, to := steps[0].Add(-timeseries.LookbackDelta), steps[len(steps)-1]
//	rows := /* samples with from <= T <= to, ordered by T */
//	points := timeseries.AtSteps(rows, steps)
//	// for a type that is only stored per GPU:
//	pod := timeseries.Aggregate([][]timeseries.Point{gpu0, gpu1}, timeseries.Sum)
//	for _, p := range points {
//		emit(models.FormatTime(p.T), timeseries.FormatValue(p.V))
//	}
//
// Semantics follow Prometheus 3 (query_range, the 5 minute lookback
// delta, histogram_quantile over classic buckets); each function
// documents where it departs from or narrows Prometheus's behaviour.
package timeseries
