package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"gpugraph/internal/store"
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

// ParseEngines reads an -engines flag: a comma-separated list of sqlite
// and postgres, or empty for SQLite and, when pgURL is set, PostgreSQL.
func ParseEngines(list, pgURL string) ([]store.Dialect, error) {
	if list == "" {
		if pgURL != "" {
			return []store.Dialect{store.SQLite, store.Postgres}, nil
		}
		return []store.Dialect{store.SQLite}, nil
	}
	var out []store.Dialect
	for _, e := range strings.Split(list, ",") {
		d := store.Dialect(strings.TrimSpace(e))
		if d != store.SQLite && d != store.Postgres {
			return nil, fmt.Errorf("unknown engine %q: want sqlite or postgres", e)
		}
		if d == store.Postgres && pgURL == "" {
			return nil, fmt.Errorf("postgres needs TEST_DATABASE_URL")
		}
		out = append(out, d)
	}
	return out, nil
}

// ParseNumbers reads a comma-separated list of numbers 1 … last (the
// figures or attacks to run); empty is nil, all of them.
func ParseNumbers(list string, last int) (map[int]bool, error) {
	if list == "" {
		return nil, nil
	}
	out := map[int]bool{}
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > last {
			return nil, fmt.Errorf("%q is not a number 1–%d", f, last)
		}
		out[n] = true
	}
	return out, nil
}
