package placement

import (
	"fmt"
	"strconv"
	"strings"
)

// Minimum node agent versions, from the restartVm contract.
const (
	MinAgentInfiniBand = "2.4.0" // first agent that wires pods to an InfiniBand fabric
	MinAgentAMD        = "2.6.0" // first agent that grants AMD GPUs to pods
)

// AgentAtLeast reports whether agent version have is at least want, by
// semantic-versioning precedence. A leading "v" is accepted ("v2.4.0"), a
// missing minor or patch counts as 0 ("2.4" is 2.4.0), build metadata
// ("+abc") is ignored, and a pre-release is older than its release
// ("2.4.0-rc1" < "2.4.0" < "2.4.1-rc1").
//
// An empty or unparseable have is older than any requirement: an agent that
// cannot say what it is must not be handed a capability it may not have.
// An unparseable want is a programming error and also answers false.
func AgentAtLeast(have, want string) bool {
	h, err := parseVersion(have)
	if err != nil {
		return false
	}
	w, err := parseVersion(want)
	if err != nil {
		return false
	}
	return h.compare(w) >= 0
}

type version struct {
	core [3]uint64
	pre  []string // dot-separated pre-release identifiers; nil for a release
}

func parseVersion(s string) (version, error) {
	var v version
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	if i := strings.IndexByte(s, '+'); i >= 0 {
		s = s[:i]
	}
	core, pre, hasPre := strings.Cut(s, "-")
	parts := strings.Split(core, ".")
	if core == "" || len(parts) > 3 {
		return v, fmt.Errorf("version %q: want MAJOR.MINOR.PATCH", s)
	}
	for i, p := range parts {
		if !allDigits(p) {
			return v, fmt.Errorf("version %q: %q is not a number", s, p)
		}
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return v, fmt.Errorf("version %q: %w", s, err)
		}
		v.core[i] = n
	}
	if hasPre {
		v.pre = strings.Split(pre, ".")
		for _, id := range v.pre {
			if id == "" || strings.Trim(id, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") != "" {
				return v, fmt.Errorf("version %q: bad pre-release %q", s, pre)
			}
		}
	}
	return v, nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// compare orders versions by semver precedence (semver.org §11).
func (v version) compare(o version) int {
	for i := range v.core {
		if v.core[i] != o.core[i] {
			if v.core[i] < o.core[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case v.pre == nil && o.pre == nil:
		return 0
	case v.pre == nil:
		return 1
	case o.pre == nil:
		return -1
	}
	for i := 0; i < len(v.pre) && i < len(o.pre); i++ {
		if c := comparePreID(v.pre[i], o.pre[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(v.pre) < len(o.pre):
		return -1
	case len(v.pre) > len(o.pre):
		return 1
	}
	return 0
}

// comparePreID: numeric identifiers compare numerically and sort before
// alphanumeric ones, which compare as ASCII.
func comparePreID(a, b string) int {
	an, bn := allDigits(a), allDigits(b)
	switch {
	case an && bn:
		a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
		if len(a) != len(b) {
			if len(a) < len(b) {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	case an:
		return -1
	case bn:
		return 1
	}
	return strings.Compare(a, b)
}

// describeAgent names a node's agent version for a message.
func describeAgent(v string) string {
	if strings.TrimSpace(v) == "" {
		return "a node agent of unknown version"
	}
	if _, err := parseVersion(v); err != nil {
		return fmt.Sprintf("an unrecognised node agent version %q", v)
	}
	return "node agent " + v
}
