package bench

import (
	"testing"
	"time"
)

func TestPacerSpacesEventsAtTheRate(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPacer(start, 200)
	for i, want := range map[int]time.Duration{0: 0, 1: 5 * time.Millisecond, 200: time.Second, 12000: time.Minute} {
		if got := p.due(i).Sub(start); got != want {
			t.Errorf("event %d due %s after the start, want %s", i, got, want)
		}
	}
	// Early: it waits the rest; late: it leaves at once, and the next is
	// still due on the run's schedule, not the late one's.
	if w := p.wait(2, start.Add(4*time.Millisecond)); w != 6*time.Millisecond {
		t.Errorf("event 2 at 4 ms waits %s, want 6ms", w)
	}
	if w := p.wait(2, start.Add(50*time.Millisecond)); w != 0 {
		t.Errorf("event 2 at 50 ms waits %s, want 0", w)
	}
	if w := p.wait(11, start.Add(50*time.Millisecond)); w != 5*time.Millisecond {
		t.Errorf("event 11 at 50 ms waits %s, want 5ms", w)
	}
	if got := newPacer(start, 3).due(1).Sub(start); got != 333333333*time.Nanosecond {
		t.Errorf("at 3/s event 1 is due at %s", got)
	}
}

func TestSampleEvery(t *testing.T) {
	for _, c := range []struct {
		rate, perSecond float64
		want            int
	}{{200, 5, 40}, {10, 5, 2}, {1, 5, 1}, {12, 5, 2}, {13, 5, 3}} {
		if got := sampleEvery(c.rate, c.perSecond); got != c.want {
			t.Errorf("sampleEvery(%g, %g) = %d, want %d", c.rate, c.perSecond, got, c.want)
		}
	}
}

// The connector's log as its slog text handler writes it.
const agentLog = `time=2026-12-02T14:05:00.123Z level=INFO msg=starting server=http://127.0.0.1:1 cluster=c
time=2026-12-02T14:05:12.5Z level=INFO msg="caches synced" pods=150000 nodes=5000
time=2026-12-02T14:06:40.000Z level=INFO msg="snapshot sent" pods=150000 parts=300 sequence=1764684300300 deleted=0 took=1m28s
time=2026-12-02T14:06:41.000Z level=DEBUG msg="delta sent" pods=38 sequence=1764684300301 created=0 updated=38
time=2026-12-02T14:06:41.300Z level=DEBUG msg="delta sent" pods=41 sequence=1764684300302 created=0 updated=41
time=2026-12-02T14:06:41.400Z level=WARN msg="sync failed, retrying" sequence=1764684300303 kind=delta attempt=1
`

func TestAgentLogReading(t *testing.T) {
	at, ok := logTime([]byte(agentLog), "caches synced")
	if want := time.Date(2026, 12, 2, 14, 5, 12, 500_000_000, time.UTC); !ok || !at.Equal(want) {
		t.Errorf("caches synced at %s (%v), want %s", at, ok, want)
	}
	if _, ok := logTime([]byte(agentLog), "relisted"); ok {
		t.Error("a message the log does not hold has a time")
	}
	if ok, n := logInt([]byte(agentLog), "snapshot sent", "parts"); !ok || n != 300 {
		t.Errorf("snapshot parts %d (%v), want 300", n, ok)
	}
	if ok, _ := logInt([]byte(agentLog), "snapshot sent", "took"); ok {
		t.Error("took=1m28s read as an integer")
	}
	if b, p := deltaStats([]byte(agentLog)); b != 2 || p != 79 {
		t.Errorf("deltaStats = %d batches, %d pods; want 2, 79", b, p)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 150000: "150,000", 1234567: "1,234,567", -5000: "-5,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
