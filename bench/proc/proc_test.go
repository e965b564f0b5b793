package proc

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// A command name with spaces and a ')' of its own: fields count from
	// the last ')'. utime 1234 and stime 56 ticks.
	line := "4242 (gpu graph) (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 56 0 0 20 0 9 0 100 1000 50 18446744073709551615\n"
	got, err := parseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if want := 12*time.Second + 900*time.Millisecond; got != want {
		t.Fatalf("parseStat = %v, want %v", got, want)
	}
	for _, bad := range []string{"", "4242 gpugraph S 1", "4242 (g) S 1 2 3", "4242 (g) S 1 4242 4242 0 -1 4194560 100 0 0 0 x 56 0"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) read no error", bad)
		}
	}
}

func TestParseStatus(t *testing.T) {
	status := "Name:\tgpugraph\nVmPeak:\t 2000000 kB\nVmHWM:\t  524288 kB\nVmRSS:\t  262144 kB\nThreads:\t9\n"
	m, err := parseStatus([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS != 256<<20 || m.Peak != 512<<20 {
		t.Fatalf("parseStatus = %+v, want RSS 256 MiB, peak 512 MiB", m)
	}
	if _, err := parseStatus([]byte("Name:\tx\nVmRSS:\t1 kB\n")); err == nil {
		t.Error("a status without VmHWM read no error")
	}
	if _, err := parseStatus([]byte("VmHWM:\tlots kB\nVmRSS:\t1 kB\n")); err == nil {
		t.Error("an unreadable VmHWM read no error")
	}
}

// TestOwnProcess reads this process: CPU grows with work done, and a
// reset peak stands between the resident set and the old peak.
func TestOwnProcess(t *testing.T) {
	pid := os.Getpid()
	before, err := CPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the clock ticks over, bounded.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if now, _ := CPU(pid); now > before {
			break
		}
		for i := 0; i < 1_000_000; i++ {
			_ = i * i
		}
	}
	if after, _ := CPU(pid); after <= before {
		t.Fatalf("CPU stayed at %v after 5 s of spinning", before)
	}
	if SumCPU([]int{pid, 1 << 30}) < before {
		t.Error("SumCPU lost this process's CPU beside a missing one")
	}

	// Touch 64 MiB, give it back to the system, then reset: the peak
	// comes down with the resident set.
	b := make([]byte, 64<<20)
	for i := range b {
		b[i] = 1
	}
	runtime.KeepAlive(b)
	b = nil
	debug.FreeOSMemory()
	high, err := Memory(pid)
	if err != nil {
		t.Fatal(err)
	}
	if high.Peak < 64<<20 || high.RSS <= 0 {
		t.Fatalf("after touching 64 MiB: %+v", high)
	}
	if err := ResetPeak(pid); err != nil {
		t.Skipf("clear_refs is not writable here: %v", err)
	}
	low, err := Memory(pid)
	if err != nil {
		t.Fatal(err)
	}
	if low.Peak > high.Peak-32<<20 || low.Peak < low.RSS {
		t.Fatalf("after ResetPeak: %+v (before %+v): want RSS ≤ peak, 32 MiB or more below the old peak", low, high)
	}
}

func TestFreePort(t *testing.T) {
	p, err := FreePort()
	if err != nil || p <= 0 || p > 65535 {
		t.Fatalf("FreePort = %d, %v", p, err)
	}
}

func TestLoadAverage(t *testing.T) {
	if l, err := LoadAverage(); err != nil || l < 0 {
		t.Fatalf("LoadAverage = %v, %v", l, err)
	}
}
