package promql

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
					t.Errorf("step %d: got %s, want %s", i, FormatTime(got[i]), FormatTime(at(d)))
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
					FormatTime(steps[0]), FormatTime(steps[len(steps)-1]))
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
