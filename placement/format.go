package placement

import (
	"fmt"
	"strings"
)

// plural picks the singular or plural noun for n ("1 core", "2 cores").
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// joinAnd joins items as English does: "a", "a and b", "a, b and c".
func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// gpuLabel names a GPU by its PCI address, with the failure cause when known.
func gpuLabel(g GPU) string {
	label := g.Address
	if label == "" {
		label = fmt.Sprintf("index %d", g.Index)
	}
	if !g.Healthy && g.FailedReason != "" {
		label += " (" + g.FailedReason + ")"
	}
	return label
}

// gpuList renders "failed GPU 0000:3B:00.0" or "failed GPUs 0000:3B:00.0, 0000:5E:00.0".
func gpuList(adjective string, gpus []GPU) string {
	labels := make([]string, len(gpus))
	for i, g := range gpus {
		labels[i] = gpuLabel(g)
	}
	return fmt.Sprintf("%s %s %s", adjective, plural(len(gpus), "GPU", "GPUs"), strings.Join(labels, ", "))
}
