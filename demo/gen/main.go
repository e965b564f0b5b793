// Command gen writes gpugraph's built-in demo data set in the fixture format
// (the types of package internal/dataset/format):
//
//	go run ./demo/gen > demo/demo.json
//
// The output is a pure function of this source: a fixed PCG seed drives every
// random choice, ids are name-based UUIDs, and every instant is relative to
// one fixed demo.Anchor that demo.JSON later moves to the present.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"gpugraph/demo"
)

// anchor is the instant the demo is written "as of": package demo moves it
// to the present when it serves the file.
var anchor = must(time.Parse(time.RFC3339, demo.Anchor))

// The seed is arbitrary; changing it reshuffles times and metric noise only.
const seedHi, seedLo = 0x67707567726170, 0x64656d6f

func main() {
	out := flag.String("o", "", "write to this file instead of standard output")
	flag.Parse()
	b, err := generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if *out == "" {
		_, err = os.Stdout.Write(b)
	} else {
		err = writeFile(*out, b)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// generate builds the demo, checks it against the rules the loader and
// restartVm rely on, and encodes it.
func generate() ([]byte, error) {
	f := build()
	if err := validate(f); err != nil {
		return nil, err
	}
	return encode(f)
}

// gen carries the random source and the rows built so far, so that later
// sections can look up earlier ones.
type gen struct {
	rng      *rand.Rand
	f        *Fixture
	models   map[string]GPUModel
	nodes    map[string]*Node // by name
	orgs     map[string]Organization
	projects map[string]Project
	// What the generator knows of a row beyond what the file says.
	nodeFacts map[*Node]nodeFacts
	podFacts  map[*Pod]podFacts
	specs     map[*Workload]*workloadSpec
}

// nodeFacts are a node's GPU model (of all its GPUs) and the third octet
// of its pod CIDR, 10.244.<subnet>.0/24.
type nodeFacts struct {
	model  string
	subnet int
}

// podFacts are the whole GPUs a pod runs on and their model, for its metrics.
type podFacts struct {
	model string
	gpus  int
}

func build() *Fixture {
	g := &gen{
		rng:      rand.New(rand.NewPCG(seedHi, seedLo)),
		f:        &Fixture{},
		models:   map[string]GPUModel{},
		nodes:    map[string]*Node{},
		orgs:     map[string]Organization{},
		projects: map[string]Project{},

		nodeFacts: map[*Node]nodeFacts{},
		podFacts:  map[*Pod]podFacts{},
		specs:     map[*Workload]*workloadSpec{},
	}
	g.addGPUModels()
	g.addInstanceTypes()
	g.addNodes()
	g.addTenancy()
	g.addVMs()
	g.addFabric()
	g.addWorkloads()
	g.addMetrics()
	return g.f
}

// writeFile replaces path atomically, so an interrupted run never leaves a
// half-written demo.json for go:embed to pick up.
func writeFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".demo-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// encode writes one row per line: the file stays small and a change to the
// generator shows up in a diff as the rows it changed.
func encode(f *Fixture) ([]byte, error) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	sections := []struct {
		key  string
		rows []any
	}{
		{"gpuModels", rowsOf(f.GPUModels)},
		{"instanceTypes", rowsOf(f.InstanceTypes)},
		{"fabrics", rowsOf(f.Fabrics)},
		{"nodes", rowsOf(f.Nodes)},
		{"organizations", rowsOf(f.Organizations)},
		{"apiKeys", rowsOf(f.APIKeys)},
		{"credits", rowsOf(f.Credits)},
		{"vms", rowsOf(f.VMs)},
		{"projects", rowsOf(f.Projects)},
		{"workloads", rowsOf(f.Workloads)},
		{"revisions", rowsOf(f.Revisions)},
		{"pods", rowsOf(f.Pods)},
		{"podMetrics", rowsOf(f.PodMetrics)},
		{"podHistograms", rowsOf(f.PodHistograms)},
	}
	w.WriteString("{\n")
	for i, s := range sections {
		fmt.Fprintf(w, "%q: [\n", s.key)
		for j, r := range s.rows {
			b, err := marshal(r)
			if err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", s.key, j, err)
			}
			w.WriteString("  ")
			w.Write(b)
			if j < len(s.rows)-1 {
				w.WriteByte(',')
			}
			w.WriteByte('\n')
		}
		w.WriteString("]")
		if i < len(sections)-1 {
			w.WriteByte(',')
		}
		w.WriteByte('\n')
	}
	w.WriteString("}\n")
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func rowsOf[T any](s []T) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// marshal keeps "&", "<" and ">" as they are: the names are data, not HTML.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// nameUUID is a UUID (version 5 layout) derived from a name: stable across
// runs and across edits that add or remove other rows.
func nameUUID(kind, name string) string {
	h := sha1.Sum([]byte("gpugraph-demo/" + kind + "/" + name))
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// msTime is how Run:ai and OpenRelay write instants: UTC, milliseconds.
func msTime(t time.Time) Instant { return Instant(t.UTC().Format("2006-01-02T15:04:05.000Z07:00")) }

// secTime is how the seed writes metric sample instants.
func secTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func ago(d time.Duration) time.Time { return anchor.Add(-d) }

// between is a random duration in [lo, hi), in whole milliseconds.
func (g *gen) between(lo, hi time.Duration) time.Duration {
	span := int64((hi - lo) / time.Millisecond)
	if span <= 0 {
		return lo
	}
	return lo + time.Duration(g.rng.Int64N(span))*time.Millisecond
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
