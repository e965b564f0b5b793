package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"gpugraph/models"
)

// file is the fixture as the models spell its keys; decoding it strictly
// catches a key the generator misspells.
type file struct {
	GPUModels     []models.GPUModel     `json:"gpuModels"`
	InstanceTypes []models.InstanceType `json:"instanceTypes"`
	Fabrics       []models.Fabric       `json:"fabrics"`
	Nodes         []node                `json:"nodes"`
	Organizations []models.Organization `json:"organizations"`
	APIKeys       []apiKey              `json:"apiKeys"`
	Credits       []credit              `json:"credits"`
	VMs           []vm                  `json:"vms"`
	Projects      []models.Project      `json:"projects"`
	Workloads     []models.Workload     `json:"workloads"`
	Revisions     []models.Revision     `json:"revisions"`
	Pods          []models.Pod          `json:"pods"`
	PodMetrics    []struct {
		PodID   string            `json:"podId"`
		Type    string            `json:"type"`
		Labels  map[string]string `json:"labels"`
		Samples [][2]string       `json:"samples"`
	} `json:"podMetrics"`
	PodHistograms []struct {
		PodID   string `json:"podId"`
		Type    string `json:"type"`
		Samples []struct {
			Timestamp string            `json:"timestamp"`
			Buckets   map[string]string `json:"buckets"`
		} `json:"samples"`
	} `json:"podHistograms"`
}

type node struct {
	models.Node
	GPUs []models.GPU `json:"gpus"`
}

type apiKey struct {
	Token          string   `json:"token"`
	OrganizationID string   `json:"organizationId"`
	Permissions    []string `json:"permissions"`
}

type credit struct {
	OrganizationID string `json:"organizationId"`
	Key            string `json:"key"`
	AmountCents    int64  `json:"amountCents"`
	Reason         string `json:"reason"`
}

type vm struct {
	models.VM
	GPUIDs []string `json:"gpuIds"`
	// The seed's VM object carries these; the loader reads them from the catalog.
	GPUManufacturer string `json:"gpuManufacturer"`
	GPUModelName    string `json:"gpuModelName"`
}

func load(t *testing.T, b []byte) *file {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return &f
}

func demoAt(t *testing.T, now time.Time) *file {
	t.Helper()
	b, err := JSON(now)
	if err != nil {
		t.Fatalf("JSON: %v", err)
	}
	return load(t, b)
}

func TestJSONParses(t *testing.T) {
	f := demoAt(t, time.Now())
	counts := map[string]int{
		"gpuModels": len(f.GPUModels), "instanceTypes": len(f.InstanceTypes), "fabrics": len(f.Fabrics), "nodes": len(f.Nodes),
		"organizations": len(f.Organizations), "apiKeys": len(f.APIKeys), "vms": len(f.VMs),
		"projects": len(f.Projects), "workloads": len(f.Workloads), "revisions": len(f.Revisions),
		"pods": len(f.Pods), "podMetrics": len(f.PodMetrics), "podHistograms": len(f.PodHistograms),
	}
	for k, n := range counts {
		if n == 0 {
			t.Errorf("%s is empty", k)
		}
	}
	if len(f.Pods) < 350 {
		t.Errorf("%d pods, want about 400", len(f.Pods))
	}
	if len(fixture) > 3<<20 {
		t.Errorf("demo.json is %d bytes, want under 3 MiB", len(fixture))
	}
}

// timeKeys are the fixture keys whose values are instants.
var timeKeys = map[string]bool{
	"createdAt": true, "completedAt": true, "deletedAt": true, "k8sPhaseUpdatedAt": true,
	"updatedAt": true, "startedAt": true, "interruptedAt": true, "leavingAt": true,
	"lastHeartbeatAt": true, "timestamp": true,
}

const leavingPrefix = "node leaving at "

// TestJSONShiftsEveryInstant walks the generated and the shifted file side
// by side: every instant (by key, in a metric sample, in a "node leaving
// at" reason) moves by exactly now−Anchor and nothing else changes.
func TestJSONShiftsEveryInstant(t *testing.T) {
	now := time.Date(2031, 7, 14, 9, 26, 53, 589_793_238, time.UTC)
	want := now.Truncate(time.Minute).Sub(anchor)
	shifted, err := JSON(now)
	if err != nil {
		t.Fatal(err)
	}
	var before, after any
	for _, x := range []struct {
		b []byte
		v *any
	}{{fixture, &before}, {shifted, &after}} {
		dec := json.NewDecoder(bytes.NewReader(x.b))
		dec.UseNumber()
		if err := dec.Decode(x.v); err != nil {
			t.Fatal(err)
		}
	}
	w := &shiftWalk{t: t, shift: want}
	w.walk("$", "", before, after)
	if w.moved < 10000 {
		t.Errorf("only %d instants moved", w.moved)
	}
	t.Logf("%d instants moved by %v", w.moved, want)
}

type shiftWalk struct {
	t     *testing.T
	shift time.Duration
	moved int
}

