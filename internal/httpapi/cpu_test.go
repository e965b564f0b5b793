package httpapi

import (
	"syscall"
	"testing"
	"time"
)

// The contract suite's benchmarks report CPU as extension's do.

// ProcessCPU is the CPU time the test process has used (user and system,
// every goroutine: the garbage collector's too). Benchmarks report it per
// operation (ReportCPU) beside the wall time, which a shared machine
// stretches.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReportCPU reports the CPU time since start per operation, as cpu-ms/op.
func ReportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(ProcessCPU()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}
