package agents_test

import (
	"testing"
	"time"

	"gpugraph/demo"
	"gpugraph/demo/agents"
)

// The replay lines up with the fixture: at the anchor the newest value,
// one step before it the one before, and a day later the same again.
func TestDemoSamplesCycle(t *testing.T) {
	anchor, _ := time.Parse(time.RFC3339, demo.Anchor)
	for _, c := range []struct {
		at   time.Time
		want int
	}{
		{anchor, 287},
		{anchor.Add(-agents.Step), 286},
		{anchor.Add(agents.Step), 0},
		{anchor.Add(24 * time.Hour), 287},
		{anchor.Add(-24*time.Hour + agents.Step), 0},
		{anchor.Add(-time.Second), 286},
	} {
		if got := agents.ValueAt(c.at, 288); got != c.want {
			t.Errorf("ValueAt(%s) = %d, want %d", c.at, got, c.want)
		}
	}
}
