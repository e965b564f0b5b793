package abuse

import (
	"errors"
	"testing"
	"time"
)

func TestStatuses(t *testing.T) {
	var s Statuses
	if s.String() != "none" || s.Only("401") || s.Total() != 0 {
		t.Fatalf("empty: %q only=%v total=%d", s.String(), s.Only("401"), s.Total())
	}
	s.AddN("401", 3)
	s.Add("503")
	s.Add("503")
	s.Add("400")
	if got, want := s.String(), "401×3, 503×2, 400×1"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if s.Count("503") != 2 || s.Total() != 6 {
		t.Errorf("Count(503) = %d, Total = %d", s.Count("503"), s.Total())
	}
	if !s.Only("400", "401", "503") || s.Only("401", "503") {
		t.Error("Only: want true for every key seen, false when one is missing")
	}
	if serverErrors(&s) {
		t.Error("503 counts as a server error")
	}
	s.Add("500")
	if !serverErrors(&s) {
		t.Error("500 does not count as a server error")
	}
}

// A flood's answers held back at the key's share or the rate limit are
// accepted beside what its attack must be answered, and nothing else is.
func TestStatusesHeldBack(t *testing.T) {
	var s Statuses
	s.AddN("400", 5)
	s.Add("429")
	s.Add("429 RATE_LIMITED")
	if !s.OnlyOrHeldBack("400") || s.Only("400") {
		t.Error("OnlyOrHeldBack(400): want 400 and both 429s accepted, and Only(400) refusing the 429s")
	}
	s.Add("503")
	if s.OnlyOrHeldBack("400") {
		t.Error("OnlyOrHeldBack(400) accepted a 503")
	}
}

func TestLatencies(t *testing.T) {
	var l Latencies
	for i := 1; i <= 200; i++ {
		l.OK = append(l.OK, time.Duration(i)*time.Millisecond)
	}
	if l.Quantile(0.5) != 101*time.Millisecond || l.Quantile(0.99) != 199*time.Millisecond || l.Quantile(1) != 200*time.Millisecond {
		t.Errorf("quantiles: %v %v %v", l.Quantile(0.5), l.Quantile(0.99), l.Quantile(1))
	}
	v := &Victim{Baseline: l, During: Latencies{OK: []time.Duration{100 * time.Millisecond, 398 * time.Millisecond}}}
	if r := v.Ratio(); r != 2 {
		t.Errorf("Ratio = %v, want 2 (398 ms over 199 ms)", r)
	}
	after := Latencies{OK: []time.Duration{199 * time.Millisecond, 398 * time.Millisecond}}
	v.After = &after
	if r := v.Ratio(); r != 1 || v.Base().Quantile(0.99) != 398*time.Millisecond {
		t.Errorf("Ratio = %v against the noisier baseline after, want 1", r)
	}
	if (&Victim{}).Ratio() != 0 {
		t.Error("a victim with no baseline has a ratio")
	}
}

func TestVerdict(t *testing.T) {
	victim := func(baseline, during time.Duration, errs int) *Victim {
		return &Victim{Baseline: Latencies{OK: []time.Duration{baseline}}, During: Latencies{OK: []time.Duration{during}, Errors: errs}}
	}
	heap := func(mb int64) *int64 { b := mb << 20; return &b }
	for _, c := range []struct {
		name string
		r    *Result
		want string
	}{
		{"within every bound", &Result{OK: true, CPU: 500 * time.Millisecond, Memory: MaxMemoryPerRequest, Victim: victim(10*time.Millisecond, 20*time.Millisecond, 0)}, "PASS"},
		{"the outcome", &Result{OK: false}, "FAIL: outcome"},
		{"CPU", &Result{OK: true, CPU: 501 * time.Millisecond}, "FAIL: CPU"},
		{"memory", &Result{OK: true, Memory: MaxMemoryPerRequest + 1}, "FAIL: memory"},
		{"heap kept", &Result{OK: true, Retained: heap(200)}, "FAIL: heap"},
		{"heap within", &Result{OK: true, Retained: heap(50)}, "PASS"},
		{"victim errors", &Result{OK: true, Victim: victim(10*time.Millisecond, 10*time.Millisecond, 1)}, "FAIL: victim errors"},
		{"victim p99", &Result{OK: true, Victim: victim(10*time.Millisecond, 21*time.Millisecond, 0)}, "FAIL: victim p99"},
		{"a victim never answered", &Result{OK: true, Victim: &Victim{Baseline: Latencies{OK: []time.Duration{time.Millisecond}}, During: Latencies{Errors: 3}}}, "FAIL: victim errors, victim p99"},
		{"a victim that never ran", &Result{OK: true, Victim: &Victim{Baseline: Latencies{OK: []time.Duration{time.Millisecond}}}}, "FAIL: victim p99"},
		{"everything", &Result{CPU: time.Second, Memory: 1 << 30, Retained: heap(1000), Victim: victim(time.Millisecond, time.Second, 5)},
			"FAIL: outcome, CPU, memory, heap, victim errors, victim p99"},
		{"an attack's own CPU bound", &Result{OK: true, CPU: 9 * time.Second, CPUBound: 10 * time.Second}, "PASS"},
		{"over its own CPU bound", &Result{OK: true, CPU: 11 * time.Second, CPUBound: 10 * time.Second}, "FAIL: CPU"},
		{"within the victim's slack", &Result{OK: true, VictimSlack: 500 * time.Millisecond, Victim: victim(4*time.Millisecond, 504*time.Millisecond, 0)}, "PASS"},
		{"over the victim's slack", &Result{OK: true, VictimSlack: 500 * time.Millisecond, Victim: victim(4*time.Millisecond, 505*time.Millisecond, 0)}, "FAIL: victim p99"},
		{"not run", &Result{OK: true, Err: errors.New("no server")}, "FAIL: error"},
	} {
		if got := c.r.Verdict(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if c.r.Passed() != (c.want == "PASS") {
			t.Errorf("%s: Passed = %v", c.name, c.r.Passed())
		}
	}
}
