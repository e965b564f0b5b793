package clusterbatch

import (
	"fmt"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
	"gpugraph/models"
)

// Bounds of one batch. A snapshot of a larger cluster is sent in parts
// ("more": true on every part but the last); MaxBody fits MaxPods pods of
// a few containers each with room to spare.
const (
	MaxBody       = 16 << 20
	MaxPods       = 5000
	MaxWorkloads  = 5000
	MaxProjects   = 1000
	MaxDeletedIDs = 5000
)

// Kinds of a batch.
const (
	KindSnapshot = "snapshot"
	KindDelta    = "delta"
)

// Batch is one POST's body.
type Batch struct {
	// Sequence is the connector's, greater than the last it sent.
	Sequence int64 `json:"sequence"`
	// Kind is snapshot (the cluster's whole set, maybe in parts) or delta.
	Kind string `json:"kind"`
	// More says a snapshot's parts are not all sent yet.
	More      bool       `json:"more"`
	Projects  []Project  `json:"projects"`
	Workloads []Workload `json:"workloads"`
	Pods      []Pod      `json:"pods"`
	// DeletedPodIDs are pods gone whose last state the connector lost (a
	// watch's tombstone): they are marked deleted at the batch's time.
	DeletedPodIDs []string `json:"deletedPodIds"`
}

// Project is a Run:ai project as a cluster knows it.
type Project struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Workload is a Run:ai workload as a cluster knows it.
type Workload struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	ProjectID string `json:"projectId"`
}

// Pod is Run:ai's pod object, every field the Pods API answers that a
// cluster knows (the names of its workload and project come from the
// workloads and projects, its updatedAt from the server). It mirrors
// models.Pod, the one declaration of the pod, with its nested types; it
// stays a type of its own because the batch is read strictly and must
// refuse the fields the server owns (tenantId, updatedAt, projectName,
// workloadName), which embedding models.Pod would accept. TestPodKeys
// holds its keys to models.Pod's.
type Pod struct {
	Name               string                      `json:"name"`
	ID                 string                      `json:"id"`
	WorkloadID         string                      `json:"workloadId"`
	RevisionID         *string                     `json:"revisionId"`
	ProjectID          *string                     `json:"projectId"`
	Task               *string                     `json:"task"`
	ClusterID          string                      `json:"clusterId"`
	NodeName           *string                     `json:"nodeName"`
	CreatedAt          time.Time                   `json:"createdAt"`
	CompletedAt        *time.Time                  `json:"completedAt"`
	Containers         []models.Container          `json:"containers"`
	CurrentNodePool    *string                     `json:"currentNodePool"`
	RequestedNodePools []string                    `json:"requestedNodePools"`
	RequestedResources *models.PodRequestResources `json:"requestedResources"`
	AllocatedResources *models.AllocatedResources  `json:"allocatedResources"`
	Tolerations        []models.PodToleration      `json:"tolerations"`
	K8sPhase           string                      `json:"k8sPhase"`
	K8sPhaseUpdatedAt  time.Time                   `json:"k8sPhaseUpdatedAt"`
	IP                 *string                     `json:"ip"`
	NodeAffinity       *models.PodNodeAffinity     `json:"nodeAffinity"`
	PriorityClassName  string                      `json:"priorityClassName"`
	DeletedAt          *time.Time                  `json:"deletedAt"`
}

// Parse reads and checks a batch body: strict JSON (a member the batch
// has no field for, a name given twice, a wrong type: 400 naming where),
// then every bound and required field, named by its place
// ("pods[3].workloadId").
func Parse(body []byte) (*Batch, error) {
	var b Batch
	if err := bounds.DecodeJSON("the batch", body, &b, bounds.KnownMembers); err != nil {
		return nil, err
	}
	return &b, b.check()
}

