package models

import "time"

// Organization owns VMs and API keys; TenantID is the Run:ai tenant its keys read.
type Organization struct {
	ID                string `gorm:"primaryKey" json:"id"`
	Name              string `json:"name"`
	TenantID          int    `json:"tenantId"`
	InfinibandEnabled bool   `gorm:"column:infiniband_enabled" json:"infinibandEnabled"`
	// State is active, suspended, balance_exhausted or deleted.
	State OrgState `gorm:"default:active" json:"-"`
}

// OrgState is an organization's standing; only an active one's keys work.
type OrgState string

const (
	OrgStateActive           OrgState = "active"
	OrgStateSuspended        OrgState = "suspended"
	OrgStateBalanceExhausted OrgState = "balance_exhausted"
	OrgStateDeleted          OrgState = "deleted"
)

// APIKey is stored by the hash of its token only; the token itself is never kept.
type APIKey struct {
	TokenHash string `gorm:"primaryKey"`
	// KeyID names the key in listings, revocations and the event log: the
	// first 12 hex digits of TokenHash (KeyIDOf).
	KeyID          string `gorm:"column:key_id"`
	OrganizationID string
	Permissions    string    // space-separated
	CreatedAt      time.Time `gorm:"autoCreateTime:false"`
}

// TableName keeps the table name readable ("api_keys", not "a_p_i_keys").
func (APIKey) TableName() string { return "api_keys" }

// Project is a Run:ai project of one tenant. Its id is the tenant's own
// (Run:ai's are small integers): two tenants may both have project 42, so
// the key is the pair.
type Project struct {
	ID       string `gorm:"primaryKey" json:"id"`
	Name     string `json:"name"`
	TenantID int    `gorm:"primaryKey" json:"tenantId"`
}

// Workload is a Run:ai workload (a training job, an inference service...).
// Its project is (TenantID, ProjectID). A fixture may leave tenantId out
// where the project id is one tenant's alone.
type Workload struct {
	ID        string `gorm:"primaryKey" json:"id"`
	Name      string `json:"name"`
	ProjectID string `json:"projectId"`
	ClusterID string `json:"clusterId"`
	TenantID  int    `json:"tenantId,omitempty"`
}

// Revision is one revision of an inference workload.
type Revision struct {
	ID         string `gorm:"primaryKey" json:"id"`
	WorkloadID string `json:"workloadId"`
}

// KeyIDOf is the id a key with this hash is named by.
func KeyIDOf(tokenHash string) string {
	if len(tokenHash) > 12 {
		return tokenHash[:12]
	}
	return tokenHash
}

// Viewer is the credential a request is made with and the organization it
// acts for (GraphQL's viewer): what a console reads to greet its user and
// to offer only what the key may do.
type Viewer struct {
	CredentialID     string   `json:"credentialId"`
	OrganizationID   string   `json:"organizationId"`
	OrganizationName string   `json:"organizationName"`
	Permissions      []string `json:"permissions"`
}
