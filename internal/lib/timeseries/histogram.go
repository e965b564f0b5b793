package timeseries

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
)

// Bucket is one cumulative bucket of a classic histogram: Count
// observations were less than or equal to UpperBound.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// ErrInvalidBucket is wrapped by the errors ParseBuckets returns.
var ErrInvalidBucket = errors.New("invalid histogram bucket")

// ParseBuckets turns stored buckets, keyed by upper bound ("0.001", "1.0",
// "+Inf") with cumulative counts as values, into Buckets sorted by upper
// bound. Bounds are read like Prometheus reads the le label (so "+Inf",
// "inf" and "1e0" are accepted); a NaN bound, an unparsable key or value,
// and a count that is negative, NaN or infinite are errors naming the
// offending entry. Keys that spell the same bound ("1" and "1.0") are kept
// apart here and merged by HistogramQuantile, as Prometheus does. A
// missing "+Inf" bucket is not an error: HistogramQuantile answers NaN.
func ParseBuckets(stored map[string]string) ([]Bucket, error) {
	type keyed struct {
		key string
		Bucket
	}
	parsed := make([]keyed, 0, len(stored))
	for key, value := range stored {
		bound, err := strconv.ParseFloat(key, 64)
		if err != nil || math.IsNaN(bound) {
			return nil, fmt.Errorf("%w: upper bound %q is not a number", ErrInvalidBucket, key)
		}
		count, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(count) || math.IsInf(count, 0) || count < 0 {
			return nil, fmt.Errorf("%w: count %q of bucket %q is not a finite non-negative number", ErrInvalidBucket, value, key)
		}
		parsed = append(parsed, keyed{key, Bucket{bound, count}})
	}
	// Map order is random; the key breaks ties so that equal bounds are
	// merged in the same order every time.
	slices.SortFunc(parsed, func(a, b keyed) int {
		return cmp.Or(cmp.Compare(a.UpperBound, b.UpperBound), cmp.Compare(a.key, b.key))
	})
	buckets := make([]Bucket, len(parsed))
	for i, p := range parsed {
		buckets[i] = p.Bucket
	}
	return buckets, nil
}

// HistogramQuantile returns the q-quantile (0 <= q <= 1) of a classic
// histogram exactly as Prometheus's histogram_quantile does (its
// BucketQuantile in promql/quantile.go): the value is interpolated
// linearly inside the bucket holding the rank q·count; the lowest bucket
// is taken to start at 0 when its upper bound is positive, and when its
// upper bound is <= 0 that bound is the answer; a rank in the +Inf bucket
// answers the highest finite upper bound. Buckets with the same upper
// bound are merged, relative count differences below 1e-12 between
// neighbours are treated as float noise, and counts that decrease are
// raised to the running maximum, so that inconsistent input still yields
// a value.
//
// Special cases, all as in Prometheus: q < 0 gives -Inf, q > 1 gives +Inf,
// q NaN gives NaN; no +Inf bucket, fewer than two distinct bounds or no
// observations give NaN. buckets need not be sorted and are not modified.
func HistogramQuantile(q float64, buckets []Bucket) float64 {
	if v, done := quantileOutOfRange(q); done {
		return v
	}
	return bucketQuantile(q, prepareBuckets(buckets))
}

// Percentiles returns the p50, p90 and p99 of a classic histogram, each
// as HistogramQuantile computes it, preparing the buckets once.
func Percentiles(buckets []Bucket) (p50, p90, p99 float64) {
	b := prepareBuckets(buckets)
	return bucketQuantile(0.5, b), bucketQuantile(0.9, b), bucketQuantile(0.99, b)
}

// quantileOutOfRange handles the q values that do not look at buckets.
func quantileOutOfRange(q float64) (float64, bool) {
	switch {
	case math.IsNaN(q):
		return math.NaN(), true
	case q < 0:
		return math.Inf(-1), true
	case q > 1:
		return math.Inf(+1), true
	}
	return 0, false
}

