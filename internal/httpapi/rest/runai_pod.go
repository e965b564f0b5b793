package rest

import (
	"time"

	"gpugraph/models"
)

// runaiPod is the seed's pod object, key for key and in the seed's order.
// Where the Run:ai schema allows null, an unknown value is null; where it
// does not, the key is left out (projectId, and projectName and
// workloadName even with verbosity=full) or, for lists, written empty, so
// every answer validates against the official schema. Its keys are the
// pod-field registry's (podfield) fields that have a column; TestRunaiPodKeys
// keeps the two together. It mirrors models.Pod, the one declaration of the
// pod, and stays a type of its own because the answer fixes the seed's key
// order, writes instants as RFC 3339 text with milliseconds, and leaves out
// what the row holds as null; TestRunaiPodMirrorsModel holds its keys to
// models.Pod's.
type runaiPod struct {
	Name               string                      `json:"name"`
	PriorityClassName  string                      `json:"priorityClassName"`
	ID                 string                      `json:"id"`
	WorkloadID         string                      `json:"workloadId"`
	RevisionID         *string                     `json:"revisionId"`
	ClusterID          string                      `json:"clusterId"`
	ProjectID          *string                     `json:"projectId,omitempty"`
	NodeName           *string                     `json:"nodeName"`
	CreatedAt          string                      `json:"createdAt"`
	CompletedAt        *string                     `json:"completedAt"`
	Containers         []runaiContainer            `json:"containers"`
	CurrentNodePool    *string                     `json:"currentNodePool"`
	RequestedNodePools []string                    `json:"requestedNodePools"`
	RequestedResources *models.PodRequestResources `json:"requestedResources"`
	AllocatedResources *models.AllocatedResources  `json:"allocatedResources"`
	Tolerations        []runaiToleration           `json:"tolerations"`
	K8sPhase           string                      `json:"k8sPhase"`
	IP                 *string                     `json:"ip"`
	Task               *string                     `json:"task"`
	NodeAffinity       runaiNodeAffinity           `json:"nodeAffinity"`
	TenantID           int                         `json:"tenantId"`
	K8sPhaseUpdatedAt  string                      `json:"k8sPhaseUpdatedAt"`
	UpdatedAt          string                      `json:"updatedAt"`
	DeletedAt          *string                     `json:"deletedAt"`
	ProjectName        *string                     `json:"projectName,omitempty"`
	WorkloadName       *string                     `json:"workloadName,omitempty"`
}

type runaiContainer struct {
	Name      string  `json:"name"`
	Image     string  `json:"image"`
	StartedAt *string `json:"startedAt"`
}

// runaiToleration is models.PodToleration (converted from it) leaving out
// the strings the schema types as non-null strings when they are unknown,
// as Kubernetes does.
type runaiToleration struct {
	Key               *string `json:"key,omitempty"`
	Operator          *string `json:"operator,omitempty"`
	Value             *string `json:"value,omitempty"`
	Effect            *string `json:"effect,omitempty"`
	TolerationSeconds *int    `json:"tolerationSeconds"`
}

// The node affinity types keep an empty list as [] and leave an unknown
// one out (a pointer to a slice: omitempty drops only the nil pointer), so
// a fixture's affinity comes back as it went in. They mirror
// models.PodNodeAffinity's, which writes null for a nil list.
type runaiNodeAffinity struct {
	Required  *runaiRequired  `json:"required"`
	Preferred *runaiPreferred `json:"preferred"`
}

type runaiRequired struct {
	NodeSelectorTerms *[]runaiTerm `json:"nodeSelectorTerms,omitempty"`
}

type runaiPreferred struct {
	NodeSelectorTerms *[]runaiPreferredTerm `json:"nodeSelectorTerms,omitempty"`
}

type runaiTerm struct {
	MatchExpressions *[]runaiMatchExpression `json:"matchExpressions,omitempty"`
}

type runaiMatchExpression struct {
	Key      string    `json:"key"`
	Operator string    `json:"operator"`
	Values   *[]string `json:"values,omitempty"`
}

