// Package models holds the rows gpugraph stores and serves: the shared GPU
// inventory, OpenRelay compute (VMs and pods), tenancy and Run:ai workloads.
// The GraphQL types of schema.graphqls bind to these structs directly.
package models

import "time"

// GPUModel is a catalog entry: what a GPU is, not where it is.
type GPUModel struct {
	ID           string       `gorm:"primaryKey" json:"id"`
	Name         string       `json:"name"`
	Manufacturer Manufacturer `json:"manufacturer"`
	MemoryGb     int          `json:"memoryGb"`
}

// Fabric is an InfiniBand fabric; pods on it each hold one of its addresses.
type Fabric struct {
	ID         string `gorm:"primaryKey" json:"id"`
	IPCapacity int    `gorm:"column:ip_capacity" json:"ipCapacity"`
}

// Node is a GPU host. Nodes are shared inventory: every organization's VMs
// and every tenant's pods may run on any of them.
type Node struct {
	ID              string     `gorm:"primaryKey" json:"id"`
	Name            string     `json:"name"`
	ClusterID       string     `json:"clusterId"`
	NodePool        string     `json:"nodePool"`
	Status          NodeStatus `json:"status"`
	AgentVersion    string     `json:"agentVersion"`
	FabricID        *string    `json:"fabricId"`
	CPUCores        int        `gorm:"column:cpu_cores" json:"cpuCores"`
	RAMGb           int        `gorm:"column:ram_gb" json:"ramGb"`
	DiskGb          int        `json:"diskGb"`
	LeavingAt       *time.Time `json:"leavingAt"`
	LastHeartbeatAt *time.Time `json:"lastHeartbeatAt"`
	// AgentReportedAt is when a node agent last reported for it (inventory
	// or heartbeat); nil on a node no agent ever reported for (a fixture's),
	// which runs nothing and so has nothing to tear down.
	AgentReportedAt *time.Time `json:"-"`
}

// GPU is one device of a node. HolderVMID is the single VM or pod that holds
// it: one column, so the database itself makes double-booking impossible.
type GPU struct {
	ID              string     `gorm:"primaryKey" json:"id"`
	NodeID          string     `json:"nodeId"`
	Index           int        `gorm:"column:idx" json:"index"`
	UUID            string     `gorm:"column:uuid" json:"uuid"`
	Address         string     `json:"address"`
	ModelID         string     `json:"modelId"`
	Health          GPUHealth  `json:"health"`
	FailedReason    *string    `json:"failedReason"`
	HolderVMID      *string    `gorm:"column:holder_vm_id" json:"-"`
	Utilization     *int       `json:"-"`
	MemoryUsedBytes *int64     `json:"-"`
	SampledAt       *time.Time `json:"-"`
	// Model is the catalog entry of ModelID, set per request by the GraphQL
	// face (loaders.FillGPUModels) so that Gpu.model is a plain field: no
	// resolver call per GPU. Never stored, never read from a row.
	Model *GPUModel `gorm:"-" json:"-"`
}

// GPUHolder is who holds a GPU, whichever organization: what the fleet's
// operator sees (Gpu.holder), read by the holders' ids.
type GPUHolder struct {
	VMID           string `gorm:"column:id" json:"vmId"`
	OrganizationID string `json:"organizationId"`
}