// smallDeltaTolerance is Prometheus's threshold below which relative
// differences between neighbouring bucket counts are float noise.
const smallDeltaTolerance = 1e-12

// prepareBuckets copies, sorts, merges and repairs buckets the way
// BucketQuantile does before its search. It returns nil when no quantile
// can be computed because the +Inf bucket is missing.
func prepareBuckets(in []Bucket) []Bucket {
	if len(in) == 0 {
		// Prometheus never calls BucketQuantile without buckets; NaN is
		// what it answers for a single one.
		return nil
	}
	buckets := slices.Clone(in)
	slices.SortStableFunc(buckets, func(a, b Bucket) int {
		return cmp.Compare(a.UpperBound, b.UpperBound)
	})
	if !math.IsInf(buckets[len(buckets)-1].UpperBound, +1) {
		return nil
	}
	buckets = coalesceBuckets(buckets)
	ensureMonotonic(buckets, smallDeltaTolerance)
	return buckets
}

// bucketQuantile is the search and interpolation of Prometheus's
// BucketQuantile over prepared buckets, for 0 <= q <= 1.
func bucketQuantile(q float64, buckets []Bucket) float64 {
	if len(buckets) < 2 {
		return math.NaN()
	}
	observations := buckets[len(buckets)-1].Count
	if observations == 0 {
		return math.NaN()
	}
	rank := q * observations
	b := sort.Search(len(buckets)-1, func(i int) bool { return buckets[i].Count >= rank })

	switch {
	case b == len(buckets)-1:
		return buckets[len(buckets)-2].UpperBound
	case b == 0 && buckets[0].UpperBound <= 0:
		return buckets[0].UpperBound
	}
	var (
		bucketStart float64
		bucketEnd   = buckets[b].UpperBound
		count       = buckets[b].Count
	)
	if b > 0 {
		bucketStart = buckets[b-1].UpperBound
		count -= buckets[b-1].Count
		rank -= buckets[b-1].Count
	}
	return bucketStart + (bucketEnd-bucketStart)*(rank/count)
}

// coalesceBuckets merges sorted buckets that share an upper bound by
// adding their counts, in place.
func coalesceBuckets(buckets []Bucket) []Bucket {
	last := buckets[0]
	i := 0
	for _, b := range buckets[1:] {
		if b.UpperBound == last.UpperBound {
			last.Count += b.Count
		} else {
			buckets[i] = last
			last = b
			i++
		}
	}
	buckets[i] = last
	return buckets[:i+1]
}

// ensureMonotonic is Prometheus's ensureMonotonicAndIgnoreSmallDeltas
// without its diagnostics: counts within tolerance of the previous one are
// set equal to it, then any decrease is replaced by the previous count, so
// the binary search in bucketQuantile sees non-decreasing counts.
func ensureMonotonic(buckets []Bucket, tolerance float64) {
	prev := buckets[0].Count
	for i := 1; i < len(buckets); i++ {
		curr := buckets[i].Count
		switch {
		case curr == prev:
		case almostEqual(prev, curr, tolerance), curr < prev:
			// Keep prev: the difference is noise or a decrease.
			buckets[i].Count = prev
		default:
			prev = curr
		}
	}
}

// minNormal is the smallest positive normal float64.
var minNormal = math.Float64frombits(0x0010000000000000)

// almostEqual is Prometheus's util/almost.Equal for values that are
// never staleness markers: a and b differ by less than epsilon times
// their magnitude.
func almostEqual(a, b, epsilon float64) bool {
	if math.IsNaN(a) && math.IsNaN(b) {
		return true
	}
	if a == b {
		return true
	}
	absSum := math.Abs(a) + math.Abs(b)
	diff := math.Abs(a - b)
	if a == 0 || b == 0 || absSum < minNormal {
		return diff < epsilon*minNormal
	}
	return diff/math.Min(absSum, math.MaxFloat64) < epsilon
}
