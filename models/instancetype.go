package models

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// InstanceType is an entry of the catalog a user creates VMs and pods
// from: a GPU model × count with the share of its node's CPU, RAM and disk
// that goes with them, and its price. The keys are those of the VM object
// that a VM created from it carries; a CPU-only type has no gpuModelId and a
// gpuCount of 0.
type InstanceType struct {
	// Name is the type's id, in Lambda Cloud's manner: gpu_8x_h100_sxm5.
	Name       string  `gorm:"primaryKey" json:"name"`
	GPUModelID *string `json:"gpuModelId"`
	GPUCount   int     `json:"gpuCount"`
	CPUCores   int     `gorm:"column:cpu_cores" json:"cpuCores"`
	RAMGb      int     `gorm:"column:ram_gb" json:"ramGb"`
	DiskSizeGb int     `json:"diskSizeGb"`
	// VolumeGb is the /workspace a pod of the type gets unless its request
	// says otherwise; a VM has none (0).
	VolumeGb          int    `json:"volumeGb"`
	PricePerHourCents int    `json:"pricePerHourCents"`
	Description       string `json:"description"`
}

// MaxInstanceTypeDescription bounds a type's description, in bytes.
const MaxInstanceTypeDescription = 1024

// instanceTypeName is Lambda's spelling of a type: lowercase letters,
// digits and underscores.
var instanceTypeName = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

// ValidInstanceTypeName reports whether name may name an instance type.
func ValidInstanceTypeName(name string) bool { return instanceTypeName.MatchString(name) }

// InstanceTypeNameProblem says what is wrong with name as an instance
// type's name, naming the field; "" when nothing is.
func InstanceTypeNameProblem(name string) string {
	if ValidInstanceTypeName(name) {
		return ""
	}
	if name == "" {
		return "name is missing"
	}
	return fmt.Sprintf("name %q is not 1 to 64 lowercase letters, digits or underscores (e.g. gpu_8x_h100_sxm5)", name)
}

// Problem says what is wrong with t, naming the field (a fixture's entry
// and an operator's request are refused with it); "" when nothing is. It
// does not look the GPU model up: that is the caller's, against the
// catalog. An empty gpuModelId is read as none.
func (t *InstanceType) Problem() string {
	if p := InstanceTypeNameProblem(t.Name); p != "" {
		return p
	}
	if t.GPUModelID != nil && *t.GPUModelID == "" {
		t.GPUModelID = nil
	}
	for _, f := range []struct {
		name string
		n    int
	}{
		{"gpuCount", t.GPUCount}, {"cpuCores", t.CPUCores}, {"ramGb", t.RAMGb}, {"diskSizeGb", t.DiskSizeGb},
		{"volumeGb", t.VolumeGb}, {"pricePerHourCents", t.PricePerHourCents},
	} {
		if f.n < 0 {
			return fmt.Sprintf("%s must not be negative, got %d", f.name, f.n)
		}
		if f.n > math.MaxInt32 {
			return fmt.Sprintf("%s must be at most %d, got %d", f.name, math.MaxInt32, f.n)
		}
	}
	switch {
	case t.GPUModelID != nil && t.GPUCount == 0:
		return fmt.Sprintf("gpuCount must be at least 1 for a type of gpuModelId %q (a CPU-only type has no gpuModelId)", *t.GPUModelID)
	case t.GPUModelID == nil && t.GPUCount > 0:
		return "gpuModelId is missing: a type with GPUs names their model"
	case t.GPUModelID != nil && len(*t.GPUModelID) > 256:
		return "gpuModelId is longer than 256 bytes"
	case t.GPUCount == 0 && t.CPUCores == 0:
		return "cpuCores must be at least 1 for a CPU-only type"
	case len(t.Description) > MaxInstanceTypeDescription:
		return fmt.Sprintf("description is longer than %d bytes", MaxInstanceTypeDescription)
	case !utf8.ValidString(t.Description) || (t.GPUModelID != nil && !utf8.ValidString(*t.GPUModelID)):
		return "description and gpuModelId must be valid UTF-8"
	case strings.IndexByte(t.Description, 0) >= 0 || (t.GPUModelID != nil && strings.IndexByte(*t.GPUModelID, 0) >= 0):
		return "description and gpuModelId must not contain a NUL character"
	}
	return ""
}

// GPUQuota is the most GPUs of one model an organization's VMs and pods
// may hold or wait for at once (QuotaStatuses). An operator sets it; an
// organization without one for a model may use any number.
type GPUQuota struct {
	OrganizationID string    `gorm:"primaryKey" json:"organizationId"`
	GPUModelID     string    `gorm:"primaryKey" json:"gpuModelId"`
	Limit          int       `gorm:"column:gpu_limit" json:"limit"`
	UpdatedAt      time.Time `gorm:"autoUpdateTime:false" json:"updatedAt"`
}

// TableName is the table's plural, not gorm's guess from "GPUQuota".
func (GPUQuota) TableName() string { return "gpu_quotas" }

// QuotaStatuses are the statuses in which a VM or pod counts against its
// organization's GPU quota: those that hold GPUs (HoldingStatuses: an
// interrupted one keeps them for when its node is back) and pending, which
// waits for them. Stopped, failed and terminated ones hold none.
var QuotaStatuses = append([]VMStatus{VMPending}, HoldingStatuses...)
