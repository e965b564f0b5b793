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
}

// Container is one container of a pod.
type Container struct {
	Name      string     `json:"name"`
	Image     string     `json:"image"`
	StartedAt *time.Time `json:"startedAt"`
}

// PodRequestResources is what a pod asked for.
type PodRequestResources struct {
	GpuRequestType    *string                  `json:"gpuRequestType"`
	Gpu               *RequestResourceCores    `json:"gpu"`
	GpuMemory         *RequestResourceQuantity `json:"gpuMemory"`
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
	Resource *string   `json:"resource"`
	Quantity *Quantity `json:"quantity"`
	Exclude  *bool     `json:"exclude"`
}

// AllocatedResources is what the scheduler gave a pod.
type AllocatedResources struct {
	Gpu               *float64           `json:"gpu"`
	GpuMemory         *string            `json:"gpuMemory"`
	CPU               *float64           `json:"cpu"`
	CPUMemory         *string            `json:"cpuMemory"`
	ExtendedResources []ExtendedResource `json:"extendedResources"`
}

// PodToleration is a Kubernetes toleration.
type PodToleration struct {
	Key               *string  `json:"key"`
	Operator          *string  `json:"operator"`
	Value             *string  `json:"value"`
	Effect            *string  `json:"effect"`
	TolerationSeconds *Seconds `json:"tolerationSeconds"`
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

// Quantity is a Kubernetes quantity. The Run:ai schema types it as a string
// while its own example writes a number (2), so both are read and a string
// is always written.
type Quantity string

func (q *Quantity) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*q = Quantity(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("quantity must be a string or a number")
	}
	*q = Quantity(n.String())
	return nil
}

// Seconds is a toleration's tolerationSeconds. The Run:ai schema types it as
// an integer while its own example writes a string ("10"), so both are read
// and an integer is always written.
type Seconds int64

func (s *Seconds) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		b = []byte(str)
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("tolerationSeconds must be an integer")
	}
	*s = Seconds(n)
	return nil
}
