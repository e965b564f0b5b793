package format

import (
	"encoding/json"
	"strings"
	"testing"
)

// Buckets keep their order on the wire: by bound, "+Inf" last, as
// Prometheus and the seed list them (a Go map would sort "+Inf" first and
// "10.0" before "2.0"), with bounds and counts as JSON strings.
func TestBucketsKeepTheirOrder(t *testing.T) {
	b := Buckets{{"0.5", "1"}, {"2.0", "3"}, {"10.0", "7"}, {"+Inf", "9"}}
	got, err := json.Marshal(HistogramSample{Timestamp: "2024-06-02T03:49:52.500Z", Buckets: b})
	want := `{"timestamp":"2024-06-02T03:49:52.500Z","buckets":{"0.5":"1","2.0":"3","10.0":"7","+Inf":"9"}}`
	if err != nil || string(got) != want {
		t.Errorf("got %s %v\nwant %s", got, err, want)
	}
	if got, _ := json.Marshal(Buckets{}); string(got) != "{}" {
		t.Errorf("no buckets: %s", got)
	}
	// A bound that needs escaping is escaped, as any JSON string.
	if got, _ := json.Marshal(Buckets{{`a"b`, "1"}}); string(got) != `{"a\"b":"1"}` {
		t.Errorf("escaped bound: %s", got)
	}
}

// The file's sections come in the order SPEC.md's fixture format lists
// them, with the instance type catalog (a section of this project's) after
// the GPU models it names.
func TestSectionOrder(t *testing.T) {
	got, err := json.Marshal(Fixture{})
	if err != nil {
		t.Fatal(err)
	}
	order := []string{"gpuModels", "instanceTypes", "fabrics", "nodes", "organizations", "apiKeys", "credits", "vms",
		"projects", "workloads", "revisions", "pods", "podMetrics", "podHistograms"}
	at := -1
	for _, k := range order {
		i := strings.Index(string(got), `"`+k+`"`)
		if i <= at {
			t.Fatalf("section %q at %d, not after the one before it (%d): %s", k, i, at, got)
		}
		at = i
	}
}
