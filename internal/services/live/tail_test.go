package live

import "testing"

// The resume point is the last id the transport took: the newest handed
// less those still waiting in the buffer, or the start when it took none.
func TestTailBack(t *testing.T) {
	tl := newTail(40, 5) // a buffer of 4, plus the one taken
	if got := tl.back(0); got != 40 {
		t.Errorf("nothing handed: %d, want the start 40", got)
	}
	for _, id := range []int64{41, 44, 45, 47} {
		tl.push(id)
	}
	for k, want := range []int64{47, 45, 44, 41, 40} {
		if got := tl.back(k); got != want {
			t.Errorf("%d waiting: %d, want %d", k, got, want)
		}
	}
	fresh := newTail(7, 3)
	fresh.push(8)
	fresh.push(9)
	if got := fresh.back(2); got != 7 {
		t.Errorf("both handed still waiting: %d, want the start 7", got)
	}
}
