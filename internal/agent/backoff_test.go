package agent

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	for _, r := range []float64{0, 0.5, 0.999} {
		b := Backoff{Initial: 100 * time.Millisecond, Max: time.Second, rand: func() float64 { return r }}
		bases := []time.Duration{100, 200, 400, 800, 1000, 1000, 1000}
		for i, base := range bases {
			base *= time.Millisecond
			d := b.Next()
			if d < base/2 || d > base {
				t.Errorf("rand %v, attempt %d: %v outside [%v, %v]", r, i, d, base/2, base)
			}
		}
		b.Reset()
		if d := b.Next(); d > 100*time.Millisecond {
			t.Errorf("after Reset: %v", d)
		}
	}
}

// Many attempts must neither overflow nor pass the cap.
func TestBackoffLongOutage(t *testing.T) {
	b := Backoff{Initial: DefaultBackoffInitial, Max: DefaultBackoffMax}
	for range 200 {
		if d := b.Next(); d <= 0 || d > DefaultBackoffMax {
			t.Fatalf("delay %v", d)
		}
	}
}
