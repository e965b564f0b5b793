package httpapi

import (
	"runtime"
	"testing"
)

// One credential's share of the budget is half the cores by default (at
// least one), and the command line's value wins.
func TestCredentialShareFollowsTheCores(t *testing.T) {
	// Serial (the package's parallel tests run after it), so the process's
	// cores may be set for a moment.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct{ procs, share int }{{1, 1}, {2, 1}, {3, 1}, {8, 4}, {64, 32}} {
		runtime.GOMAXPROCS(c.procs)
		if got := (Config{}).withDefaults().CredentialConcurrency; got != c.share {
			t.Errorf("%d cores: default credential concurrency %d, want %d", c.procs, got, c.share)
		}
	}
	if got := (Config{CredentialConcurrency: 7}).withDefaults().CredentialConcurrency; got != 7 {
		t.Fatalf("a configured credential concurrency became %d", got)
	}
}

// The document limits' defaults are those package extension's tests and
// benchmarks hold documents to (defaultDocLimits there): a change of one
// changes both.
func TestDocumentLimitDefaults(t *testing.T) {
	cfg := Config{}.withDefaults()
	got := [...]int{cfg.SelectionLimit, cfg.RepeatLimit, cfg.FieldLimit, cfg.DirectiveLimit, cfg.DepthLimit,
		cfg.AliasLimit, cfg.RootFieldLimit, cfg.MutationFieldLimit, cfg.DocumentLimit, cfg.TokenLimit}
	if want := [...]int{100, 20, 2000, 50, 15, 100, 20, 10, 256 << 10, 10000}; got != want {
		t.Fatalf("document limits %v, want %v (update extension's defaultDocLimits and defaultDocuments too)", got, want)
	}
}
