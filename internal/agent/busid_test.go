package agent

import (
	"regexp"
	"strings"
	"testing"
)

func TestNormalizeBusID(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{in: "00000000:3B:00.0", want: "0000:3B:00.0"},
		{in: "00000000:3b:00.0", want: "0000:3B:00.0"},
		{in: "0000:3b:00.0", want: "0000:3B:00.0"},
		{in: "0000:3B:00.0", want: "0000:3B:00.0"},
		{in: "00000000:07:00.0", want: "0000:07:00.0"},
		{in: "00000000:DF:1f.7", want: "0000:DF:1F.7"},
		{in: "00000001:AB:00.1", want: "0001:AB:00.1"},
		{in: "0:ab:00.0", want: "0000:AB:00.0"},
		{in: "  00000000:3B:00.0\x00\x00", want: "0000:3B:00.0"},
		{in: "0000ABCD:3B:00.0", want: "ABCD:3B:00.0"},
		{in: "00010000:3B:00.0", want: "10000:3B:00.0"}, // wide domain kept, not truncated
		{in: "", wantErr: true},
		{in: "3B:00.0", wantErr: true},
		{in: "00000000:3B:00", wantErr: true},
		{in: "00000000:3B:20.0", wantErr: true}, // device > 0x1f
		{in: "00000000:3B:00.8", wantErr: true}, // function > 7
		{in: "00000000:3:00.0", wantErr: true},
		{in: "00000000:3BB:00.0", wantErr: true},
		{in: "000000000:3B:00.0", wantErr: true}, // domain over 8 digits
		{in: "00000000:3G:00.0", wantErr: true},
		{in: "00000000:+3:00.0", wantErr: true},
		{in: "0000_0000:3B:00.0", wantErr: true},
		{in: "00000000:3B:00.0.0", wantErr: true},
		{in: "00000000:3B:00:0", wantErr: true},
	}
	for _, tt := range tests {
		got, err := NormalizeBusID(tt.in)
		if tt.wantErr {
			if err == nil {
				t.Errorf("NormalizeBusID(%q) = %q, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("NormalizeBusID(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

var normalBusID = regexp.MustCompile(`^[0-9A-F]{4,8}:[0-9A-F]{2}:[01][0-9A-F]\.[0-7]$`)

// FuzzNormalizeBusID checks that whatever NormalizeBusID accepts comes out
// in the one canonical spelling, and that the spelling is a fixed point.
func FuzzNormalizeBusID(f *testing.F) {
	for _, s := range []string{
		"00000000:3B:00.0", "0000:3b:00.0", "00000001:ab:1f.7", "0:0:0.0",
		"", ":", "::.", "00000000:3B:00", "0000ABCD:3B:00.0\x00", "ffffffff:ff:1f.7",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := NormalizeBusID(in)
		if err != nil {
			return
		}
		if !normalBusID.MatchString(out) {
			t.Fatalf("NormalizeBusID(%q) = %q, not canonical", in, out)
		}
		again, err := NormalizeBusID(out)
		if err != nil || again != out {
			t.Fatalf("NormalizeBusID(%q) = %q, %v; not a fixed point", out, again, err)
		}
		if lower, err := NormalizeBusID(strings.ToLower(in)); err != nil || lower != out {
			t.Fatalf("case changed the result: %q -> %q, %q -> %q (%v)", in, out, strings.ToLower(in), lower, err)
		}
	})
}
