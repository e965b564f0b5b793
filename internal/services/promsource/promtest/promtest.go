// Package promtest starts a real Prometheus (Debian's prometheus package,
// 2.42, or any prometheus on PATH) for tests and benchmarks: on a free
// loopback port, with a temporary data directory, optionally backfilled
// with promtool tsdb create-blocks-from openmetrics and scraping given
// targets. It never touches a system service.
package promtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// RequireEnv, when set to 1 (CI sets it), turns a missing prometheus into
// a failure instead of a skip.
const RequireEnv = "GPUGRAPH_REQUIRE_PROMETHEUS"

// Options say what the Prometheus holds.
type Options struct {
	// OpenMetrics is backfilled before start (ends with "# EOF").
	OpenMetrics string
	// Targets are host:port scraped at ScrapeInterval (1s when zero).
	Targets        []string
	ScrapeInterval time.Duration
	// Args are extra flags (--query.max-samples=…).
	Args []string
}

// Prom is a running Prometheus.
type Prom struct {
	URL string
	cmd *exec.Cmd
	Log *strings.Builder
}

// Available reports whether prometheus and promtool are on PATH, and why not.
func Available() error {
	for _, b := range []string{"prometheus", "promtool"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%s is not installed (apt-get install -y prometheus; .ci/run installs it)", b)
		}
	}
	return nil
}

// Start starts Prometheus for t and stops it at cleanup; without a
// prometheus binary the test is skipped with a loud message (failed when
// GPUGRAPH_REQUIRE_PROMETHEUS=1).
func Start(t testing.TB, o Options) *Prom {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("%s=1 but %v", RequireEnv, err)
		}
		t.Skipf("SKIPPED WITHOUT A REAL PROMETHEUS: %v", err)
	}
	p, err := StartDir(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// StartDir starts Prometheus with its data under dir; Stop ends it.
func StartDir(dir string, o Options) (*Prom, error) {
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	if o.OpenMetrics != "" {
		in := filepath.Join(dir, "backfill.om")
		if err := os.WriteFile(in, []byte(o.OpenMetrics), 0o644); err != nil {
			return nil, err
		}
		out, err := exec.Command("promtool", "tsdb", "create-blocks-from", "openmetrics", in, data).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("promtool backfill: %v: %s", err, out)
		}
	}
	interval := o.ScrapeInterval
	if interval == 0 {
		interval = time.Second
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: %s\n  evaluation_interval: %s\nscrape_configs:\n", interval, interval)
	if len(o.Targets) > 0 {
		cfg += fmt.Sprintf("  - job_name: gpugraph-agent\n    static_configs:\n      - targets: ['%s']\n", strings.Join(o.Targets, "','"))
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"--config.file=" + cfgPath, "--storage.tsdb.path=" + data, "--web.listen-address=" + addr,
		"--storage.tsdb.retention.time=100y", "--log.level=warn"}, o.Args...)
	cmd := exec.Command("prometheus", args...)
	log := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Prom{URL: "http://" + addr, cmd: cmd, Log: log}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		resp, err := http.Get(p.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-ctx.Done():
			p.Stop()
			return nil, errors.New("prometheus did not become ready in 30s: " + log.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop ends the process this package started.
func (p *Prom) Stop() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
