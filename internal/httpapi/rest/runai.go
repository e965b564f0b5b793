package rest

import (
	"net/http"
	"net/url"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/lib/filterby"
	"gpugraph/internal/services/pods"
)

// Run:ai's pods paths: HTTP parameters → package pods → the Run:ai JSON.
func (api *API) runaiRoutes() []endpoint {
	read := api.Services.Pods.MayRead
	return []endpoint{
		{"GET /api/v1/workloads/pods", runai(read, api.listPods)},
		{"GET /api/v1/workloads/pods/count", runai(read, api.countPods)},
		{"GET /api/v1/workloads/{workloadId}/pods", runai(read, api.workloadPods)},
		{"GET /api/v1/workloads/inferences/revisions/{revisionId}/pods", runai(read, api.revisionPods)},
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
	q, full, err := parsePodListParams(r.URL.Query())
	if err != nil {
		return err
	}
	c, err := auth.Authenticate(r.Context())
	if err != nil {
		return err
	}
	q.WorkloadID = workloadID
	page, err := api.Services.Pods.List(r.Context(), c, q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, podListBody{Next: page.Next, Pods: newRunaiPods(page.Pods, full)})
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
	c, err := auth.Authenticate(r.Context())
	if err != nil {
		return err
	}
	n, err := api.Services.Pods.Count(r.Context(), c, pods.CountQuery{
		FilterBy: v["filterBy"], Search: v.Get("search"), Deleted: isTrue(deleted), Completed: completed,
	})
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
	c, err := auth.Authenticate(r.Context())
	if err != nil {
		return err
	}
	list, err := api.Services.Pods.OfRevision(r.Context(), c, r.PathValue("revisionId"), isTrue(deleted))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Pods []runaiPod `json:"pods"`
	}{Pods: newRunaiPods(list, full)})
	return nil
}

// parsePodListParams reads the list parameters into a pods.Query, and
// whether to write full pods (verbosity=full). It checks their syntax and
// the sort; package pods checks the rest (limit range, filters).
func parsePodListParams(v url.Values) (q pods.Query, full bool, err error) {
	q = pods.Query{FilterBy: v["filterBy"], Search: v.Get("search")}
	deleted, err := boolParam(v, "deleted")
	if err != nil {
		return q, false, err
	}
	q.Deleted = isTrue(deleted)
	if q.Completed, err = completedParam(v); err != nil {
		return q, false, err
	}
	if q.Offset, err = intParam(v, "offset"); err != nil {
		return q, false, err
	}
	if q.Limit, err = intParam(v, "limit"); err != nil {
		return q, false, err
	}
	if full, err = verbosityParam(v); err != nil {
		return q, false, err
	}
	// Checked here with filterby's messages, which name the REST spelling.
	if q.Sort, err = filterby.ParseSort(v.Get("sortBy"), v.Get("sortOrder")); err != nil {
		return q, false, apierr.BadRequest("%s", err.Error())
	}
	return q, full, nil
}

func isTrue(b *bool) bool { return b != nil && *b }

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

// intParam reads an integer, written as JSON writes one (bounds.ParseInt:
// "+5" and "05" are refused); absent or empty is nil.
func intParam(v url.Values, name string) (*int, error) {
	s := v.Get(name)
	if s == "" {
		return nil, nil
	}
	n, ok := bounds.ParseInt(s)
	if !ok || n != int64(int(n)) {
		return nil, apierr.BadRequest("%s must be an integer, got %q", name, s)
	}
	i := int(n)
	return &i, nil
}

// verbosityParam reads brief (the default) or full, and their enum's
// qualified names as runapy sends them when handed its own PodVerbosity
// (its URL builder writes str(PodVerbosity.FULL), "PodVerbosity.FULL").
func verbosityParam(v url.Values) (bool, error) {
	switch s := v.Get("verbosity"); s {
	case "", "brief", "PodVerbosity.BRIEF":
		return false, nil
	case "full", "PodVerbosity.FULL":
		return true, nil
	default:
		return false, apierr.BadRequest("verbosity must be brief or full (PodVerbosity.BRIEF and PodVerbosity.FULL are read as those), got %q", s)
	}
}