type runaiPreferredTerm struct {
	Weight     *float64   `json:"weight,omitempty"`
	Preference *runaiTerm `json:"preference"`
}

// newRunaiPods writes a list of pods as the REST face answers them.
func newRunaiPods(pods []*models.Pod, full bool) []runaiPod {
	out := make([]runaiPod, len(pods))
	for i, p := range pods {
		out[i] = newRunaiPod(p, full)
	}
	return out
}

// newRunaiPod writes p as the REST face answers it; full adds projectName
// and workloadName (verbosity=full).
func newRunaiPod(p *models.Pod, full bool) runaiPod {
	out := runaiPod{
		Name:               p.Name,
		PriorityClassName:  p.PriorityClassName,
		ID:                 p.ID,
		WorkloadID:         p.WorkloadID,
		RevisionID:         p.RevisionID,
		ClusterID:          p.ClusterID,
		ProjectID:          p.ProjectID,
		NodeName:           p.NodeName,
		CreatedAt:          models.FormatTime(p.CreatedAt),
		CompletedAt:        timeOrNil(p.CompletedAt),
		Containers:         make([]runaiContainer, len(p.Containers)),
		CurrentNodePool:    p.CurrentNodePool,
		RequestedNodePools: p.RequestedNodePools,
		RequestedResources: p.RequestedResources,
		AllocatedResources: p.AllocatedResources,
		Tolerations:        make([]runaiToleration, len(p.Tolerations)),
		K8sPhase:           p.K8sPhase,
		IP:                 p.IP,
		Task:               p.Task,
		NodeAffinity:       newRunaiNodeAffinity(p.NodeAffinity),
		TenantID:           p.TenantID,
		K8sPhaseUpdatedAt:  models.FormatTime(p.K8sPhaseUpdatedAt),
		UpdatedAt:          models.FormatTime(p.UpdatedAt),
		DeletedAt:          timeOrNil(p.DeletedAt),
	}
	if out.RequestedNodePools == nil {
		out.RequestedNodePools = []string{}
	}
	for i, c := range p.Containers {
		out.Containers[i] = runaiContainer{Name: c.Name, Image: c.Image, StartedAt: timeOrNil(c.StartedAt)}
	}
	for i, t := range p.Tolerations {
		out.Tolerations[i] = runaiToleration(t)
	}
	if full {
		out.ProjectName, out.WorkloadName = p.ProjectName, p.WorkloadName
	}
	return out
}

func newRunaiNodeAffinity(a *models.PodNodeAffinity) runaiNodeAffinity {
	var out runaiNodeAffinity
	if a == nil {
		return out
	}
	if a.Required != nil {
		out.Required = &runaiRequired{NodeSelectorTerms: mapList(a.Required.NodeSelectorTerms, newRunaiTerm)}
	}
	if a.Preferred != nil {
		out.Preferred = &runaiPreferred{NodeSelectorTerms: mapList(a.Preferred.NodeSelectorTerms,
			func(t models.PreferredNodeSelectorTerm) runaiPreferredTerm {
				pt := runaiPreferredTerm{Weight: t.Weight}
				if t.Preference != nil {
					term := newRunaiTerm(*t.Preference)
					pt.Preference = &term
				}
				return pt
			})}
	}
	return out
}

func newRunaiTerm(t models.NodeSelectorTerm) runaiTerm {
	return runaiTerm{MatchExpressions: mapList(t.MatchExpressions, func(m models.MatchExpression) runaiMatchExpression {
		e := runaiMatchExpression{Key: m.Key, Operator: m.Operator}
		if m.Values != nil {
			e.Values = &m.Values
		}
		return e
	})}
}

// mapList maps a list, keeping nil apart from empty.
func mapList[T, U any](in []T, f func(T) U) *[]U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return &out
}

// timeOrNil writes an instant the REST way (RFC 3339 UTC, ms), nil as null.
func timeOrNil(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := models.FormatTime(*t)
	return &s
}
