package placement

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Diagnosis is why Place rejected nodes, one Status per node: the first
// filter that failed there.
type Diagnosis struct {
	NumAllNodes int
	Rejected    map[string]*Status // by node id
}

// Summary counts the rejection reasons the way Kubernetes' FitError does:
//
//	0/12 nodes can take it: 7 too few free NVIDIA H100 GPUs, 3 offline, 2 too little RAM
//
// Each node counts once, under its first failing filter, so the counts add
// up to the total. Reasons are ordered by count descending, then by text,
// so the biggest obstacle comes first and the order never varies.
func (d Diagnosis) Summary() string {
	counts := make(map[string]int)
	for _, st := range d.Rejected {
		counts[st.Reason]++
	}
	reasons := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), strings.Compare(a, b))
	})
	msg := fmt.Sprintf("0/%d nodes can take it", d.NumAllNodes)
	if len(reasons) == 0 {
		return msg
	}
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%d %s", counts[r], r)
	}
	return msg + ": " + strings.Join(parts, ", ")
}
