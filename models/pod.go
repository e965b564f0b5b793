package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Pod is the Run:ai pod object, field for field. Nested objects are kept as
// JSON columns: they are served, never filtered or sorted on.
// WorkloadName and ProjectName copy the names of its workload and project so
// that search needs no join.
type Pod struct {
	ID                 string               `gorm:"primaryKey" json:"id"`
	Name               string               `json:"name"`
	PriorityClassName  string               `json:"priorityClassName"`
	WorkloadID         string               `json:"workloadId"`
	RevisionID         *string              `json:"revisionId"`
	ClusterID          string               `json:"clusterId"`
	ProjectID          *string              `json:"projectId"`
	NodeName           *string              `json:"nodeName"`
	CreatedAt          time.Time            `gorm:"autoCreateTime:false" json:"createdAt"`
	CompletedAt        *time.Time           `json:"completedAt"`
	Containers         []Container          `gorm:"serializer:json" json:"containers"`
	CurrentNodePool    *string              `json:"currentNodePool"`
	RequestedNodePools []string             `gorm:"serializer:json" json:"requestedNodePools"`
	RequestedResources *PodRequestResources `gorm:"serializer:json" json:"requestedResources"`
	AllocatedResources *AllocatedResources  `gorm:"serializer:json" json:"allocatedResources"`
	Tolerations        []PodToleration      `gorm:"serializer:json" json:"tolerations"`
	K8sPhase           string               `gorm:"column:k8s_phase" json:"k8sPhase"`
	IP                 *string              `gorm:"column:ip" json:"ip"`
	Task               *string              `json:"task"`
	NodeAffinity       *PodNodeAffinity     `gorm:"serializer:json" json:"nodeAffinity"`
	TenantID           int                  `json:"tenantId"`
	K8sPhaseUpdatedAt  time.Time            `gorm:"column:k8s_phase_updated_at" json:"k8sPhaseUpdatedAt"`
	UpdatedAt          time.Time            `gorm:"autoUpdateTime:false" json:"updatedAt"`
	DeletedAt          *time.Time           `json:"deletedAt"`
	ProjectName        *string              `json:"projectName"`
	WorkloadName       *string              `json:"workloadName"`
	// SearchText is the case-folded search key (see podsearch.go); it is
	// kept by the store on every write and never read from or written to JSON.
	SearchText string `json:"-"`
}

// Container is one container of a pod.
type Container struct {
	Name      string     `json:"name"`
	Image     string     `json:"image"`
	StartedAt *time.Time `json:"startedAt"`
}

// PodRequestResources is what a pod asked for.
type PodRequestResources struct {
	// GPURequestType is left out when unknown: Run:ai's schema declares it
	// a nullable enum of portion and memory, and strict OpenAPI 3.0.3
	// validators refuse null because the enum does not list it.
	GPURequestType    *string                  `json:"gpuRequestType,omitempty"`
	GPU               *RequestResourceCores    `json:"gpu"`
	GPUMemory         *RequestResourceQuantity `json:"gpuMemory"`
	CPU               *RequestResourceCores    `json:"cpu"`
	CPUMemory         *RequestResourceQuantity `json:"cpuMemory"`
	ExtendedResources []ExtendedResource       `json:"extendedResources"`
}

// RequestResourceCores is a limit and request in (fractions of) devices or cores.
type RequestResourceCores struct {
	Limit   *float64 `json:"limit"`
	Request *float64 `json:"request"`
}

// RequestResourceQuantity is a limit and request as Kubernetes quantities ("2G").
type RequestResourceQuantity struct {
	Limit   *string `json:"limit"`
	Request *string `json:"request"`
}

// ExtendedResource is a quantity of a vendor resource.
type ExtendedResource struct {
	Resource *string `json:"resource"`
	Quantity *string `json:"quantity"`
	Exclude  *bool   `json:"exclude"`
}

// AllocatedResources is what the scheduler gave a pod.
type AllocatedResources struct {
	GPU               *float64           `json:"gpu"`
	GPUMemory         *string            `json:"gpuMemory"`
	CPU               *float64           `json:"cpu"`
	CPUMemory         *string            `json:"cpuMemory"`
	ExtendedResources []ExtendedResource `json:"extendedResources"`
}

// PodToleration is a Kubernetes toleration.
type PodToleration struct {
	Key               *string `json:"key"`
	Operator          *string `json:"operator"`
	Value             *string `json:"value"`
	Effect            *string `json:"effect"`
	TolerationSeconds *int    `json:"tolerationSeconds"`
}

// PodNodeAffinity holds a pod's required and preferred node selector terms.
type PodNodeAffinity struct {
	Required  *NodeAffinityRequired  `json:"required"`
	Preferred *NodeAffinityPreferred `json:"preferred"`
}

type NodeAffinityRequired struct {
	NodeSelectorTerms []NodeSelectorTerm `json:"nodeSelectorTerms"`
}

type NodeAffinityPreferred struct {
	NodeSelectorTerms []PreferredNodeSelectorTerm `json:"nodeSelectorTerms"`
}

type NodeSelectorTerm struct {
	MatchExpressions []MatchExpression `json:"matchExpressions"`
}

type MatchExpression struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

type PreferredNodeSelectorTerm struct {
	Weight     *float64          `json:"weight"`
	Preference *NodeSelectorTerm `json:"preference"`
}

// UnmarshalJSON reads quantity as a string or a number: the Run:ai schema
// types it as a string while its own example writes a number (2). It is
// always written back as a string, so answers validate against the schema.
func (e *ExtendedResource) UnmarshalJSON(b []byte) error {
	type plain ExtendedResource
	var raw struct {
		plain
		Quantity json.RawMessage `json:"quantity"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*e = ExtendedResource(raw.plain)
	q, err := flexString(raw.Quantity)
	if err != nil {
		return fmt.Errorf("extendedResources quantity: %w", err)
	}
	e.Quantity = q
	return nil
}

// UnmarshalJSON reads tolerationSeconds as an integer or a string of one:
// the Run:ai schema types it as an integer while its own example writes
// "10". It is always written back as an integer.
func (p *PodToleration) UnmarshalJSON(b []byte) error {
	type plain PodToleration
	var raw struct {
		plain
		TolerationSeconds json.RawMessage `json:"tolerationSeconds"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*p = PodToleration(raw.plain)
	s, err := flexString(raw.TolerationSeconds)
	if err != nil || s == nil {
		return err
	}
	n, err := strconv.Atoi(*s)
	if err != nil {
		return fmt.Errorf("tolerationSeconds %q is not an integer", *s)
	}
	p.TolerationSeconds = &n
	return nil
}

// flexString reads a JSON string or number as its text; null or absent is nil.
func flexString(b json.RawMessage) (*string, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return nil, nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, err
		}
		return &s, nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return nil, fmt.Errorf("want a string or a number, got %s", b)
	}
	s := n.String()
	return &s, nil
}
