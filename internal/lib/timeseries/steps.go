package timeseries

import "time"

// LookbackDelta is how far back from a step the newest sample is looked
// for, as in Prometheus's default --query.lookback-delta.
const LookbackDelta = 5 * time.Minute

// MaxSamples is the largest numberOfSamples the endpoint accepts.
const MaxSamples = 1000

// Steps returns the evaluation times of a Prometheus range query asked for
// n samples between start and end.
//
// Prometheus evaluates in whole milliseconds, so start and end are
// truncated to the millisecond and the step, (end−start)/(n−1), is
// truncated to a whole millisecond too (never below 1ms). Steps are
// start, start+step, ... up to and including end. Because of the
// truncation the last step may fall short of end, and when the range is
// not a multiple of n−1 milliseconds more than n steps can come back
// (never more than 2(n−1) for n >= 2); Prometheus answers the same for
// that step.
//
// n == 1 yields the single step end (an instant query). n <= 0 (raw mode)
// and an end before start yield nil. All times are in UTC.
func Steps(start, end time.Time, n int) []time.Time {
	first, last, step, ok := stepGrid(start, end, n)
	if !ok {
		return nil
	}
	steps := make([]time.Time, 0, (last-first)/step+1)
	for t := first; t <= last; t += step {
		steps = append(steps, time.UnixMilli(t).UTC())
	}
	return steps
}

// stepGrid computes the first and last step and the step width of Steps,
// all in Unix milliseconds, without materialising the steps. It counts in
// int64 milliseconds as Prometheus does, never in time.Duration, whose
// nanoseconds saturate past ~292 years: a longer range would lose its end.
func stepGrid(start, end time.Time, n int) (first, last, step int64, ok bool) {
	if n <= 0 {
		return 0, 0, 0, false
	}
	s, e := start.UnixMilli(), end.UnixMilli()
	if e < s {
		return 0, 0, 0, false
	}
	if n == 1 {
		return e, e, 1, true
	}
	step = (e - s) / int64(n-1)
	if step <= 0 {
		// Prometheus rejects a zero step; a range shorter than n−1 ms is
		// answered with millisecond steps instead of an error.
		step = 1
	}
	return s, s + (e-s)/step*step, step, true
}