func (b *Batch) check() error {
	switch {
	case b.Sequence <= 0:
		return apierr.BadRequest("sequence %d must be a positive whole number, greater than the cluster's last", b.Sequence)
	case b.Kind != KindSnapshot && b.Kind != KindDelta:
		return apierr.BadRequest("kind %q must be %q or %q", b.Kind, KindSnapshot, KindDelta)
	case b.More && b.Kind != KindSnapshot:
		return apierr.BadRequest("more is for a snapshot's parts; a delta is whole")
	case len(b.Pods) > MaxPods:
		return tooMany("pods", len(b.Pods), MaxPods)
	case len(b.Workloads) > MaxWorkloads:
		return tooMany("workloads", len(b.Workloads), MaxWorkloads)
	case len(b.Projects) > MaxProjects:
		return tooMany("projects", len(b.Projects), MaxProjects)
	case len(b.DeletedPodIDs) > MaxDeletedIDs:
		return tooMany("deletedPodIds", len(b.DeletedPodIDs), MaxDeletedIDs)
	case b.Kind == KindSnapshot && len(b.DeletedPodIDs) > 0:
		return apierr.BadRequest("deletedPodIds is for a delta: a snapshot removes what it does not name")
	}
	seen := map[string]bool{}
	for i, p := range b.Projects {
		at := fmt.Sprintf("projects[%d]", i)
		if err := all(name(at+".id", p.ID), text(at+".name", p.Name), once(seen, at+".id", "project", p.ID)); err != nil {
			return err
		}
	}
	for i := range b.Workloads {
		w := &b.Workloads[i]
		at := fmt.Sprintf("workloads[%d]", i)
		if err := uuid(at+".id", &w.ID); err != nil { // lower-cased before once compares it
			return err
		}
		if err := all(text(at+".name", w.Name), name(at+".projectId", w.ProjectID), once(seen, at+".id", "workload", w.ID)); err != nil {
			return err
		}
	}
	for i := range b.Pods {
		if err := b.Pods[i].check(fmt.Sprintf("pods[%d]", i), seen); err != nil {
			return err
		}
	}
	for i := range b.DeletedPodIDs {
		at := fmt.Sprintf("deletedPodIds[%d]", i)
		if err := uuid(at, &b.DeletedPodIDs[i]); err != nil {
			return err
		}
		if err := once(seen, at, "pod", b.DeletedPodIDs[i]); err != nil {
			return err
		}
	}
	return nil
}

// CheckPod is the server's check of one pod, its errors naming the field
// under at ("pods[3]"): a connector checks what it maps before it sends.
// Its UUIDs are left in lower case, as the server stores them.
func CheckPod(at string, p *Pod) error { return p.check(at, map[string]bool{}) }

// check holds p to the bounds, p's ids of Run:ai's "format: uuid" (id,
// workloadId, revisionId, clusterId) to UUIDs, which it lower-cases, and
// every text to what PostgreSQL's text holds (no NUL, valid UTF-8; the
// body's decoding refuses those first, a connector's check here).
func (p *Pod) check(at string, seen map[string]bool) error {
	// Each UUID is lower-cased before anything reads it (once compares the id).
	err := all(uuid(at+".id", &p.ID), text(at+".name", p.Name), uuid(at+".workloadId", &p.WorkloadID), uuid(at+".clusterId", &p.ClusterID))
	if err == nil && p.RevisionID != nil {
		err = uuid(at+".revisionId", p.RevisionID)
	}
	if err != nil {
		return err
	}
	err = all(once(seen, at+".id", "pod", p.ID), optName(at+".projectId", p.ProjectID),
		optText(at+".task", p.Task), optText(at+".nodeName", p.NodeName), optText(at+".currentNodePool", p.CurrentNodePool),
		optText(at+".ip", p.IP), text(at+".k8sPhase", p.K8sPhase), bounds.Text(at+".priorityClassName", p.PriorityClassName, bounds.MaxName))
	if err != nil {
		return err
	}
	if p.CreatedAt.IsZero() {
		return apierr.BadRequest("%s.createdAt is required: the pod's creationTimestamp", at)
	}
	if p.K8sPhaseUpdatedAt.IsZero() {
		return apierr.BadRequest("%s.k8sPhaseUpdatedAt is required: when the pod entered its phase", at)
	}
	if len(p.Containers) > 100 {
		return tooMany(at+".containers", len(p.Containers), 100)
	}
	for j, c := range p.Containers {
		f := fmt.Sprintf("%s.containers[%d]", at, j)
		if err := all(text(f+".name", c.Name), bounds.Text(f+".image", c.Image, math.MaxInt)); err != nil {
			return err
		}
	}
	if len(p.RequestedNodePools) > maxListed {
		return tooMany(at+".requestedNodePools", len(p.RequestedNodePools), maxListed)
	}
	for j, np := range p.RequestedNodePools {
		if err := text(fmt.Sprintf("%s.requestedNodePools[%d]", at, j), np); err != nil {
			return err
		}
	}
	if len(p.Tolerations) > maxListed {
		return tooMany(at+".tolerations", len(p.Tolerations), maxListed)
	}
	return all(requested(at+".requestedResources", p.RequestedResources), allocated(at+".allocatedResources", p.AllocatedResources))
}

// Bounds of a pod's lists and amounts: a pod of the largest nodes made
// stays well inside them; beyond them the number is a connector's bug.
const (
	maxListed = 100
	MaxGPUs   = 1024
	MaxCores  = 1 << 20
)

// GPURequestPortion and GPURequestMemory are Run:ai's GpuRequestType
// enum: a pod asks for a portion of a GPU (gpu-fraction) or an amount of
// its memory (gpu-memory).
const (
	GPURequestPortion = "portion"
	GPURequestMemory  = "memory"
)

