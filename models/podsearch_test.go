package models

import (
	"encoding/json"
	"testing"
)

func TestFoldCase(t *testing.T) {
	for in, want := range map[string]string{
		"Alpha-0":  "alpha-0",
		"ÉLAN":     "élan",
		"élan":     "élan",
		"ΣΙΓΜΑ":    "σιγμα",
		"ς":        "σ", // final sigma
		"\u212a":   "k", // Kelvin sign
		"STRAẞE":   "straße",
		"ß":        "ß",
		"İ":        "i",
		"beta%5_x": "beta%5_x",
		"":         "",
	} {
		if got := FoldCase(in); got != want {
			t.Errorf("FoldCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPodSearchText(t *testing.T) {
	node, wl := "GPU-Node-1", "Resnet\x1fTrain"
	if got, want := PodSearchText("Élan", &node, &wl, nil), "élan\x1fgpu-node-1\x1fresnet train\x1f"; got != want {
		t.Errorf("PodSearchText = %q, want %q", got, want)
	}
	if SearchableText("a\x1fb") || !SearchableText("a b") {
		t.Error("SearchableText")
	}
}

func TestNormalizeQuantity(t *testing.T) {
	for in, want := range map[string]string{
		"0B": "0", "200MiB": "200Mi", "2GB": "2G", "1.5B": "1.5",
		"0": "0", "200Mi": "200Mi", "B": "B", "lots": "lots", "2xB": "2xB",
	} {
		s := in
		if got := NormalizeQuantity(&s); *got != want {
			t.Errorf("NormalizeQuantity(%q) = %q, want %q", in, *got, want)
		}
	}
	if NormalizeQuantity(nil) != nil {
		t.Error("nil")
	}
	var r struct {
		Alloc AllocatedResources      `json:"a"`
		Req   RequestResourceQuantity `json:"r"`
	}
	if err := json.Unmarshal([]byte(`{"a": {"gpu": 1, "cpuMemory": "0B", "gpuMemory": "2Gi"}, "r": {"limit": "2GB", "request": null}}`), &r); err != nil {
		t.Fatal(err)
	}
	if *r.Alloc.CPUMemory != "0" || *r.Alloc.GPUMemory != "2Gi" || *r.Alloc.GPU != 1 || *r.Req.Limit != "2G" || r.Req.Request != nil {
		t.Errorf("unmarshalled %+v %+v", r.Alloc, r.Req)
	}
}
