package demo

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEMatchesData keeps demo/README.md honest: every VM id and UUID it
// names exists in the data, and every restart scenario is in its table.
func TestREADMEMatchesData(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	f := load(t, fixture)
	ids := map[string]bool{}
	for _, v := range f.VMs {
		ids[v.ID] = true
	}
	for _, w := range f.Workloads {
		ids[w.ID], ids[w.ClusterID] = true, true
	}
	for _, r := range f.Revisions {
		ids[r.ID] = true
	}
	for _, p := range f.Pods {
		ids[p.ID] = true
	}
	for _, k := range f.APIKeys {
		ids[k.Token] = true
	}
	for _, pattern := range []string{
		"`(vm-[a-z0-9-]+)`",
		`\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b`,
		"`((?:acme|globex|initech)-[a-z]+)`",
	} {
		for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(readme, -1) {
			if !ids[m[1]] {
				t.Errorf("README names %s, which the data does not have", m[1])
			}
		}
	}
	for _, sc := range scenarios {
		row := "| `" + sc.id + "` |"
		i := strings.Index(readme, row)
		if i < 0 {
			t.Errorf("README has no row for %s", sc.id)
			continue
		}
		line := readme[i : i+strings.IndexByte(readme[i:], '\n')]
		if sc.want.Code != "" && !strings.Contains(line, "`"+sc.want.Code+"`") {
			t.Errorf("README row of %s does not say %s", sc.id, sc.want.Code)
		}
	}
}
