package store

import (
	"context"
	"strings"
	"time"

	"gpugraph/models"
)

// A quiet heartbeat: one that changes nothing of its node but what a
// heartbeat always writes (its last heartbeat, its sequence, its agent's
// version) and its GPUs' samples. Most heartbeats of a fleet are quiet,
// so RecordBeat writes one in a single statement on PostgreSQL (two on
// SQLite), without a transaction of its own or a row lock held across
// round trips, as Kubernetes renews a node's Lease; anything else it
// leaves untouched, for the caller's full report (package nodes).

// Beat is a heartbeat that the caller judged quiet from what the agent
// reported: RecordBeat writes it only where the database agrees.
type Beat struct {
	NodeName string
	// Sequence is written, and must be above the stored one; 0 is a
	// report without one (not checked).
	Sequence     int64
	AgentVersion string // "" leaves the stored one
	At           time.Time
	GPUs         []BeatGPU
	// ResumeFrom and ResumeReason are the rows a report would resume
	// (models.NodeBack's statuses and reason): a node with one is not
	// quiet.
	ResumeFrom   []models.VMStatus
	ResumeReason string
}

// BeatGPU is one GPU of a Beat, by its UUID.
type BeatGPU struct {
	UUID            string
	Failed          bool // reported failed: quiet only where the row is already not healthy
	Utilization     int
	MemoryUsedBytes int64
}

// RecordBeat writes b when it is quiet in the database too: the node
// named b.NodeName is online, its stored sequence is below b's, no row on
// it is tearing down or resumable, every GPU b names is the node's, and
// none it reports failed is healthy. Then it records the heartbeat as
// UpdateNode and AdvanceReportSequence would, writes the samples that
// differ from the stored ones (an unchanged sample is not written again),
// and answers the node's id and agent version. Otherwise it writes
// nothing and answers ok=false. The checks and the node's write are one
// statement (with the samples' on PostgreSQL), so a sweep, a teardown or a
// report that commits first is seen by it; what commits after it finds
// the node as a full report would have left it.
func (s *Store) RecordBeat(ctx context.Context, b Beat) (nodeID, agentVersion string, ok bool, err error) {
	update, args := beatUpdate(b)
	values, vargs := beatSamples(b)
	var rows []struct {
		ID           string
		AgentVersion string
	}
	if s.Dialect == Postgres {
		// One statement: the samples are written only to the node the
		// update found.
		q, qargs := update, args
		if values != "" {
			q = "WITH n AS (" + update + "), " + values + ", s AS (" + sampleUpdate + "FROM n, v WHERE gpus.node_id = n.id AND " + sampleChanged +
				" RETURNING gpus.id) SELECT id, agent_version FROM n"
			qargs = append(append(args, vargs...), b.At)
		}
		if err := s.WithContext(ctx).Raw(q, qargs...).Find(&rows).Error; err != nil || len(rows) == 0 {
			return "", "", false, err
		}
		return rows[0].ID, rows[0].AgentVersion, true, nil
	}
	// SQLite has no update in a WITH: the samples are a second statement,
	// in one transaction with the node's write, so that a heartbeat is
	// filed whole or not at all.
	err = s.InTx(ctx, func(tx *Txn) error {
		if err := tx.db.Raw(update, args...).Find(&rows).Error; err != nil || len(rows) == 0 || values == "" {
			return err
		}
		return tx.db.Exec("WITH "+values+" "+sampleUpdate+"FROM v WHERE gpus.node_id = ? AND "+sampleChanged,
			append(vargs, b.At, rows[0].ID)...).Error
	})
	if err != nil || len(rows) == 0 {
		return "", "", false, err
	}
	return rows[0].ID, rows[0].AgentVersion, true, nil
}

// beatUpdate is RecordBeat's update of the node's row, answering its id
// and agent version.
func beatUpdate(b Beat) (string, []any) {
	set := []string{"last_heartbeat_at = ?", "agent_reported_at = ?"}
	args := []any{b.At, b.At}
	if b.AgentVersion != "" {
		set = append(set, "agent_version = ?")
		args = append(args, b.AgentVersion)
	}
	if b.Sequence != 0 {
		set = append(set, "report_sequence = ?")
		args = append(args, b.Sequence)
	}
	where := []string{"name = ?", "status = ?",
		"NOT EXISTS (SELECT 1 FROM vms WHERE vms.node_id = nodes.id AND (vms.tearing_down OR (vms.status IN ? AND vms.status_reason = ?)))"}
	args = append(args, b.NodeName, models.NodeOnline, b.ResumeFrom, b.ResumeReason)
	if b.Sequence != 0 {
		where = append(where, "report_sequence < ?")
		args = append(args, b.Sequence)
	}
	if len(b.GPUs) > 0 {
		uuids := make([]string, len(b.GPUs))
		var failed []string
		for i, g := range b.GPUs {
			uuids[i] = g.UUID
			if g.Failed {
				failed = append(failed, g.UUID)
			}
		}
		where = append(where, "(SELECT COUNT(*) FROM gpus WHERE gpus.node_id = nodes.id AND gpus.uuid IN ?) = ?")
		args = append(args, uuids, len(uuids))
		if len(failed) > 0 {
			where = append(where, "NOT EXISTS (SELECT 1 FROM gpus WHERE gpus.node_id = nodes.id AND gpus.uuid IN ? AND gpus.health = ?)")
			args = append(args, failed, models.GPUHealthy)
		}
	}
	return "UPDATE nodes SET " + strings.Join(set, ", ") + " WHERE " + strings.Join(where, " AND ") +
		" RETURNING id, agent_version", args
}

// beatSamples is the common table expression v(uuid, utilization,
// memory_used_bytes) of b's samples; "" when b reports no GPU. The SQL is
// fixed text; only placeholders vary in number.
func beatSamples(b Beat) (string, []any) {
	if len(b.GPUs) == 0 {
		return "", nil
	}
	values := make([]string, len(b.GPUs))
	args := make([]any, 0, 3*len(b.GPUs))
	for i, g := range b.GPUs {
		values[i] = "(?, CAST(? AS integer), CAST(? AS bigint))"
		args = append(args, g.UUID, g.Utilization, g.MemoryUsedBytes)
	}
	return "v(uuid, utilization, memory_used_bytes) AS (VALUES " + strings.Join(values, ", ") + ")", args
}

// sampleUpdate writes v's samples, as of one instant, to the GPUs the
// statement's FROM and WHERE choose; sampleChanged chooses only those
// whose stored sample differs.
const (
	sampleUpdate  = "UPDATE gpus SET utilization = v.utilization, memory_used_bytes = v.memory_used_bytes, sampled_at = ? "
	sampleChanged = "gpus.uuid = v.uuid AND (gpus.utilization IS DISTINCT FROM v.utilization OR gpus.memory_used_bytes IS DISTINCT FROM v.memory_used_bytes)"
)
