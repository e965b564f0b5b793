package rest

import (
	"errors"
	"io"
	"net/http"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
)

// decodeBody reads a JSON request body of at most max bytes under rules
// (bounds.DecodeJSON): a larger one is a 413, a malformed one a 400 naming
// where. Each kind of body has its wrapper: decodeAgentReport for an
// agent's reports, decodeAdminBody for an operator's requests.
func decodeBody(w http.ResponseWriter, r *http.Request, into any, max int64, rules bounds.JSONRules) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return apierr.New(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "the request body is larger than %d bytes", max)
	case err != nil:
		return err
	}
	return bounds.DecodeJSON("the request body", body, into, rules)
}
