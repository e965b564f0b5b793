// Package format is the fixture format (the data set file that package
// dataset loads) as a writer spells it: every section and every key in the
// order the file lists them, instants as exact text. The demo generator
// (demo/gen) writes these types; dataset.Parse reads the same keys into rows
// of package models, and dataset's tests hold the two to the same keys.
package format

import (
	"bytes"
	"encoding/json"

	"gpugraph/models"
)

// Instant is an instant as the file spells it, e.g. "2024-06-02T03:49:52.500Z":
// a writer keeps the exact text it means (UTC, a fixed number of fraction
// digits), which time.Time's encoder would not (it drops trailing zeros).
// The loader reads any RFC 3339 instant with a zone.
type Instant string

// Fixture is the whole file; the field order is the order of the sections.
type Fixture struct {
	GPUModels     []GPUModel        `json:"gpuModels"`
	InstanceTypes []InstanceType    `json:"instanceTypes"`
	Fabrics       []*Fabric         `json:"fabrics"`
	Nodes         []*Node           `json:"nodes"`
	Organizations []Organization    `json:"organizations"`
	APIKeys       []APIKey          `json:"apiKeys"`
	Credits       []Credit          `json:"credits"`
	VMs           []*VM             `json:"vms"`
	Projects      []Project         `json:"projects"`
	Workloads     []*Workload       `json:"workloads"`
	Revisions     []Revision        `json:"revisions"`
	Pods          []*Pod            `json:"pods"`
	PodMetrics    []MetricSeries    `json:"podMetrics"`
	PodHistograms []HistogramSeries `json:"podHistograms"`
}

type GPUModel struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Manufacturer string `json:"manufacturer"`
	MemoryGb     int    `json:"memoryGb"`
}

// InstanceType is an entry of the instance type catalog; GPUModelID is
// nil on a CPU-only type.
type InstanceType struct {
	Name              string  `json:"name"`
	GPUModelID        *string `json:"gpuModelId"`
	GPUCount          int     `json:"gpuCount"`
	CPUCores          int     `json:"cpuCores"`
	RAMGb             int     `json:"ramGb"`
	DiskSizeGb        int     `json:"diskSizeGb"`
	VolumeGb          int     `json:"volumeGb"`
	PricePerHourCents int     `json:"pricePerHourCents"`
	Description       string  `json:"description"`
}

type Fabric struct {
	ID         string `json:"id"`
	IPCapacity int    `json:"ipCapacity"`
}

type Node struct {
	ID              string   `json:"id"`
	Name            string   `json:"name"`
	ClusterID       string   `json:"clusterId"`
	NodePool        string   `json:"nodePool"`
	Status          string   `json:"status"`
	AgentVersion    string   `json:"agentVersion"`
	FabricID        *string  `json:"fabricId"`
	CPUCores        int      `json:"cpuCores"`
	RAMGb           int      `json:"ramGb"`
	DiskGb          int      `json:"diskGb"`
	LeavingAt       *Instant `json:"leavingAt"`
	LastHeartbeatAt *Instant `json:"lastHeartbeatAt"`
	GPUs            []*GPU   `json:"gpus"`
}

type GPU struct {
	ID           string  `json:"id"`
	Index        int     `json:"index"`
	UUID         string  `json:"uuid"`
	Address      string  `json:"address"`
	ModelID      string  `json:"modelId"`
	Health       string  `json:"health"`
	FailedReason *string `json:"failedReason"`
}

type Organization struct {
	ID                string `json:"id"`
	Name              string `json:"name"`
	TenantID          int    `json:"tenantId"`
	InfinibandEnabled bool   `json:"infinibandEnabled"`
}

type APIKey struct {
	Token          string   `json:"token"`
	OrganizationID string   `json:"organizationId"`
	Permissions    []string `json:"permissions"`
}

