package placement

import "testing"

func TestAgentAtLeast(t *testing.T) {
	tests := []struct {
		have, want string
		ok         bool
	}{
		{"2.4.0", "2.4.0", true},
		{"2.4.1", "2.4.0", true},
		{"2.10.0", "2.4.0", true}, // numeric, not lexical
		{"3.0.0", "2.6.0", true},
		{"2.3.9", "2.4.0", false},
		{"1.99.99", "2.4.0", false},
		{"v2.4.0", "2.4.0", true},
		{"V2.6.0", "2.6.0", true},
		{" 2.6.0 ", "2.6.0", true},
		{"2.4", "2.4.0", true}, // missing patch is 0
		{"2", "2.4.0", false},
		{"2.4.0-rc1", "2.4.0", false}, // a pre-release precedes its release
		{"2.4.0-rc.1", "2.4.0-rc.1", true},
		{"2.4.0-rc.2", "2.4.0-rc.10", false}, // numeric identifiers compare numerically
		{"2.4.0-rc.1", "2.4.0-alpha", true},
		{"2.4.0-alpha", "2.4.0-alpha.1", false},
		{"2.4.0-1", "2.4.0-alpha", false}, // numeric sorts before alphanumeric
		{"2.4.1-rc1", "2.4.0", true},
		{"3.0.0-rc1", "2.6.0", true},
		{"2.4.0-rc.10", "2.4.0-rc.2", true},
		// A number with a leading zero is not semver (semver.org §2, §9):
		// unparseable, so older than any requirement.
		{"2.4.0-rc.010", "2.4.0-rc.10", false},
		{"2.4.0-rc.010", "2.4.0-rc.1", false},
		{"02.6.0", "2.4.0", false},
		{"2.4.0-beta", "2.4.0-alpha", true},
		{"2.4.0-alpha.1", "2.4.0-alpha", true},
		{"2.4.0-alpha", "2.4.0-1", true},
		{"2.4.0+build.7", "2.4.0", true}, // build metadata is ignored
		{"2.6.0-rc1+b5", "2.6.0", false},
		{"", "2.4.0", false}, // unknown is older than any requirement
		{"unknown", "2.4.0", false},
		{"2.x.0", "2.4.0", false},
		{"2.4.0.1", "2.4.0", false},
		{"2..0", "2.4.0", false},
		{"-2.4.0", "2.4.0", false},
		{"2.4.0-", "2.4.0", false},
		{"2.4.0-rc_1", "2.4.0", false},
		{"99999999999999999999.0.0", "2.4.0", true}, // numbers have no bound (semver.org §2)
		{"2.4-rc1", "2.4.0-alpha", false},           // a shorthand takes no pre-release
		{"2.6.0", "not-a-version", false},
	}
	for _, tt := range tests {
		if got := AgentAtLeast(tt.have, tt.want); got != tt.ok {
			t.Errorf("AgentAtLeast(%q, %q) = %v, want %v", tt.have, tt.want, got, tt.ok)
		}
	}
}

func TestDescribeAgent(t *testing.T) {
	for in, want := range map[string]string{
		"2.3.9":  "node agent 2.3.9",
		"v2.3.9": "node agent v2.3.9",
		"":       "a node agent of unknown version",
		"banana": `an unrecognised node agent version "banana"`,
	} {
		if got := describeAgent(in); got != want {
			t.Errorf("describeAgent(%q) = %q, want %q", in, got, want)
		}
	}
}
