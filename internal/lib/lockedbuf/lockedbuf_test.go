package lockedbuf

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Writers on many goroutines and a reader among them: every line arrives
// whole, and the race detector sees no unguarded access (go test -race).
func TestConcurrentWritesAndReads(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				fmt.Fprintf(&b, "w%d-%d\n", i, j)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	for i := range 8 {
		for j := range 100 {
			if !strings.Contains(b.String(), fmt.Sprintf("w%d-%d\n", i, j)) {
				t.Errorf("line w%d-%d is missing", i, j)
			}
		}
	}
}
