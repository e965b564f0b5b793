package models

import "time"

// VM is OpenRelay's VM object; a row whose CapabilityTier is TierPod is a pod.
// The GPUs it holds are not a column here: they are the GPU rows whose
// holder it is (see GPU.HolderVMID).
type VM struct {
	ID                string     `gorm:"primaryKey" json:"id"`
	Name              string     `json:"name"`
	OrganizationID    string     `json:"organizationId"`
	Status            VMStatus   `json:"status"`
	StatusReason      string     `json:"statusReason"`
	CapabilityTier    string     `json:"capabilityTier"`
	ComputeClass      string     `json:"computeClass"`
	CreatedAt         *time.Time `gorm:"autoCreateTime:false" json:"createdAt"`
	DiskSizeGb        int        `json:"diskSizeGb"`
	EndpointURL       string     `gorm:"column:endpoint_url" json:"endpointUrl"`
	GPUCount          int        `json:"gpuCount"`
	GPUModelID        *string    `json:"gpuModelId"`
	ImageURL          string     `gorm:"column:image_url" json:"imageUrl"`
	ManagedBy         string     `json:"managedBy"`
	PricePerHourCents int        `json:"pricePerHourCents"`
	ProvisioningStage string     `json:"provisioningStage"`
	Public            bool       `json:"public"`
	ResourceSize      string     `json:"resourceSize"`
	ServiceType       string     `json:"serviceType"`
	Tier              string     `json:"tier"`
	VolumeGb          int        `json:"volumeGb"`
	NodeID            *string    `json:"nodeId"`
	CPUCores          int        `gorm:"column:cpu_cores" json:"cpuCores"`
	RAMGb             int        `gorm:"column:ram_gb" json:"ramGb"`
	TearingDown       bool       `json:"tearingDown"`
	InterruptedAt     *time.Time `json:"interruptedAt"`
	UpdatedAt         time.Time  `gorm:"autoUpdateTime:false" json:"-"`
	// Generation counts the row's runs: it grows on entering deploying, and
	// on a running row's reboot (recreate), so an agent's report of an
	// earlier run is told apart.
	Generation int `json:"-"`
	// Action is what its current generation asks of the node agent
	// (Action*): run, or the reboot (recreate) of a running row until the
	// agent acknowledges it; "" on rows older than the column.
	Action string `json:"-"`
	// HandedOver: its teardown (TearingDown) holds nothing, since what it
	// held passed to another workload at once (preemption's victims);
	// cleared with TearingDown.
	HandedOver bool `json:"-"`
	// StatusChangedAt is when the row entered its status.
	StatusChangedAt *time.Time `json:"-"`
	// DeletedAt hides the row from the API (kept for the audit trail).
	DeletedAt *time.Time `json:"-"`
	// Priority orders a pending row in its organization's queue (higher
	// first, then arrival); see package scheduler.
	Priority int `json:"-"`
	// WantClusterID and WantNodePool keep the cluster and node pool a
	// create asked to stay within, so the scheduler places a pending row
	// where its request said; nil is anywhere.
	WantClusterID *string `gorm:"column:want_cluster_id" json:"-"`
	WantNodePool  *string `gorm:"column:want_node_pool" json:"-"`
}

// IsPod tells a compute-fabric pod from a plain VM.
func (v *VM) IsPod() bool { return v.CapabilityTier == TierPod }

// Volume is a VM's disk or a pod's /workspace: bound to the VM row it
// belongs to and the node that holds it. A row has at most one live volume
// (DeletedAt nil); it keeps it across reboot, recreate and stop/start on
// that node, and gets a new, fresh one when it is placed on another node
// (the old one is deleted: the disk is gone with its node).
type Volume struct {
	ID             string `gorm:"primaryKey"`
	OrganizationID string
	VMID           string `gorm:"column:vm_id"`
	NodeID         string
	SizeGb         int
	// Fresh: it has never held data (no run on it reached running yet).
	Fresh     bool
	CreatedAt time.Time `gorm:"autoCreateTime:false"`
	DeletedAt *time.Time
	// MountPath is where the workload sees it: WorkspaceMount for a pod's,
	// nil for a VM's (its disk, which the guest mounts where it boots).
	// Not a column: the store's reads for GraphQL fill it from the row's
	// tier.
	MountPath *string `gorm:"-"`
}

// WorkspaceMount is where a pod's volume is mounted, as the node agent is
// told it (agentapi.WorkspaceMount, the wire's own constant).
const WorkspaceMount = "/workspace"

// TableName is the volumes table.
func (Volume) TableName() string { return "volumes" }

// VolumeSizeGb is the size of the volume a row runs on: a pod's volumeGb
// (its /workspace), a VM's diskSizeGb (its disk); 0 when it has none.
func (v *VM) VolumeSizeGb() int {
	if v.IsPod() {
		return v.VolumeGb
	}
	return v.DiskSizeGb
}
