package rest

import (
	"net/http"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/instancetypes"
	"gpugraph/models"
)

// The instance type catalog in OpenRelay's manner: the list any caller
// reads, with what could be placed now per cluster and node pool, and the
// operator's writes (nodes.admin).
func (api *API) instanceTypeRoutes() []endpoint {
	svc := api.Services.InstanceTypes
	return []endpoint{
		{"GET /v1/instance-types", openRelay(svc.MayRead, api.listInstanceTypes)},
		{"GET /v1/instance-types/{name}", openRelay(svc.MayRead, api.getInstanceType)},
		{"PUT /v1/instance-types/{name}", openRelay(svc.MayAdminister, api.putInstanceType)},
		{"DELETE /v1/instance-types/{name}", openRelay(svc.MayAdminister, api.deleteInstanceType)},
	}
}

// instanceTypeJSON is a type with the VM object's names, its GPU model's
// name and manufacturer as the VM object writes them, and its capacity.
type instanceTypeJSON struct {
	Name              string         `json:"name"`
	GPUModelID        *string        `json:"gpuModelId"`
	GPUModelName      string         `json:"gpuModelName"`
	GPUManufacturer   string         `json:"gpuManufacturer"`
	GPUCount          int            `json:"gpuCount"`
	CPUCores          int            `json:"cpuCores"`
	RAMGb             int            `json:"ramGb"`
	DiskSizeGb        int            `json:"diskSizeGb"`
	VolumeGb          int            `json:"volumeGb"`
	PricePerHourCents int            `json:"pricePerHourCents"`
	Description       string         `json:"description"`
	Capacity          []capacityJSON `json:"capacity"`
}

type capacityJSON struct {
	ClusterID string `json:"clusterId"`
	NodePool  string `json:"nodePool"`
	Available int    `json:"available"`
}

func encodeOffer(o instancetypes.Offer) instanceTypeJSON {
	t := o.InstanceType
	out := instanceTypeJSON{Name: t.Name, GPUModelID: t.GPUModelID, GPUCount: t.GPUCount, CPUCores: t.CPUCores,
		RAMGb: t.RAMGb, DiskSizeGb: t.DiskSizeGb, VolumeGb: t.VolumeGb, PricePerHourCents: t.PricePerHourCents,
		Description: t.Description, Capacity: make([]capacityJSON, len(o.Capacity))}
	if o.Model != nil {
		out.GPUModelName, out.GPUManufacturer = o.Model.Name, string(o.Model.Manufacturer)
	}
	for i, c := range o.Capacity {
		out.Capacity[i] = capacityJSON{ClusterID: c.ClusterID, NodePool: c.NodePool, Available: c.Available}
	}
	return out
}

func (api *API) listInstanceTypes(w http.ResponseWriter, r *http.Request) error {
	offers, err := api.Services.InstanceTypes.Offers(r.Context(), auth.FromContext(r.Context()))
	if err != nil {
		return err
	}
	out := struct {
		InstanceTypes []instanceTypeJSON `json:"instanceTypes"`
	}{make([]instanceTypeJSON, len(offers))}
	for i, o := range offers {
		out.InstanceTypes[i] = encodeOffer(o)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (api *API) getInstanceType(w http.ResponseWriter, r *http.Request) error {
	o, err := api.Services.InstanceTypes.Offer(r.Context(), auth.FromContext(r.Context()), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, encodeOffer(o))
	return nil
}

// putInstanceType reads the type's fields (name from the path; a name in
// the body must be the same) and answers the type as written: 201 when it
// is new, 200 when it replaced one.
func (api *API) putInstanceType(w http.ResponseWriter, r *http.Request) error {
	// The body is the type's own keys (models.InstanceType's, as the
	// fixture's); the outer Name, a pointer, shadows the embedded one so
	// that a name left out is told from an empty one.
	var body struct {
		models.InstanceType
		Name *string `json:"name"`
	}
	if err := decodeAdminBody(w, r, &body); err != nil {
		return err
	}
	name := r.PathValue("name")
	if body.Name != nil && *body.Name != name {
		return apierr.BadRequest("name %q differs from the path's %q; leave it out or send the same", *body.Name, name)
	}
	c := auth.FromContext(r.Context())
	svc := api.Services.InstanceTypes
	body.InstanceType.Name = name
	t, created, err := svc.Put(r.Context(), c, body.InstanceType)
	if err != nil {
		return err
	}
	o, err := svc.Offer(r.Context(), c, t.Name)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		w.Header().Set("Location", "/v1/instance-types/"+t.Name)
	}
	writeJSON(w, status, encodeOffer(o))
	return nil
}

func (api *API) deleteInstanceType(w http.ResponseWriter, r *http.Request) error {
	if err := api.Services.InstanceTypes.Delete(r.Context(), auth.FromContext(r.Context()), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
