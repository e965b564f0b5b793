package clustersync

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"gpugraph/internal/cluster/clusterbatch"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// Answer is what an applied batch answers, and a replay of it again.
type Answer struct {
	ClusterID     string `json:"clusterId"`
	Sequence      int64  `json:"sequence"`
	Kind          string `json:"kind"`
	PodsCreated   int    `json:"podsCreated"`
	PodsUpdated   int    `json:"podsUpdated"`
	PodsUnchanged int    `json:"podsUnchanged"`
	PodsDeleted   int64  `json:"podsDeleted"`
	Workloads     int    `json:"workloads"`
	Projects      int    `json:"projects"`
	// SnapshotComplete is true on a snapshot's last part: the cluster's
	// pods no part named were marked deleted by it.
	SnapshotComplete bool `json:"snapshotComplete"`
}

// Sync applies the batch body for the cluster clusterID names in the
// path, as the credential's holder id: all of it in one transaction, or
// nothing. It answers the batch's Answer as JSON, the stored one for a
// replay of the cluster's last batch.
func (s *Service) Sync(ctx context.Context, id *Identity, clusterID string, body []byte) ([]byte, error) {
	if c, err := CanonicalClusterID(clusterID); err == nil {
		clusterID = c // the path may spell the id in upper case
	}
	if clusterID != id.ClusterID {
		return nil, apierr.Refused(CodeClusterMismatch, "this credential is cluster %q's; it cannot write cluster %q", id.ClusterID, clusterID)
	}
	b, err := clusterbatch.Parse(body)
	if err != nil {
		return nil, err
	}
	for i, p := range b.Pods { // Parse left their ids in lower case
		if p.ClusterID != id.ClusterID {
			return nil, apierr.Refused(CodeClusterMismatch, "pods[%d].clusterId %q is not this credential's cluster %q", i, p.ClusterID, id.ClusterID)
		}
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	var out []byte
	complete := false
	err = s.store.InTx(ctx, func(tx *store.Txn) error {
		out, complete = nil, false
		state, ok, err := s.store.LockClusterSync(tx, id.ClusterID)
		if err != nil {
			return err
		}
		if !ok || state.TenantID != id.TenantID {
			return apierr.Unauthorized("unknown cluster credential")
		}
		switch {
		case b.Sequence == state.LastSequence && hash == state.LastBodyHash:
			out = []byte(state.LastAnswer)
			return nil
		case b.Sequence == state.LastSequence:
			return current(apierr.Conflict(CodeSequenceReused, "sequence %d was applied already with another body; send the next batch with a sequence above %d",
				b.Sequence, state.LastSequence), state.LastSequence)
		case b.Sequence < state.LastSequence:
			return current(apierr.Conflict(CodeStaleSequence, "sequence %d is older than cluster %q's current sequence %d; send a sequence above %d",
				b.Sequence, id.ClusterID, state.LastSequence, state.LastSequence), state.LastSequence)
		}
		a, err := s.apply(tx, id, &state, b)
		if err != nil {
			return err
		}
		complete = a.SnapshotComplete
		out, err = json.Marshal(a)
		if err != nil {
			return err
		}
		state.LastSequence, state.LastBodyHash, state.LastAnswer = b.Sequence, hash, string(out)
		return s.store.SaveClusterSync(tx, state)
	})
	if err == nil && complete {
		// A snapshot may have written the cluster's every pod: the planner
		// needs statistics of them. The batch is in either way.
		if serr := s.store.RefreshPodStatistics(ctx); serr != nil {
			slog.Warn("pod statistics not refreshed after a cluster snapshot", "cluster", id.ClusterID, "err", serr)
		}
	}
	return out, err
}

// current is e with the cluster's current sequence as its details, in
// decimal: a connector that lost its counter resumes above it without
// reading the message.
func current(e *apierr.Error, seq int64) *apierr.Error {
	e.Details = strconv.FormatInt(seq, 10)
	return e
}

// apply writes b for id's cluster inside tx, updating state's marks.
func (s *Service) apply(tx *store.Txn, id *Identity, state *store.ClusterSync, b *clusterbatch.Batch) (*Answer, error) {
	now := store.Now()
	state.Batches++
	mark := state.Batches
	if b.Kind == clusterbatch.KindSnapshot && state.SnapshotMark == 0 {
		state.SnapshotMark = mark // the first part
	}
	a := &Answer{ClusterID: id.ClusterID, Sequence: b.Sequence, Kind: b.Kind, Workloads: len(b.Workloads), Projects: len(b.Projects)}
	w := store.ClusterWrites{TenantID: id.TenantID, ClusterID: id.ClusterID, Mark: mark}

	// Projects: the tenant's, keyed by tenant and id; another tenant's
	// project of the same id is another project.
	projectNames := map[string]string{}
	ids := make([]string, 0, len(b.Projects))
	for _, p := range b.Projects {
		ids = append(ids, p.ID)
	}
	for _, p := range b.Pods {
		if p.ProjectID != nil {
			ids = append(ids, *p.ProjectID)
		}
	}
	for _, wl := range b.Workloads {
		ids = append(ids, wl.ProjectID)
	}
	projects, err := s.store.ProjectOwners(tx, id.TenantID, ids)
	if err != nil {
		return nil, err
	}
	for _, p := range projects {
		projectNames[p.ID] = p.Name
	}
	added := 0
	for _, p := range b.Projects {
		if _, ok := projects[p.ID]; !ok {
			added++
		}
		projectNames[p.ID] = p.Name
		w.Projects = append(w.Projects, models.Project{ID: p.ID, Name: p.Name, TenantID: id.TenantID})
	}
	if added > 0 {
		n, err := s.store.TenantProjectCount(tx, id.TenantID)
		if err != nil {
			return nil, err
		}
		if n+int64(added) > MaxTenantProjects {
			return nil, apierr.Refused(CodeProjectQuotaExceeded,
				"exceeded quota: the batch's new projects (%d) would give the tenant %d projects, above the bound of %d a tenant may have", added, n+int64(added), MaxTenantProjects)
		}
	}

	// Workloads: new, or this cluster's own, in a project of the tenant.
	workloadNames := map[string]string{}
	ids = ids[:0]
	for _, wl := range b.Workloads {
		ids = append(ids, wl.ID)
	}
	for _, p := range b.Pods {
		ids = append(ids, p.WorkloadID)
	}
	workloads, err := s.store.WorkloadOwners(tx, ids)
	if err != nil {
		return nil, err
	}
	mine := func(o store.Owner) bool { return o.TenantID == id.TenantID && o.ClusterID == id.ClusterID }
	for _, o := range workloads {
		if mine(o) {
			workloadNames[o.ID] = o.Name
		}
	}
	for i, wl := range b.Workloads {
		if o, ok := workloads[wl.ID]; ok && !mine(o) {
			return nil, workloadOfOther(i, wl.ID)
		}
		if _, ok := projectNames[wl.ProjectID]; !ok {
			return nil, apierr.BadRequest("workloads[%d].projectId %q is neither in the batch nor a project this cluster reported", i, wl.ProjectID)
		}
		workloadNames[wl.ID] = wl.Name
		w.Workloads = append(w.Workloads, models.Workload{ID: wl.ID, Name: wl.Name, ProjectID: wl.ProjectID, ClusterID: id.ClusterID, TenantID: id.TenantID})
	}

	// Pods: new, or this cluster's own; written only when they changed,
	// so that updatedAt is the last change's time.
	ids = ids[:0]
	var revIDs []string
	for _, p := range b.Pods {
		ids = append(ids, p.ID)
		if p.RevisionID != nil {
			revIDs = append(revIDs, *p.RevisionID)
		}
	}
	ids = append(ids, b.DeletedPodIDs...)
	stored, err := s.store.StoredPods(tx, ids)
	if err != nil {
		return nil, err
	}
	revisions, err := s.store.RevisionWorkloads(tx, revIDs)
	if err != nil {
		return nil, err
	}
	newRevision := map[string]bool{}
	for i, in := range b.Pods {
		old, known := stored[in.ID]
		if known && (old.TenantID != id.TenantID || old.ClusterID != id.ClusterID) {
			return nil, podOfOther(i, in.ID)
		}
		wname, ok := workloadNames[in.WorkloadID]
		if !ok {
			return nil, apierr.BadRequest("pods[%d].workloadId %q is neither in the batch nor a workload this cluster reported", i, in.WorkloadID)
		}
		var pname *string
		if in.ProjectID != nil {
			n, ok := projectNames[*in.ProjectID]
			if !ok {
				return nil, apierr.BadRequest("pods[%d].projectId %q is neither in the batch nor a project this cluster reported", i, *in.ProjectID)
			}
			pname = &n
		}
		if r := in.RevisionID; r != nil {
			if wid, ok := revisions[*r]; ok && wid != in.WorkloadID {
				return nil, revisionOfOther(i, *r, in.WorkloadID)
			}
			if _, ok := revisions[*r]; !ok && !newRevision[*r] {
				newRevision[*r] = true
				revisions[*r] = in.WorkloadID
				w.Revisions = append(w.Revisions, models.Revision{ID: *r, WorkloadID: in.WorkloadID})
			}
		}
		p := toModel(in, id.TenantID, &wname, pname)
		w.Seen = append(w.Seen, in.ID)
		switch {
		case !known:
			p.UpdatedAt = now
			a.PodsCreated++
		case same(old, &p):
			a.PodsUnchanged++
			continue
		default:
			p.UpdatedAt = now
			a.PodsUpdated++
		}
		w.Pods = append(w.Pods, p)
	}
	if err := s.store.WriteCluster(tx, w); err != nil {
		var taken *store.RowsOfOtherOwner
		if errors.As(err, &taken) {
			return nil, takenRefusal(b, taken)
		}
		return nil, err
	}
	n, err := s.store.MarkPodsDeleted(tx, id.TenantID, id.ClusterID, b.DeletedPodIDs, now)
	if err != nil {
		return nil, err
	}
	a.PodsDeleted = n
	if b.Kind == clusterbatch.KindSnapshot && !b.More {
		n, err := s.store.MarkUnseenPodsDeleted(tx, id.TenantID, id.ClusterID, state.SnapshotMark, now)
		if err != nil {
			return nil, err
		}
		a.PodsDeleted += n
		a.SnapshotComplete = true
		state.SnapshotMark = 0
	}
	return a, nil
}

// The refusals of a row another cluster or tenant holds, whether the
// batch's read found it or its write did (takenRefusal).

func workloadOfOther(i int, id string) error {
	return apierr.Refused(CodeClusterMismatch, "workloads[%d].id %q is a workload of another cluster; this cluster cannot write it", i, id)
}

func podOfOther(i int, id string) error {
	return apierr.Refused(CodeClusterMismatch, "pods[%d].id %q is a pod of another cluster; this cluster cannot write it", i, id)
}

func revisionOfOther(i int, id, workloadID string) error {
	return apierr.BadRequest("pods[%d].revisionId %q is a revision of another workload, not of %q", i, id, workloadID)
}

// takenRefusal is the refusal of the first of b's rows the store's write
// kept for another cluster or tenant (one that committed it after the
// batch read): the answer the read gives once it is committed.
func takenRefusal(b *clusterbatch.Batch, t *store.RowsOfOtherOwner) error {
	switch t.Table {
	case "workloads":
		for i, wl := range b.Workloads {
			if t.IDs[wl.ID] {
				return workloadOfOther(i, wl.ID)
			}
		}
	case "pods":
		for i, p := range b.Pods {
			if t.IDs[p.ID] {
				return podOfOther(i, p.ID)
			}
		}
	case "revisions":
		for i, p := range b.Pods {
			if r := p.RevisionID; r != nil && t.IDs[*r] {
				return revisionOfOther(i, *r, p.WorkloadID)
			}
		}
	}
	return t
}

// toModel is in as the pods table keeps it, times in UTC to the
// microsecond (what both engines store), so that an unchanged pod sent
// again compares equal to its row.
func toModel(in clusterbatch.Pod, tenantID int, workloadName, projectName *string) models.Pod {
	t := func(v time.Time) time.Time { return v.UTC().Truncate(time.Microsecond) }
	tp := func(v *time.Time) *time.Time {
		if v == nil {
			return nil
		}
		u := t(*v)
		return &u
	}
	cs := make([]models.Container, len(in.Containers))
	for i, c := range in.Containers {
		cs[i] = models.Container{Name: c.Name, Image: c.Image, StartedAt: tp(c.StartedAt)}
	}
	return models.Pod{ID: in.ID, Name: in.Name, PriorityClassName: in.PriorityClassName, WorkloadID: in.WorkloadID,
		RevisionID: in.RevisionID, ClusterID: in.ClusterID, ProjectID: in.ProjectID, NodeName: in.NodeName,
		CreatedAt: t(in.CreatedAt), CompletedAt: tp(in.CompletedAt), Containers: cs, CurrentNodePool: in.CurrentNodePool,
		RequestedNodePools: in.RequestedNodePools, RequestedResources: in.RequestedResources,
		AllocatedResources: in.AllocatedResources, Tolerations: in.Tolerations, K8sPhase: in.K8sPhase, IP: in.IP,
		Task: in.Task, NodeAffinity: in.NodeAffinity, TenantID: tenantID, K8sPhaseUpdatedAt: t(in.K8sPhaseUpdatedAt),
		DeletedAt: tp(in.DeletedAt), ProjectName: projectName, WorkloadName: workloadName}
}

// same reports whether p says nothing stored does not: their JSON, but
// for updatedAt, is equal.
func same(stored, p *models.Pod) bool {
	q := *p
	q.UpdatedAt = stored.UpdatedAt
	a, err1 := json.Marshal(stored)
	b, err2 := json.Marshal(&q)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}
