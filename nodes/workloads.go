package nodes

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"gpugraph/agentapi"
	"gpugraph/apierr"
	"gpugraph/store"
)

// Limits on a heartbeat's workload reports.
const (
	maxReportWorkloads = 1024
	maxMessageLen      = 300 // bytes: one sentence, as statusReason carries it
)

// workloadsToStore checks the workload reports of a heartbeat: each names
// an id, a generation and a known state, at most once; a failed or exited
// one may carry one sentence of printable text. The first bad field
// answers a 400 naming it.
func workloadsToStore(in []agentapi.WorkloadReport) ([]store.WorkloadReport, error) {
	if len(in) > maxReportWorkloads {
		return nil, apierr.BadRequest("workloads lists %d workloads, more than %d", len(in), maxReportWorkloads)
	}
	out := make([]store.WorkloadReport, len(in))
	seen := map[string]int{}
	for i, w := range in {
		field := fmt.Sprintf("workloads[%d]", i)
		switch j, dup := seen[w.ID]; {
		case w.ID == "":
			return nil, apierr.BadRequest("%s.id is missing", field)
		case len(w.ID) > maxTextLen || !printable(w.ID) || containsSpace(w.ID):
			return nil, apierr.BadRequest("%s.id must be at most %d bytes of printable text without spaces", field, maxTextLen)
		case dup:
			return nil, apierr.BadRequest("%s.id %s is also the id of workloads[%d]", field, w.ID, j)
		case w.Generation < 0:
			return nil, apierr.BadRequest("%s.generation must not be negative", field)
		case !slices.Contains(agentapi.WorkloadStates, w.State):
			return nil, apierr.BadRequest("%s.state %q is not one of %s", field, w.State, strings.Join(agentapi.WorkloadStates, ", "))
		}
		if err := checkSentence(field+".message", w.Message); err != nil {
			return nil, err
		}
		if w.State == agentapi.StateFailed && w.Message == "" {
			return nil, apierr.BadRequest("%s.message is missing: a failed workload says why in one sentence", field)
		}
		seen[w.ID] = i
		out[i] = store.WorkloadReport{ID: w.ID, Generation: w.Generation, State: store.WorkloadState(w.State), Message: w.Message}
	}
	return out, nil
}

// checkSentence holds a message to what a statusReason can carry: one line
// of printable text, one sentence (no sentence end before its last
// character), bounded.
func checkSentence(field, s string) error {
	switch {
	case s == "":
		return nil
	case !utf8.ValidString(s) || !printable(s):
		return apierr.BadRequest("%s must be printable text (no line breaks or control characters)", field)
	case len(s) > maxMessageLen:
		return apierr.BadRequest("%s is %d bytes; one sentence of at most %d bytes, please", field, len(s), maxMessageLen)
	case strings.TrimSpace(s) != s:
		return apierr.BadRequest("%s must not start or end with spaces", field)
	}
	body := strings.TrimRight(s, ".!?")
	for _, end := range []string{". ", "! ", "? "} {
		if strings.Contains(body, end) {
			return apierr.BadRequest("%s must be one sentence; it has another after %q", field, end[:1])
		}
	}
	return nil
}

// assignmentsOf is the wire form of what should run on a node.
func assignmentsOf(as []store.Assignment) []agentapi.Assignment {
	out := make([]agentapi.Assignment, len(as))
	for i, a := range as {
		out[i] = agentapi.Assignment{ID: a.ID, Generation: a.Generation, GPUs: a.GPUUUIDs}
	}
	return out
}
