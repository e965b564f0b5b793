package agent

import (
	"math/rand/v2"
	"time"
)

// Default retry figures: the first retry comes quickly for a blip, and the
// cap keeps a fleet of agents from hammering a server that is coming back.
const (
	DefaultBackoffInitial = 500 * time.Millisecond
	DefaultBackoffMax     = 30 * time.Second
)

// Backoff yields exponentially growing, capped, jittered delays. The delay
// for attempt n is drawn from [d/2, d] with d = min(Initial·2ⁿ, Max): half is
// kept so retries do not collapse to zero, half is random so agents that lost
// the server together do not come back in lock-step.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration

	attempt int
	rand    func() float64 // in [0,1); nil means math/rand/v2
}

// Next returns the delay before the next retry.
func (b *Backoff) Next() time.Duration {
	d := b.Initial
	for i := 0; i < b.attempt && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	b.attempt++
	r := rand.Float64
	if b.rand != nil {
		r = b.rand
	}
	half := d / 2
	return half + time.Duration(r()*float64(d-half))
}

// Reset starts over after a success.
func (b *Backoff) Reset() { b.attempt = 0 }
