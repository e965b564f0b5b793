package rest

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"gpugraph/internal/lib/podfield"
)

// TestRunaiPodKeys checks the REST writer against the pod-field registry:
// the Run:ai pod object has a key for every registry field with a column,
// and no other, so a field added to the registry cannot go unwritten.
func TestRunaiPodKeys(t *testing.T) {
	var keys []string
	rt := reflect.TypeFor[runaiPod]()
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		keys = append(keys, name)
		if f, ok := podfield.ByJSON(name); !ok || f.Column == "" {
			t.Errorf("the REST pod writes %s, which the registry lacks", name)
		}
	}
	for _, f := range podfield.All() {
		if f.Column != "" && !slices.Contains(keys, f.JSON) {
			t.Errorf("registry field %s is missing from the REST pod", f.JSON)
		}
	}
}
