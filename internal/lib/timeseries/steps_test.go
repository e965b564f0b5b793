package timeseries

import (
	"testing"
	"time"
)

func TestSteps(t *testing.T) {
	tests := []struct {
		name       string
		start, end time.Time
		n          int
		want       []time.Duration // offsets from base
	}{
		{"one sample is the end", at(0), at(time.Hour), 1, []time.Duration{time.Hour}},
		{"two samples are start and end", at(0), at(time.Hour), 2, []time.Duration{0, time.Hour}},
		{"divisible range", at(0), at(time.Hour), 5,
			[]time.Duration{0, 15 * time.Minute, 30 * time.Minute, 45 * time.Minute, time.Hour}},
		{"step truncated to whole ms", at(0), at(time.Second), 4,
			[]time.Duration{0, ms(333), ms(666), ms(999)}},
		{"10s in 3 steps", at(0), at(10 * time.Second), 4,
			[]time.Duration{0, ms(3333), ms(6666), ms(9999)}},
		{"truncation yields more than n steps", at(0), at(ms(5)), 4,
			[]time.Duration{0, ms(1), ms(2), ms(3), ms(4), ms(5)}},
		{"start and end truncated to ms", at(900 * time.Microsecond), at(ms(2) + 999*time.Microsecond), 3,
			[]time.Duration{0, ms(1), ms(2)}},
		{"empty range", at(time.Minute), at(time.Minute), 10, []time.Duration{time.Minute}},
		{"range below n-1 ms uses 1ms steps", at(0), at(ms(3)), 1000,
			[]time.Duration{0, ms(1), ms(2), ms(3)}},
		{"raw mode has no steps", at(0), at(time.Hour), 0, nil},
		{"end before start", at(time.Hour), at(0), 10, nil},
		{"end before start, one sample", at(time.Hour), at(0), 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Steps(tc.start, tc.end, tc.n)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d steps %v, want %d", len(got), got, len(tc.want))
			}
			for i, d := range tc.want {
				if !got[i].Equal(at(d)) || got[i].Location() != time.UTC {
					t.Errorf("step %d: got %s, want %s", i, fmtTime(got[i]), fmtTime(at(d)))
				}
			}
		})
	}
}

func TestStepsBounds(t *testing.T) {
	ranges := []time.Duration{ms(1), ms(999), ms(1000), ms(1001), ms(1998), time.Minute + ms(7), 24*time.Hour + ms(1)}
	for _, r := range ranges {
		for n := 2; n <= MaxSamples; n++ {
			steps := Steps(at(0), at(r), n)
			if !steps[0].Equal(at(0)) || steps[len(steps)-1].After(at(r)) {
				t.Fatalf("range %v n=%d: steps %s..%s outside range", r, n,
					fmtTime(steps[0]), fmtTime(steps[len(steps)-1]))
			}
			if len(steps) > 2*(n-1) {
				t.Fatalf("range %v n=%d: %d steps, more than 2(n-1)", r, n, len(steps))
			}
			if r >= ms(int64(n-1)) && len(steps) < n {
				t.Fatalf("range %v n=%d: only %d steps", r, n, len(steps))
			}
		}
	}
}

// TestStepsPastDurationRange: a range longer than time.Duration holds
// (~292 years) keeps its end point, as Prometheus's int64 milliseconds do.
func TestStepsPastDurationRange(t *testing.T) {
	start := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC)
	span := end.UnixMilli() - start.UnixMilli()
	for _, n := range []int{1, 2, 3, 20, MaxSamples} {
		steps := Steps(start, end, n)
		if n == 1 {
			if len(steps) != 1 || !steps[0].Equal(end) {
				t.Fatalf("n=1: %v, want only the end", steps)
			}
			continue
		}
		step := span / int64(n-1)
		if len(steps) != n || !steps[0].Equal(start) {
			t.Fatalf("n=%d: %d steps from %s, want %d from %s", n, len(steps), fmtTime(steps[0]), n, fmtTime(start))
		}
		for i, s := range steps {
			if want := time.UnixMilli(start.UnixMilli() + int64(i)*step).UTC(); !s.Equal(want) {
				t.Fatalf("n=%d step %d: %s, want %s", n, i, fmtTime(s), fmtTime(want))
			}
		}
		if last := steps[n-1]; last.After(end) || end.UnixMilli()-last.UnixMilli() >= int64(n-1) {
			t.Fatalf("n=%d: last step %s is not the end %s (less the truncation)", n, fmtTime(last), fmtTime(end))
		}
	}
	if got := Steps(start, end, 2); !got[1].Equal(end) {
		t.Fatalf("n=2: last step %s, want the end %s", fmtTime(got[1]), fmtTime(end))
	}
}
