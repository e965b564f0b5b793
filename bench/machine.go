package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"gpugraph/store"
)

// Machine describes where a run happened.
type Machine struct {
	CPUs     int
	CPUModel string
	MemoryGB float64
	Go       string
	OS       string
	Postgres string // "" when PostgreSQL was not measured
	SQLite   string
}

// Describe reads the machine's CPU and memory and the engines' versions.
func Describe(ctx context.Context, cfg Config) Machine {
	m := Machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH,
		CPUModel: procField("/proc/cpuinfo", "model name"), MemoryGB: memTotalGB()}
	for _, e := range cfg.Engines {
		db, err := FreshDB(ctx, e, cfg.PostgresURL)
		if err != nil {
			continue
		}
		var v string
		if e == store.Postgres {
			db.WithContext(ctx).Raw("SHOW server_version").Scan(&v)
			m.Postgres = v
		} else {
			db.WithContext(ctx).Raw("SELECT sqlite_version()").Scan(&v)
			m.SQLite = v
		}
		db.Drop()
	}
	return m
}

func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func memTotalGB() float64 {
	fields := strings.Fields(procField("/proc/meminfo", "MemTotal"))
	if len(fields) == 0 {
		return 0
	}
	kb, _ := strconv.ParseFloat(fields[0], 64)
	return kb / (1 << 20)
}

// Lines are the machine as markdown list items.
func (m Machine) Lines() []string {
	out := []string{
		fmt.Sprintf("CPU: %d × %s (`nproc` %d)", m.CPUs, m.CPUModel, m.CPUs),
		fmt.Sprintf("memory: %.1f GiB", m.MemoryGB),
		fmt.Sprintf("Go: %s, %s", m.Go, m.OS),
		"SQLite: " + orNone(m.SQLite, "not measured"),
		"PostgreSQL: " + orNone(m.Postgres, "not measured (TEST_DATABASE_URL unset)"),
	}
	return out
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}
