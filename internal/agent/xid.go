package agent

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// DefaultIgnoredXIDs are the XIDs NVIDIA's k8s-device-plugin treats as
// application errors (internal/rm/health.go): the faulting process is at
// fault, not the GPU, so the GPU stays healthy.
var DefaultIgnoredXIDs = []uint64{
	13,  // Graphics Engine Exception
	31,  // GPU memory page fault
	43,  // GPU stopped processing
	45,  // Preemptive cleanup, due to previous errors
	68,  // Video processor exception
	109, // Context Switch Timeout Error
}

// XIDPolicy decides which critical XID events fail a GPU.
type XIDPolicy struct {
	ignoreAll bool
	ignored   map[uint64]bool
}

// NewXIDPolicy ignores DefaultIgnoredXIDs plus extra. With ignoreAll set no
// XID fails a GPU, the equivalent of the plugin's DP_DISABLE_HEALTHCHECKS=all.
func NewXIDPolicy(extra []uint64, ignoreAll bool) XIDPolicy {
	p := XIDPolicy{ignoreAll: ignoreAll, ignored: make(map[uint64]bool)}
	for _, x := range DefaultIgnoredXIDs {
		p.ignored[x] = true
	}
	for _, x := range extra {
		p.ignored[x] = true
	}
	return p
}

// Ignores reports whether xid leaves the GPU healthy.
func (p XIDPolicy) Ignores(xid uint64) bool {
	return p.ignoreAll || p.ignored[xid]
}

// IgnoresAll reports whether XID health checking is switched off entirely.
func (p XIDPolicy) IgnoresAll() bool { return p.ignoreAll }

// Ignored lists the ignored XIDs in order, for the start-up log line.
func (p XIDPolicy) Ignored() []uint64 {
	out := make([]uint64, 0, len(p.ignored))
	for x := range p.ignored {
		out = append(out, x)
	}
	slices.Sort(out)
	return out
}

// ParseXIDList reads the --ignore-xids value: comma-separated decimal XIDs,
// or "all" (also "xids", the plugin's spelling) to switch XID checks off.
// Unlike the plugin, which skips malformed entries, a typo here is an error:
// silently watching an XID the operator meant to ignore would fail GPUs.
func ParseXIDList(s string) (xids []uint64, all bool, err error) {
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch strings.ToLower(f) {
		case "":
			continue
		case "all", "xids":
			all = true
			continue
		}
		x, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return nil, false, fmt.Errorf("XID %q is not a non-negative decimal number", f)
		}
		xids = append(xids, x)
	}
	return xids, all, nil
}
