package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
)

// Node identity (package nodeid): enrollments, the one-time bootstrap
// tokens an operator hands a node, and node credentials, what an agent
// reports with once it exchanged its token. Both secrets are stored as
// hashes only; the caller hashes.

// Enrollment is one bootstrap token, by its hash.
type Enrollment struct {
	TokenHash string
	NodeName  string
	ClusterID string
	CreatedBy string // the operator's key id
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// NodeCredential is a node's credential, by its hash.
type NodeCredential struct {
	NodeName   string
	ClusterID  string
	SecretHash string
	CreatedAt  time.Time
}

// Refusals of a bootstrap token's exchange.
var (
	ErrEnrollmentUnknown = errors.New("unknown bootstrap token")
	ErrEnrollmentUsed    = errors.New("bootstrap token already used")
	ErrEnrollmentExpired = errors.New("bootstrap token expired")
)

// CreateEnrollment stores e, and deletes the enrollments that expired
// before it was made (spent or not: neither can be exchanged any more), so
// the table holds no more than a day's enrollments and needs no sweep.
func (s *Store) CreateEnrollment(ctx context.Context, e Enrollment) error {
	return s.tx(ctx, func(tx *gorm.DB) error {
		if err := tx.Exec("DELETE FROM node_enrollments WHERE expires_at < ?", e.CreatedAt).Error; err != nil {
			return err
		}
		return tx.Table("node_enrollments").Create(map[string]any{
			"token_hash": e.TokenHash, "node_name": e.NodeName, "cluster_id": e.ClusterID,
			"created_by": e.CreatedBy, "created_at": e.CreatedAt, "expires_at": e.ExpiresAt,
		}).Error
	})
}

// RedeemEnrollment spends the bootstrap token stored under tokenHash and,
// in the same transaction, makes cred (named for the enrollment's node
// and cluster, which it answers) that node's credential, replacing any
// earlier one. A token is spent once: of two racing exchanges one wins,
// the other gets ErrEnrollmentUsed.
func (s *Store) RedeemEnrollment(ctx context.Context, tokenHash, secretHash string, now time.Time) (NodeCredential, error) {
	var cred NodeCredential
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var rows []Enrollment
		if err := s.forUpdate(tx.Table("node_enrollments")).Where("token_hash = ?", tokenHash).Find(&rows).Error; err != nil {
			return err
		}
		switch {
		case len(rows) == 0:
			return ErrEnrollmentUnknown
		case rows[0].UsedAt != nil:
			return ErrEnrollmentUsed
		case !now.Before(rows[0].ExpiresAt):
			return ErrEnrollmentExpired
		}
		e := rows[0]
		res := tx.Exec("UPDATE node_enrollments SET used_at = ? WHERE token_hash = ? AND used_at IS NULL", now, tokenHash)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return ErrEnrollmentUsed
		}
		if err := tx.Exec("DELETE FROM node_credentials WHERE node_name = ?", e.NodeName).Error; err != nil {
			return err
		}
		// A new credential starts the node's sequence afresh: the old
		// credential's reports are refused anyway (it no longer exists),
		// and an agent that sent a runaway sequence is recovered by
		// enrolling its node again.
		if err := tx.Exec("UPDATE nodes SET report_sequence = 0 WHERE name = ?", e.NodeName).Error; err != nil {
			return err
		}
		cred = NodeCredential{NodeName: e.NodeName, ClusterID: e.ClusterID, SecretHash: secretHash, CreatedAt: now}
		return tx.Table("node_credentials").Create(map[string]any{
			"node_name": cred.NodeName, "cluster_id": cred.ClusterID, "secret_hash": cred.SecretHash, "created_at": now,
		}).Error
	})
	return cred, err
}

// NodeCredentialByHash reads the credential stored under secretHash;
// ok=false when there is none.
func (s *Store) NodeCredentialByHash(ctx context.Context, secretHash string) (c NodeCredential, ok bool, err error) {
	var rows []NodeCredential
	err = s.DB.WithContext(ctx).Table("node_credentials").Where("secret_hash = ?", secretHash).Find(&rows).Error
	if err != nil || len(rows) == 0 {
		return NodeCredential{}, false, err
	}
	return rows[0], true, nil
}

// NodeHasCredential reports whether the node named name has a credential.
func (s *Store) NodeHasCredential(ctx context.Context, name string) (bool, error) {
	var n int64
	err := s.DB.WithContext(ctx).Table("node_credentials").Where("node_name = ?", name).Count(&n).Error
	return n > 0, err
}

// NodeClusterByName answers the cluster of the node named name; ok=false
// when no node has that name.
func (s *Store) NodeClusterByName(ctx context.Context, name string) (cluster string, ok bool, err error) {
	var rows []string
	err = s.DB.WithContext(ctx).Table("nodes").Where("name = ?", name).Limit(1).Pluck("cluster_id", &rows).Error
	if err != nil || len(rows) == 0 {
		return "", false, err
	}
	return rows[0], true, nil
}
