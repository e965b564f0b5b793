package rest

import (
	"net/http"
	"net/url"
	"strconv"

	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/filterby"
	"gpugraph/graph/model"
	"gpugraph/resolvers"
)

// Run:ai's pods paths (SPEC §6): thin shims over the GraphQL resolvers.
func (api *API) runaiRoutes() []route {
	return []route{
		{"GET /api/v1/workloads/pods", runai(auth.WorkloadsRead, api.listPods)},
		{"GET /api/v1/workloads/pods/count", runai(auth.WorkloadsRead, api.countPods)},
		{"GET /api/v1/workloads/{workloadId}/pods", runai(auth.WorkloadsRead, api.workloadPods)},
		{"GET /api/v1/workloads/inferences/revisions/{revisionId}/pods", runai(auth.WorkloadsRead, api.revisionPods)},
	}
}

// podListBody is the answer of the two lists: next is left out on the last page.
type podListBody struct {
	Next *int       `json:"next,omitempty"`
	Pods []runaiPod `json:"pods"`
}

func (api *API) listPods(w http.ResponseWriter, r *http.Request) error {
	return api.podList(w, r, "")
}

func (api *API) workloadPods(w http.ResponseWriter, r *http.Request) error {
	return api.podList(w, r, r.PathValue("workloadId"))
}

func (api *API) podList(w http.ResponseWriter, r *http.Request, workloadID string) error {
	p, err := parsePodListParams(r.URL.Query())
	if err != nil {
		return err
	}
	q := api.Resolver.Query()
	var list *model.PodList
	if workloadID == "" {
		list, err = q.Pods(r.Context(), p.filterBy, p.search, p.sortBy, p.sortOrder, p.offset, p.limit, p.deleted, p.completed)
	} else {
		list, err = q.WorkloadPods(r.Context(), workloadID, p.filterBy, p.search, p.sortBy, p.sortOrder, p.offset, p.limit, p.deleted, p.completed)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, podListBody{Next: list.Next, Pods: newRunaiPods(list.Pods, p.full)})
	return nil
}

// countPods takes deleted, filterBy and search as the seed documents, and
// completed as the list does, so a count always matches its list.
func (api *API) countPods(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	deleted, err := boolParam(v, "deleted")
	if err != nil {
		return err
	}
	completed, err := completedParam(v)
	if err != nil {
		return err
	}
	n, err := api.Resolver.Query().PodsCount(r.Context(), v["filterBy"], stringParam(v, "search"), deleted, completed)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]int{"count": n})
	return nil
}

// revisionPods takes deleted as the seed documents, and verbosity as the
// lists do (its example shows the full object).
func (api *API) revisionPods(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	deleted, err := boolParam(v, "deleted")
	if err != nil {
		return err
	}
	full, err := verbosityParam(v)
	if err != nil {
		return err
	}
	pods, err := api.Resolver.Query().RevisionPods(r.Context(), r.PathValue("revisionId"), deleted)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Pods []runaiPod `json:"pods"`
	}{Pods: newRunaiPods(pods, full)})
	return nil
}

// podListParams are the list parameters, translated to the resolver's
// arguments; the resolver checks their values (limit range, filters).
type podListParams struct {
	filterBy           []string
	search             *string
	sortBy             *model.PodSortField
	sortOrder          *model.SortOrder
	offset, limit      *int
	deleted, completed *bool
	full               bool
}

func parsePodListParams(v url.Values) (podListParams, error) {
	p := podListParams{filterBy: v["filterBy"], search: stringParam(v, "search")}
	var err error
	if p.deleted, err = boolParam(v, "deleted"); err != nil {
		return p, err
	}
	if p.completed, err = completedParam(v); err != nil {
		return p, err
	}
	if p.offset, err = intParam(v, "offset"); err != nil {
		return p, err
	}
	if p.limit, err = intParam(v, "limit"); err != nil {
		return p, err
	}
	if p.full, err = verbosityParam(v); err != nil {
		return p, err
	}
	// Checked here with filterby's messages, which name the REST spelling.
	s, err := filterby.ParseSort(v.Get("sortBy"), v.Get("sortOrder"))
	if err != nil {
		return p, apierr.BadRequest("%s", err.Error())
	}
	if v.Get("sortBy") != "" {
		f, _ := resolvers.PodSortFieldNamed(s.Field)
		p.sortBy = &f
	}
	order := model.SortOrderAsc
	if s.Desc {
		order = model.SortOrderDesc
	}
	p.sortOrder = &order
	return p, nil
}

// stringParam is the first value of name; nil when absent or empty.
func stringParam(v url.Values, name string) *string {
	s := v.Get(name)
	if s == "" {
		return nil
	}
	return &s
}

// boolParam reads true or false; absent or empty is nil.
func boolParam(v url.Values, name string) (*bool, error) {
	switch s := v.Get(name); s {
	case "":
		return nil, nil
	case "true", "false":
		b := s == "true"
		return &b, nil
	default:
		return nil, apierr.BadRequest("%s must be true or false, got %q", name, s)
	}
}

// completedParam reads completed: true, false, or all (empty is all).
func completedParam(v url.Values) (*bool, error) {
	switch s := v.Get("completed"); s {
	case "", "all":
		return nil, nil
	case "true", "false":
		b := s == "true"
		return &b, nil
	default:
		return nil, apierr.BadRequest("completed must be true, false or all, got %q", s)
	}
}

// intParam reads an integer; absent or empty is nil.
func intParam(v url.Values, name string) (*int, error) {
	s := v.Get(name)
	if s == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return nil, apierr.BadRequest("%s must be an integer, got %q", name, s)
	}
	return &n, nil
}

// verbosityParam reads brief (the default) or full.
func verbosityParam(v url.Values) (bool, error) {
	switch s := v.Get("verbosity"); s {
	case "", "brief":
		return false, nil
	case "full":
		return true, nil
	default:
		return false, apierr.BadRequest("verbosity must be brief or full, got %q", s)
	}
}