// Credit is a credit to an organization's ledger, in whole cents; Key is
// its idempotency key, unique per organization.
type Credit struct {
	OrganizationID string `json:"organizationId"`
	Key            string `json:"key"`
	AmountCents    int64  `json:"amountCents"`
	Reason         string `json:"reason"`
}

// VM is OpenRelay's VM object plus where it is placed: its node and the GPUs
// it holds. gpuManufacturer and gpuModelName are written for a reader's
// sake; the loader reads them from the catalog instead.
type VM struct {
	ID                string   `json:"id"`
	Name              string   `json:"name"`
	OrganizationID    string   `json:"organizationId"`
	Status            string   `json:"status"`
	StatusReason      string   `json:"statusReason"`
	CapabilityTier    string   `json:"capabilityTier"`
	ComputeClass      string   `json:"computeClass"`
	CreatedAt         Instant  `json:"createdAt"`
	DiskSizeGb        int      `json:"diskSizeGb"`
	EndpointURL       string   `json:"endpointUrl"`
	GPUCount          int      `json:"gpuCount"`
	GPUManufacturer   string   `json:"gpuManufacturer"`
	GPUModelID        string   `json:"gpuModelId"`
	GPUModelName      string   `json:"gpuModelName"`
	ImageURL          string   `json:"imageUrl"`
	ManagedBy         string   `json:"managedBy"`
	PricePerHourCents int      `json:"pricePerHourCents"`
	ProvisioningStage string   `json:"provisioningStage"`
	Public            bool     `json:"public"`
	ResourceSize      string   `json:"resourceSize"`
	ServiceType       string   `json:"serviceType"`
	Tier              string   `json:"tier"`
	VolumeGb          int      `json:"volumeGb"`
	NodeID            *string  `json:"nodeId"`
	GPUIDs            []string `json:"gpuIds"`
	CPUCores          int      `json:"cpuCores"`
	RAMGb             int      `json:"ramGb"`
	TearingDown       bool     `json:"tearingDown"`
	InterruptedAt     *Instant `json:"interruptedAt"`
}

type Project struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	TenantID int    `json:"tenantId"`
}

// Workload's TenantID names its project's tenant where the project id is
// more than one tenant's; left out (0), the loader takes the one tenant
// whose project has that id.
type Workload struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	ProjectID string `json:"projectId"`
	ClusterID string `json:"clusterId"`
	TenantID  int    `json:"tenantId,omitempty"`
}

type Revision struct {
	ID         string `json:"id"`
	WorkloadID string `json:"workloadId"`
}

// Pod is Run:ai's pod object as the REST API answers it with verbosity=full,
// keys in the seed's order. It mirrors models.Pod, the one declaration of
// the pod, key for key; it stays a type of its own because a writer fixes
// the seed's key order and spells instants as exact text (Instant), and a
// fixture writes a value where the row may hold null (projectId, the
// resources, nodeAffinity). TestFormatPodKeys holds its keys to models.Pod's.
type Pod struct {
	Name               string             `json:"name"`
	PriorityClassName  string             `json:"priorityClassName"`
	ID                 string             `json:"id"`
	WorkloadID         string             `json:"workloadId"`
	RevisionID         *string            `json:"revisionId"`
	ClusterID          string             `json:"clusterId"`
	ProjectID          string             `json:"projectId"`
	NodeName           *string            `json:"nodeName"`
	CreatedAt          Instant            `json:"createdAt"`
	CompletedAt        *Instant           `json:"completedAt"`
	Containers         []Container        `json:"containers"`
	CurrentNodePool    *string            `json:"currentNodePool"`
	RequestedNodePools []string           `json:"requestedNodePools"`
	RequestedResources RequestedResources `json:"requestedResources"`
	AllocatedResources AllocatedResources `json:"allocatedResources"`
	Tolerations        []Toleration       `json:"tolerations"`
	K8sPhase           string             `json:"k8sPhase"`
	IP                 *string            `json:"ip"`
	Task               *string            `json:"task"`
	NodeAffinity       NodeAffinity       `json:"nodeAffinity"`
	TenantID           int                `json:"tenantId"`
	K8sPhaseUpdatedAt  Instant            `json:"k8sPhaseUpdatedAt"`
	UpdatedAt          Instant            `json:"updatedAt"`
	DeletedAt          *Instant           `json:"deletedAt"`
	ProjectName        string             `json:"projectName"`
	WorkloadName       string             `json:"workloadName"`
}

