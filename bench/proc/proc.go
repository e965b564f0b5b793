// Package proc is what a measurement needs of a server it runs as a
// process of its own: starting it with its output in a log file, waiting
// until it answers, stopping it, and reading its CPU time and memory from
// /proc (Linux). bench/peer and bench/abuse start their servers through it.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ticksPerSecond is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100
// on every Linux architecture Go builds for.
const ticksPerSecond = 100

// Tick is the resolution of CPU: one clock tick.
const Tick = time.Second / ticksPerSecond

// CPU is the user + system CPU process pid has used, all its threads.
func CPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStat(b)
}

// parseStat reads utime + stime (fields 14 and 15) of a /proc/<pid>/stat
// line.
func parseStat(b []byte) (time.Duration, error) {
	// The command name (field 2) may hold spaces and parentheses: fields
	// count from its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("unreadable /proc stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	k, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("unreadable /proc stat times")
	}
	return time.Duration(u+k) * Tick, nil
}

// SumCPU adds CPU over pids, skipping those that are gone.
func SumCPU(pids []int) time.Duration {
	var d time.Duration
	for _, p := range pids {
		if t, err := CPU(p); err == nil {
			d += t
		}
	}
	return d
}

// Mem is a process's resident memory now and its peak since it started or
// since ResetPeak, in bytes.
type Mem struct {
	RSS  int64 // VmRSS
	Peak int64 // VmHWM
}

// Memory reads pid's resident set and its high-water mark.
func Memory(pid int) (Mem, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Mem{}, err
	}
	return parseStatus(b)
}

// parseStatus reads VmRSS and VmHWM (kB) of a /proc/<pid>/status file.
func parseStatus(b []byte) (Mem, error) {
	var m Mem
	var seen int
	for _, line := range strings.Split(string(b), "\n") {
		key, v, ok := strings.Cut(line, ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		if err != nil {
			return Mem{}, fmt.Errorf("unreadable /proc status %s: %q", key, v)
		}
		if key == "VmRSS" {
			m.RSS = kb << 10
		} else {
			m.Peak = kb << 10
		}
		seen++
	}
	if seen < 2 {
		return Mem{}, errors.New("/proc status has no VmRSS and VmHWM")
	}
	return m, nil
}

// ResetPeak sets pid's high-water mark (VmHWM) back to its resident set
// now, so a later Memory reads the peak of what happened in between
// (/proc/<pid>/clear_refs, value 5: Linux 4.0 and later).
func ResetPeak(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// LoadAverage is the machine's one-minute load average (/proc/loadavg):
// how many processes wanted a CPU, which says how far figures measured on
// a shared machine can be trusted.
func LoadAverage() (float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, errors.New("empty /proc/loadavg")
	}
	return strconv.ParseFloat(f[0], 64)
}
