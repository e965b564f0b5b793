package rest

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"gpugraph/internal/lib/podfield"
	"gpugraph/models"
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

// TestRunaiPodMirrorsModel holds the REST writer's pod and toleration, which
// fix the answer's key order and omissions, to the one declaration of the
// pod (models.Pod): the same keys.
func TestRunaiPodMirrorsModel(t *testing.T) {
	keys := func(rt reflect.Type) []string {
		var out []string
		for i := range rt.NumField() {
			if name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ","); name != "-" {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out
	}
	for name, c := range map[string]struct{ written, row reflect.Type }{
		"pod":          {reflect.TypeFor[runaiPod](), reflect.TypeFor[models.Pod]()},
		"toleration":   {reflect.TypeFor[runaiToleration](), reflect.TypeFor[models.PodToleration]()},
		"container":    {reflect.TypeFor[runaiContainer](), reflect.TypeFor[models.Container]()},
		"nodeAffinity": {reflect.TypeFor[runaiNodeAffinity](), reflect.TypeFor[models.PodNodeAffinity]()},
		"term":         {reflect.TypeFor[runaiTerm](), reflect.TypeFor[models.NodeSelectorTerm]()},
		"preferred":    {reflect.TypeFor[runaiPreferredTerm](), reflect.TypeFor[models.PreferredNodeSelectorTerm]()},
		"match":        {reflect.TypeFor[runaiMatchExpression](), reflect.TypeFor[models.MatchExpression]()},
	} {
		if w, r := keys(c.written), keys(c.row); !slices.Equal(w, r) {
			t.Errorf("%s: the REST writer writes %v, models has %v", name, w, r)
		}
	}
}