type Container struct {
	Name      string   `json:"name"`
	Image     string   `json:"image"`
	StartedAt *Instant `json:"startedAt"`
}

type RequestedResources struct {
	GPURequestType    *string            `json:"gpuRequestType"`
	GPU               *Cores             `json:"gpu"`
	GPUMemory         *Quantity          `json:"gpuMemory"`
	CPU               *Cores             `json:"cpu"`
	CPUMemory         *Quantity          `json:"cpuMemory"`
	ExtendedResources []ExtendedResource `json:"extendedResources"`
}

// Cores and Quantity are the row's: the file spells them the same way.
type (
	Cores    = models.RequestResourceCores
	Quantity = models.RequestResourceQuantity
)

// ExtendedResource writes quantity as a string, as Run:ai's schema types it.
type ExtendedResource struct {
	Resource string `json:"resource"`
	Quantity string `json:"quantity"`
	Exclude  bool   `json:"exclude"`
}

type AllocatedResources struct {
	GPU               *float64           `json:"gpu"`
	GPUMemory         *string            `json:"gpuMemory"`
	CPU               *float64           `json:"cpu"`
	CPUMemory         *string            `json:"cpuMemory"`
	ExtendedResources []ExtendedResource `json:"extendedResources"`
}

// Toleration writes tolerationSeconds as an integer, as Run:ai's schema
// types it (its own example writes "10"). It mirrors models.PodToleration
// with strings where the row has pointers: a fixture writes every key, ""
// rather than null (TestFormatPodKeys holds its keys to the row's).
type Toleration struct {
	Key               string `json:"key"`
	Operator          string `json:"operator"`
	Value             string `json:"value"`
	Effect            string `json:"effect"`
	TolerationSeconds *int   `json:"tolerationSeconds"`
}

// NodeAffinity and its terms mirror models.PodNodeAffinity's, with values
// where the row has pointers (a preferred term's weight and preference): a
// fixture writes them, never null. A match expression is the row's.
type NodeAffinity struct {
	Required  *RequiredTerms  `json:"required"`
	Preferred *PreferredTerms `json:"preferred"`
}

type RequiredTerms struct {
	NodeSelectorTerms []SelectorTerm `json:"nodeSelectorTerms"`
}

type PreferredTerms struct {
	NodeSelectorTerms []PreferredTerm `json:"nodeSelectorTerms"`
}

type SelectorTerm struct {
	MatchExpressions []MatchExpression `json:"matchExpressions"`
}

type PreferredTerm struct {
	Weight     float64      `json:"weight"`
	Preference SelectorTerm `json:"preference"`
}

type MatchExpression = models.MatchExpression

type MetricSeries struct {
	PodID   string            `json:"podId"`
	Type    string            `json:"type"`
	Labels  map[string]string `json:"labels"`
	Samples [][2]string       `json:"samples"`
}

type HistogramSeries struct {
	PodID   string            `json:"podId"`
	Type    string            `json:"type"`
	Samples []HistogramSample `json:"samples"`
}

type HistogramSample struct {
	Timestamp Instant `json:"timestamp"`
	Buckets   Buckets `json:"buckets"`
}

// Buckets are cumulative counts by upper bound. They are written in bound
// order with "+Inf" last, as Prometheus and the seed list them; a Go map
// would sort "+Inf" first and "10.0" before "2.0".
type Buckets []Bucket

type Bucket struct {
	Bound, Count string
}

func (b Buckets) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, x := range b {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(x.Bound)
		v, _ := json.Marshal(x.Count)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
