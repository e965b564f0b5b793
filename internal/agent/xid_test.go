package agent

import (
	"slices"
	"testing"
)

func TestParseXIDList(t *testing.T) {
	tests := []struct {
		in      string
		want    []uint64
		all     bool
		wantErr bool
	}{
		{in: "", want: nil},
		{in: "1,2", want: []uint64{1, 2}},
		{in: " 79 , 94 ,", want: []uint64{79, 94}},
		{in: "all", all: true},
		{in: "XIDs", all: true},
		{in: "1,x", wantErr: true},
		{in: "-1", wantErr: true},
	}
	for _, tt := range tests {
		got, all, err := ParseXIDList(tt.in)
		if (err != nil) != tt.wantErr || all != tt.all || !slices.Equal(got, tt.want) {
			t.Errorf("ParseXIDList(%q) = %v, %v, %v", tt.in, got, all, err)
		}
	}
}

func TestXIDPolicyDefaults(t *testing.T) {
	p := NewXIDPolicy([]uint64{1, 2}, false)
	if want := []uint64{1, 2, 13, 31, 43, 45, 68, 109}; !slices.Equal(p.Ignored(), want) {
		t.Errorf("ignored %v, want %v", p.Ignored(), want)
	}
	for _, x := range []uint64{48, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120} {
		if p.Ignores(x) {
			t.Errorf("XID %d ignored", x)
		}
	}
	var zero XIDPolicy
	if zero.Ignores(79) || zero.IgnoresAll() {
		t.Error("zero policy ignores XID 79")
	}
}
