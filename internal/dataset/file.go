// Package dataset reads a data set file (the fixture format: the --fixtures
// file the server loads at start, and the built-in demo) and loads it into
// the store: in one transaction, upserting by id, after checking every row
// and reference. A file with one bad row is refused whole, with a message
// naming the row.
//
// The file's podMetrics and podHistograms entries are checked by package
// podmetrics (CheckSamples), which owns samples: ingestion
// (POST /api/v1/metrics/samples) takes entries in the same shape with the
// same checks, so that a sample the loader takes is taken there too.
package dataset

import (
	"encoding/json"

	"gpugraph/internal/services/podmetrics"
	"gpugraph/models"
)

// File is the fixture format; every key is optional.
type File struct {
	GPUModels     []models.GPUModel            `json:"gpuModels"`
	InstanceTypes []models.InstanceType        `json:"instanceTypes"`
	Fabrics       []models.Fabric              `json:"fabrics"`
	Nodes         []Node                       `json:"nodes"`
	Organizations []models.Organization        `json:"organizations"`
	APIKeys       []APIKey                     `json:"apiKeys"`
	Credits       []Credit                     `json:"credits"`
	VMs           []VM                         `json:"vms"`
	Projects      []models.Project             `json:"projects"`
	Workloads     []models.Workload            `json:"workloads"`
	Revisions     []models.Revision            `json:"revisions"`
	Pods          []models.Pod                 `json:"pods"`
	PodMetrics    []podmetrics.MetricSeries    `json:"podMetrics"`
	PodHistograms []podmetrics.HistogramSeries `json:"podHistograms"`
}

// Node is a node row with its GPUs inline.
type Node struct {
	models.Node
	GPUs []models.GPU `json:"gpus"`
}

// APIKey is a key as a fixture names it: the token in clear, stored hashed.
type APIKey struct {
	Token          string   `json:"token"`
	OrganizationID string   `json:"organizationId"`
	Permissions    []string `json:"permissions"`
}

// Credit is a credit to an organization's ledger (docs/decisions/0042-metering.md):
// its first makes the organization prepaid. Key is its idempotency key,
// unique per organization: a file loaded again appends it once, dated
// when it was first loaded.
type Credit struct {
	OrganizationID string `json:"organizationId"`
	Key            string `json:"key"`
	AmountCents    int64  `json:"amountCents"`
	Reason         string `json:"reason"`
}

// VM is a VM row with the GPUs it holds. gpuManufacturer and gpuModelName
// are read from the catalog, so a fixture's copies of them are ignored.
type VM struct {
	models.VM
	GPUIDs []string `json:"gpuIds"`
}

// Parse reads a fixture file.
func Parse(b []byte) (*File, error) {
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, &Error{Row: "file", Msg: "not a fixture file: " + err.Error()}
	}
	return &f, nil
}

// Error names the row a fixture was refused for.
type Error struct {
	Row string // e.g. `vms[3] (id "vm-4")`
	Msg string
}

func (e *Error) Error() string { return "fixture refused: " + e.Row + ": " + e.Msg }
