package dataset_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/dataset"
	"gpugraph/internal/dataset/format"
	"gpugraph/internal/lib/rowfield"
	"gpugraph/models"
)

// TestFormatMatchesFile holds the two spellings of the fixture format to the
// same keys, at every level: what a writer writes (package format) is what
// Parse reads (File), except where the file says more or less on purpose.
func TestFormatMatchesFile(t *testing.T) {
	// Keys only one side has, by path.
	writtenOnly := map[string][]string{
		"vms": {"gpuManufacturer", "gpuModelName"}, // the loader reads them from the catalog
	}
	readOnly := map[string][]string{
		"nodes.gpus": {"nodeId"}, // a GPU is on the node that lists it
	}
	var walk func(path string, written, read reflect.Type)
	walk = func(path string, written, read reflect.Type) {
		written, read = elem(written), elem(read)
		if read == reflect.TypeOf(time.Time{}) {
			if written != reflect.TypeOf(format.Instant("")) {
				t.Errorf("%s: an instant is written as %v", path, written)
			}
			return
		}
		if written.Kind() != reflect.Struct || read.Kind() != reflect.Struct {
			return
		}
		wk, rk := keys(written), keys(read)
		for k, wf := range wk {
			rf, ok := rk[k]
			if !ok {
				if !slices.Contains(writtenOnly[path], k) {
					t.Errorf("%s: format writes %q, which Parse does not read", path, k)
				}
				continue
			}
			walk(strings.TrimPrefix(path+"."+k, "."), wf, rf)
		}
		for k := range rk {
			if _, ok := wk[k]; !ok && !slices.Contains(readOnly[path], k) {
				t.Errorf("%s: Parse reads %q, which format does not write", path, k)
			}
		}
	}
	walk("", reflect.TypeOf(format.Fixture{}), reflect.TypeOf(dataset.File{}))
}

func elem(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	return t
}

// keys are the JSON keys of a struct, with those of embedded structs.
func keys(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case f.Anonymous && name == "":
			for k, v := range keys(elem(f.Type)) {
				out[k] = v
			}
		case name == "":
			out[f.Name] = f.Type
		default:
			out[name] = f.Type
		}
	}
	return out
}

// TestFormatKeys holds the fixture writer to the field registries of VMs,
// nodes and GPUs (package rowfield): the same keys in the same order (a
// node's GPUs listed in it, a GPU's node the node that lists it).
func TestFormatKeys(t *testing.T) {
	without := func(keys []string, drop string) []string {
		return slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return k == drop })
	}
	for name, c := range map[string]struct{ written, registered []string }{
		"vms":        {orderedKeys(reflect.TypeFor[format.VM]()), rowfield.VM.Keys()},
		"nodes":      {orderedKeys(reflect.TypeFor[format.Node]()), append(rowfield.Node.Keys(), "gpus")},
		"nodes.gpus": {orderedKeys(reflect.TypeFor[format.GPU]()), without(rowfield.GPU.Keys(), "nodeId")},
	} {
		if !slices.Equal(c.written, c.registered) {
			t.Errorf("%s: format writes %v, the registry has %v", name, c.written, c.registered)
		}
	}
}

// orderedKeys are a struct's JSON keys in its fields' order.
func orderedKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "-" && name != "" {
			out = append(out, name)
		}
	}
	return out
}

// TestFormatPodKeys holds the fixture writer's pod, which fixes the seed's
// key order, to the one declaration of the pod (models.Pod): the same keys,
// and a toleration's keys the row's.
func TestFormatPodKeys(t *testing.T) {
	for name, c := range map[string]struct{ written, row reflect.Type }{
		"pods":              {reflect.TypeFor[format.Pod](), reflect.TypeFor[models.Pod]()},
		"pods.tolerations":  {reflect.TypeFor[format.Toleration](), reflect.TypeFor[models.PodToleration]()},
		"pods.containers":   {reflect.TypeFor[format.Container](), reflect.TypeFor[models.Container]()},
		"pods.nodeAffinity": {reflect.TypeFor[format.NodeAffinity](), reflect.TypeFor[models.PodNodeAffinity]()},
	} {
		written, row := orderedKeys(c.written), orderedKeys(c.row)
		slices.Sort(written)
		slices.Sort(row)
		if !slices.Equal(written, row) {
			t.Errorf("%s: format writes %v, models has %v", name, written, row)
		}
	}
}