func (w *shiftWalk) walk(path, key string, a, b any) {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(bm) != len(a) {
			w.t.Errorf("%s: object changed shape", path)
			return
		}
		for k, x := range a {
			w.walk(path+"."+k, k, x, bm[k])
		}
	case []any:
		bs, ok := b.([]any)
		if !ok || len(bs) != len(a) {
			w.t.Errorf("%s: array changed length", path)
			return
		}
		for i := range a {
			// A metric sample is a [timestamp, value] pair.
			k := ""
			switch {
			case key == "samples":
				k = "sample"
			case key == "sample" && i == 0:
				k = "timestamp"
			}
			w.walk(fmt.Sprintf("%s[%d]", path, i), k, a[i], bs[i])
		}
	case string:
		bs, _ := b.(string)
		switch {
		case timeKeys[key]:
			w.instant(path, a, bs)
		case key == "statusReason" && strings.HasPrefix(a, leavingPrefix):
			w.instant(path, strings.TrimPrefix(a, leavingPrefix), strings.TrimPrefix(bs, leavingPrefix))
		default:
			if _, err := time.Parse(time.RFC3339Nano, a); err == nil {
				w.t.Errorf("%s: %q is an instant under a key the test does not know", path, a)
			}
			if a != bs {
				w.t.Errorf("%s: %q became %q", path, a, bs)
			}
		}
	default:
		if fmt.Sprint(a) != fmt.Sprint(b) {
			w.t.Errorf("%s: %v became %v", path, a, b)
		}
	}
}

func (w *shiftWalk) instant(path, a, b string) {
	ta, err1 := time.Parse(time.RFC3339Nano, a)
	tb, err2 := time.Parse(time.RFC3339Nano, b)
	switch {
	case err1 != nil || err2 != nil:
		w.t.Errorf("%s: %q → %q is not an instant", path, a, b)
	case tb.Sub(ta) != w.shift:
		w.t.Errorf("%s: %q → %q moved %v, want %v", path, a, b, tb.Sub(ta), w.shift)
	case len(a) != len(b) || !strings.HasSuffix(b, "Z"):
		w.t.Errorf("%s: %q → %q changed format", path, a, b)
	default:
		w.moved++
	}
}

// TestJSONIsRecent: the newest metric sample is at most a minute old, and
// every past event stays in the past.
func TestJSONIsRecent(t *testing.T) {
	now := time.Now()
	f := demoAt(t, now)
	var newest time.Time
	for _, s := range f.PodMetrics {
		for _, p := range s.Samples {
			newest = later(newest, mustTime(t, p[0]))
		}
	}
	for _, h := range f.PodHistograms {
		for _, s := range h.Samples {
			newest = later(newest, mustTime(t, s.Timestamp))
		}
	}
	if age := now.Sub(newest); age < 0 || age > 2*time.Minute {
		t.Errorf("newest sample %v is %v before now", newest, age)
	}
	if first := newest.Add(-24 * time.Hour); f.PodMetrics[0].Samples[0][0] > first.Add(5*time.Minute).Format(time.RFC3339) {
		t.Errorf("metrics start at %s, want a day of them", f.PodMetrics[0].Samples[0][0])
	}
	for _, p := range f.Pods {
		for _, ts := range []*time.Time{&p.CreatedAt, p.CompletedAt, p.DeletedAt, &p.K8sPhaseUpdatedAt, &p.UpdatedAt} {
			if ts != nil && ts.After(now) {
				t.Errorf("pod %s: %v is in the future", p.Name, ts)
			}
		}
	}
	for _, v := range f.VMs {
		if v.CreatedAt.After(now) || (v.InterruptedAt != nil && v.InterruptedAt.After(now)) {
			t.Errorf("vm %s: an instant is in the future", v.ID)
		}
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestKeysMatchFile(t *testing.T) {
	f := load(t, fixture)
	keys := Keys()
	if len(keys) != len(f.APIKeys) {
		t.Fatalf("Keys() has %d keys, the file %d", len(keys), len(f.APIKeys))
	}
	orgs := map[string]models.Organization{}
	for _, o := range f.Organizations {
		orgs[o.ID] = o
	}
	for i, k := range keys {
		fk := f.APIKeys[i]
		o := orgs[fk.OrganizationID]
		if k.Token != fk.Token || k.OrganizationID != fk.OrganizationID || !slices.Equal(k.Permissions, fk.Permissions) ||
			k.Organization != o.Name || k.TenantID != o.TenantID || o.Name == "" {
			t.Errorf("Keys()[%d] = %+v, file has %+v of %+v", i, k, fk, o)
		}
	}
	keys[0].Permissions[0] = "changed"
	if Keys()[0].Permissions[0] == "changed" {
		t.Error("Keys() hands out the slices it keeps")
	}

	// Every organization gets every permission set of the brief.
	roles := map[string][]string{
		"operator": {"compute.read", "compute.operate", "workloads.read"},
		"reader":   {"compute.read", "workloads.read"},
		"metrics":  {"metrics.write"},
		"agent":    {"nodes.report"},
	}
	byToken := map[string]KeyInfo{}
	for _, k := range Keys() {
		byToken[k.Token] = k
	}
	for _, o := range f.Organizations {
		slug := strings.TrimPrefix(o.ID, "org-")
		for role, perms := range roles {
			k, ok := byToken[slug+"-"+role]
			if !ok || k.OrganizationID != o.ID || !slices.Equal(k.Permissions, perms) {
				t.Errorf("organization %s: key %s-%s missing or wrong: %+v", o.ID, slug, role, k)
			}
		}
	}
}

func TestInstantLen(t *testing.T) {
	for s, want := range map[string]int{
		`"2026-01-01T00:00:00Z"`:           20,
		`"2026-01-01T00:00:00.123Z"`:       24,
		`"2026-01-01T00:00:00.123456789Z"`: 30,
		`"2026-01-01T00:00:00"`:            0, // no zone: not an instant the fixture writes
		`"2026-01-01T00:00:00+02:00"`:      0,
		`"2026-01-01T00:00:00.Z"`:          0,
		`"12026-01-01T00:00:00Z"`:          0, // inside a longer number
		`"2026-01-01"`:                     0,
	} {
		if got := instantLen([]byte(s), 1); got != want {
			t.Errorf("instantLen(%s) = %d, want %d", s, got, want)
		}
	}
}
