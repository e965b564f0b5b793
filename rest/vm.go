package rest

import "gpugraph/compute"

// vmJSON is OpenRelay's VM object as the seed writes it (every field of the
// restart answer, camelCase, status in lower case), plus the node, GPUs, host share, tearingDown and interruptedAt.
// Instants are RFC 3339 UTC with milliseconds. On a CPU-only row
// gpuManufacturer is absent, as the seed says, and so are gpuModelId and
// gpuModelName: the seed types them as strings, so null is not theirs to
// write, and absent is how the seed marks "no GPU" (README, decisions).
type vmJSON struct {
	CapabilityTier    string  `json:"capabilityTier"`
	ComputeClass      string  `json:"computeClass"`
	CreatedAt         *string `json:"createdAt"`
	DiskSizeGb        int     `json:"diskSizeGb"`
	EndpointURL       string  `json:"endpointUrl"`
	GPUCount          int     `json:"gpuCount"`
	GPUManufacturer   *string `json:"gpuManufacturer,omitempty"`
	GPUModelID        *string `json:"gpuModelId,omitempty"`
	GPUModelName      *string `json:"gpuModelName,omitempty"`
	ID                string  `json:"id"`
	ImageURL          string  `json:"imageUrl"`
	ManagedBy         string  `json:"managedBy"`
	Name              string  `json:"name"`
	OrganizationID    string  `json:"organizationId"`
	PricePerHourCents int     `json:"pricePerHourCents"`
	ProvisioningStage string  `json:"provisioningStage"`
	Public            bool    `json:"public"`
	ResourceSize      string  `json:"resourceSize"`
	ServiceType       string  `json:"serviceType"`
	Status            string  `json:"status"`
	StatusReason      string  `json:"statusReason"`
	Tier              string  `json:"tier"`
	VolumeGb          int     `json:"volumeGb"`

	NodeID        *string  `json:"nodeId"`
	GPUIDs        []string `json:"gpuIds"`
	CPUCores      int      `json:"cpuCores"`
	RAMGb         int      `json:"ramGb"`
	TearingDown   bool     `json:"tearingDown"`
	InterruptedAt *string  `json:"interruptedAt"`
}

// encodeVM renders a restarted VM with the GPUs and model the restart read.
func encodeVM(res *compute.Result) *vmJSON {
	vm, gpus := res.VM, res.GPUs
	out := &vmJSON{
		CapabilityTier:    vm.CapabilityTier,
		ComputeClass:      vm.ComputeClass,
		CreatedAt:         timeOrNil(vm.CreatedAt),
		DiskSizeGb:        vm.DiskSizeGb,
		EndpointURL:       vm.EndpointURL,
		GPUCount:          vm.GPUCount,
		GPUModelID:        vm.GPUModelID,
		ID:                vm.ID,
		ImageURL:          vm.ImageURL,
		ManagedBy:         vm.ManagedBy,
		Name:              vm.Name,
		OrganizationID:    vm.OrganizationID,
		PricePerHourCents: vm.PricePerHourCents,
		ProvisioningStage: vm.ProvisioningStage,
		Public:            vm.Public,
		ResourceSize:      vm.ResourceSize,
		ServiceType:       vm.ServiceType,
		Status:            string(vm.Status),
		StatusReason:      vm.StatusReason,
		Tier:              vm.Tier,
		VolumeGb:          vm.VolumeGb,
		NodeID:            vm.NodeID,
		GPUIDs:            make([]string, 0, len(gpus)),
		CPUCores:          vm.CPUCores,
		RAMGb:             vm.RAMGb,
		TearingDown:       vm.TearingDown,
		InterruptedAt:     timeOrNil(vm.InterruptedAt),
	}
	for _, g := range gpus {
		out.GPUIDs = append(out.GPUIDs, g.ID)
	}
	if m := res.Model; vm.GPUModelID != nil && m != nil {
		name, maker := m.Name, string(m.Manufacturer)
		out.GPUModelName, out.GPUManufacturer = &name, &maker
	}
	return out
}
