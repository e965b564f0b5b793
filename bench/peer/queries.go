package peer

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"gpugraph/bench/fleetgen"
)

// A Query is one of the four, as each server spells it. Both read tenant
// 0's pods or organization 0's VMs: gpugraph through the caller's key,
// PostGraphile (which authorises nothing) through a condition.
type Query struct {
	Name string
	What string
	Ours string
	// Peer is PostGraphile's text, $ID standing for the id column's orderBy
	// word, which differs between releases (PeerQuery).
	Peer string
	ours []string // path to the compared value in gpugraph's data
	peer []string // the same in PostGraphile's, after normalize
	// The targets: single-client latency ÷ the best peer's at most
	// Latency, requests/s at 16 clients ÷ the best peer's at least RPS16.
	Latency, RPS16 float64
}

// PeerQuery is q's text as p spells it.
func (q Query) PeerQuery(p Peer) string { return strings.ReplaceAll(q.Peer, "$ID", p.idOrder) }

// Queries are Q1–Q4 of the issue.
func Queries() []Query {
	tenant := fleetgen.TenantID(0)
	pods := fmt.Sprintf(`allPods(condition: {tenantId: %d, isDeleted: false}, orderBy: [CREATED_AT_ASC, $ID_ASC], first: 500)`, tenant)
	return []Query{
		{
			Name: "Q1", What: "flat: `pods(limit: 500) { pods { id name } }`", Latency: 0.5, RPS16: 3,
			Ours: `{ pods(limit: 500) { pods { id name } } }`,
			Peer: `{ ` + pods + ` { nodes { rowId name } } }`,
			ours: []string{"pods", "pods"}, peer: []string{"pods"},
		},
		{
			Name: "Q2", What: "nested: 500 pods → node → gpus → model, + workload", Latency: 0.25, RPS16: 8,
			Ours: `{ pods(limit: 500) { pods { node { gpus { model { name } } } workload { name } } } }`,
			Peer: `{ ` + pods + ` { nodes { fleetNodeByClusterIdAndNodeName { gpusesByNodeId(orderBy: [IDX_ASC]) { nodes { gpuModelByModelId { name } } } } workloadByWorkloadId { name } } } }`,
			ours: []string{"pods", "pods"}, peer: []string{"pods"},
		},
		{
			Name: "Q3", What: "console: 50 VMs → node{name status gpus{index address health model{name}}}", Latency: 0.25, RPS16: 6,
			Ours: `{ vms(limit: 50) { vms { name status node { name status gpus { index address health model { name } } } } } }`,
			Peer: fmt.Sprintf(`{ allVms(condition: {organizationId: %q}, orderBy: [CREATED_AT_DESC, $ID_DESC], first: 50) { nodes { name status fleetNodeByNodeId { name status gpusesByNodeId(orderBy: [IDX_ASC]) { nodes { idx address health gpuModelByModelId { name } } } } } } }`, fleetgen.OrgID(0)),
			ours: []string{"vms", "vms"}, peer: []string{"vms"},
		},
		{
			Name: "Q4", What: "count of Running pods of one tenant", Latency: 0.5, RPS16: 2,
			Ours: `{ podsCount(filterBy: ["k8sPhase==Running"]) }`,
			Peer: fmt.Sprintf(`{ allPods(condition: {tenantId: %d, isDeleted: false, k8SPhase: "Running"}) { totalCount } }`, tenant),
			ours: []string{"podsCount"}, peer: []string{"pods", "totalCount"},
		},
	}
}

// PostGraphile's names of gpugraph's fields, the same in both releases. v4
// runs with --classic-ids: a column named node_id (vms, gpus) would
// otherwise clash with the Relay id field nodeId, so the Relay id is id and
// the column id is rowId, as v5's amber preset names them by default.
var renames = map[string]string{
	"allPods": "pods", "allVms": "vms",
	"fleetNodeByClusterIdAndNodeName": "node", "fleetNodeByNodeId": "node",
	"gpusesByNodeId": "gpus", "gpuModelByModelId": "model", "workloadByWorkloadId": "workload",
	"idx": "index", "rowId": "id",
}

// normalize rewrites a PostGraphile answer in gpugraph's shape: fields
// renamed, connections ({nodes: […]}) unwrapped, stored lower-case enum
// words upper-cased as gpugraph's enums write them.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if n, ok := x["nodes"]; ok && len(x) == 1 {
			return normalize(n)
		}
		out := make(map[string]any, len(x))
		for k, val := range x {
			name := k
			if r, ok := renames[k]; ok {
				name = r
			}
			if s, ok := val.(string); ok && (k == "status" || k == "health") {
				val = strings.ToUpper(s)
			}
			out[name] = normalize(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}

func at(v any, path []string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// Same reports whether the two servers' data hold the same objects, and
// a short description of the first difference when not.
func (q Query) Same(ours, peer json.RawMessage) (bool, string) {
	var a, b any
	if err := json.Unmarshal(ours, &a); err != nil {
		return false, "gpugraph: " + err.Error()
	}
	if err := json.Unmarshal(peer, &b); err != nil {
		return false, "PostGraphile: " + err.Error()
	}
	x, y := at(a, q.ours), at(normalize(b), q.peer)
	if x == nil || y == nil {
		return false, fmt.Sprintf("nothing at the compared path: gpugraph %.200s, PostGraphile %.200s", ours, peer)
	}
	if reflect.DeepEqual(x, y) {
		return true, ""
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	i := 0
	for i < len(xs) && i < len(ys) && xs[i] == ys[i] {
		i++
	}
	lo := max(0, i-80)
	return false, fmt.Sprintf("differ at byte %d: gpugraph …%.160s, PostGraphile …%.160s", i, xs[lo:], ys[lo:])
}
