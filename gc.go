package main

import (
	"os"
	"runtime/debug"
)

// gcPercent is the server's GOGC unless the environment sets one. A nested
// answer allocates tens of MB of short-lived objects (rows, resolver
// results, JSON); collecting at 4× the live heap instead of 2× halves the
// number of collections for a larger peak heap, which the peer benchmark
// measured as the better trade (BENCHMARKS.md, "Beside PostGraphile").
const gcPercent = 400

func setGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
