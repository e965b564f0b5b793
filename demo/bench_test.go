package demo

import (
	"testing"
	"time"
)

// BenchmarkJSON is the cost the server pays once at start.
func BenchmarkJSON(b *testing.B) {
	now := time.Now()
	for b.Loop() {
		if _, err := JSON(now); err != nil {
			b.Fatal(err)
		}
	}
}