// requested checks a pod's requestedResources: cores and devices as
// non-negative numbers within bounds, a request no more than its limit,
// memory as Kubernetes quantities Run:ai's pattern takes.
func requested(at string, r *models.PodRequestResources) error {
	if r == nil {
		return nil
	}
	if t := r.GPURequestType; t != nil && *t != GPURequestPortion && *t != GPURequestMemory {
		return apierr.BadRequest("%s.gpuRequestType %q must be %q, %q or absent", at, *t, GPURequestPortion, GPURequestMemory)
	}
	if err := all(cores(at+".gpu", r.GPU, MaxGPUs), cores(at+".cpu", r.CPU, MaxCores)); err != nil {
		return err
	}
	for _, q := range []struct {
		field string
		q     *models.RequestResourceQuantity
	}{{at + ".gpuMemory", r.GPUMemory}, {at + ".cpuMemory", r.CPUMemory}} {
		if q.q == nil {
			continue
		}
		if err := all(Quantity(q.field+".request", q.q.Request), Quantity(q.field+".limit", q.q.Limit)); err != nil {
			return err
		}
		if q.q.Request != nil && q.q.Limit != nil && more(*q.q.Request, *q.q.Limit) {
			return apierr.BadRequest("%s.request %s is more than its limit %s", q.field, *q.q.Request, *q.q.Limit)
		}
	}
	return extended(at+".extendedResources", r.ExtendedResources)
}

// allocated checks a pod's allocatedResources as requested does.
func allocated(at string, r *models.AllocatedResources) error {
	if r == nil {
		return nil
	}
	return all(amount(at+".gpu", r.GPU, MaxGPUs), amount(at+".cpu", r.CPU, MaxCores),
		Quantity(at+".gpuMemory", r.GPUMemory), Quantity(at+".cpuMemory", r.CPUMemory),
		extended(at+".extendedResources", r.ExtendedResources))
}

func cores(at string, c *models.RequestResourceCores, max float64) error {
	if c == nil {
		return nil
	}
	if err := all(amount(at+".request", c.Request, max), amount(at+".limit", c.Limit, max)); err != nil {
		return err
	}
	if c.Request != nil && c.Limit != nil && *c.Request > *c.Limit {
		return apierr.BadRequest("%s.request %v is more than its limit %v", at, *c.Request, *c.Limit)
	}
	return nil
}

func amount(field string, v *float64, max float64) error {
	if v != nil && !(*v >= 0 && *v <= max) {
		return apierr.BadRequest("%s %v must be between 0 and %v", field, *v, max)
	}
	return nil
}

func extended(at string, rs []models.ExtendedResource) error {
	if len(rs) > maxListed {
		return tooMany(at, len(rs), maxListed)
	}
	for j, e := range rs {
		f := fmt.Sprintf("%s[%d]", at, j)
		if e.Resource == nil {
			return apierr.BadRequest("%s.resource is required: the resource's name", f)
		}
		if err := all(text(f+".resource", *e.Resource), Quantity(f+".quantity", e.Quantity)); err != nil {
			return err
		}
	}
	return nil
}

// more reports whether quantity a is more than b, both checked already.
func more(a, b string) bool {
	qa, qb := resource.MustParse(a), resource.MustParse(b)
	return qa.Cmp(qb) > 0
}

// Quantity refuses s unless it is absent or a non-negative Kubernetes
// quantity written as Run:ai's pattern has one, naming field.
func Quantity(field string, s *string) error {
	if s == nil {
		return nil
	}
	if len(*s) > 64 || !models.QuantityPattern.MatchString(*s) {
		return apierr.BadRequest("%s %q is not a quantity as Run:ai writes one: a number and a unit, 16Gi, 500M, 2", field, *s)
	}
	q, err := resource.ParseQuantity(*s)
	if err != nil {
		return apierr.BadRequest("%s %q is not a Kubernetes quantity: a number and a unit, 16Gi, 500M, 2", field, *s)
	}
	if q.Sign() < 0 {
		return apierr.BadRequest("%s %q must not be negative", field, *s)
	}
	return nil
}

func tooMany(field string, n, limit int) error {
	return apierr.BadRequest("%s holds %d entries, more than a batch takes (%d): send them in several batches", field, n, limit)
}

func all(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func name(field, s string) error { return bounds.Name(field, s) }

func text(field, s string) error {
	if s == "" {
		return apierr.BadRequest("%s is required", field)
	}
	return bounds.Text(field, s, 1024)
}

// uuid holds *s to a UUID and leaves it in lower case.
func uuid(field string, s *string) error {
	if *s == "" {
		return apierr.BadRequest("%s is required", field)
	}
	c, err := bounds.UUID(field, *s)
	if err == nil {
		*s = c
	}
	return err
}

func optName(field string, s *string) error {
	if s == nil {
		return nil
	}
	return bounds.Name(field, *s)
}

func optText(field string, s *string) error {
	if s == nil {
		return nil
	}
	return text(field, *s)
}

func once(seen map[string]bool, field, kind, id string) error {
	key := kind + "\x00" + id
	if seen[key] {
		return apierr.BadRequest("%s %q names a %s the batch already holds", field, id, kind)
	}
	seen[key] = true
	return nil
}
