package openapitest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"gpugraph/internal/httpapi/rest/openapi"
)

// Exchange is one request the server answered, as a test saw it.
type Exchange struct {
	Request     *http.Request // its body is not read: RequestBody is
	RequestBody []byte
	Status      int
	Header      http.Header
	Body        []byte // as sent: Content-Encoding gzip is undone here
}

// Undocumented says why a request is outside the REST document by
// design, or "" when it is not: the GraphQL endpoint's answers are the
// GraphQL schema's (the document lists its transports only), and the
// playground and the console are web pages. The route test reads the same
// list.
func Undocumented(method, path string) string {
	switch {
	case path == "/graphql":
		return "GraphQL: its answers follow schema.graphqls, not the REST document"
	case method == http.MethodGet && (path == "/" || strings.HasPrefix(path, "/assets/")):
		return "the playground, a web page"
	case method == http.MethodGet && (path == "/console" || strings.HasPrefix(path, "/console/")):
		return "the console, a web app"
	}
	return ""
}

// UndocumentedPatterns are the ServeMux patterns Undocumented covers.
var UndocumentedPatterns = []string{"/graphql", "GET /{$}", "GET /assets/", "GET /console", "GET /console/"}

// CheckExchange checks one exchange against the served document. A request
// the document has no operation for must have answered 404 or 405 (else a
// route is served and not documented); a request the document refuses must
// not have succeeded; the answer must be one the operation lists, with its
// content type, headers and body schema, and a Run:ai error body's code
// must be its status. It answers nil when the exchange is valid, a HEAD,
// or Undocumented.
func CheckExchange(ex Exchange) error {
	r := ex.Request
	if r.Method == http.MethodHead || Undocumented(r.Method, r.URL.Path) != "" {
		return nil
	}
	kinOnce.Do(loadKin)
	if kinErr != nil {
		return kinErr
	}
	what := fmt.Sprintf("%s %s → %d", r.Method, r.URL.RequestURI(), ex.Status)
	req := r.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(ex.RequestBody))
	route, params, err := kinRouter.FindRoute(req)
	if err != nil {
		if ex.Status == http.StatusNotFound || ex.Status == http.StatusMethodNotAllowed {
			return nil
		}
		return fmt.Errorf("openapitest: %s: the document has no such operation (%v), yet the server answered it: a route served and not documented", what, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: bearerPresent}}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && ex.Status < 400 {
		return fmt.Errorf("openapitest: %s: the server accepted a request the document refuses: %v", what, err)
	}

	body, decoded := decode(ex.Header, ex.Body)
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: ex.Status, Header: ex.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, ExcludeResponseBody: !decoded, MultiError: true}}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return fmt.Errorf("openapitest: %s: the answer does not match the document: %v\nbody: %s", what, err, clip(body))
	}
	if !decoded || !isJSON(ex.Header.Get("Content-Type")) {
		return nil
	}
	if strings.HasPrefix(route.Path, "/api/") && ex.Status >= 300 {
		var e struct{ Code int }
		if err := json.Unmarshal(body, &e); err != nil || e.Code != ex.Status {
			return fmt.Errorf("openapitest: %s: a Run:ai error body's code is not the status: %s", what, clip(body))
		}
	}
	if err := Check(fmt.Sprintf("%s %s %d", r.Method, route.Path, ex.Status), body); err != nil {
		return fmt.Errorf("openapitest: %s: %w", what, err)
	}
	return nil
}

var (
	kinOnce   sync.Once
	kinDoc    *openapi3.T
	kinRouter routers.Router
	kinErr    error
)

func loadKin() {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openapi.Document())
	if err != nil {
		kinErr = fmt.Errorf("openapitest: load the served document: %w", err)
		return
	}
	// Run:ai's own examples break their schemas ("0B" against the
	// quantity pattern); the schemas are what answers are held to.
	if err := doc.Validate(loader.Context, openapi3.DisableExamplesValidation()); err != nil {
		kinErr = fmt.Errorf("openapitest: the served document is not valid OpenAPI 3: %w", err)
		return
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		kinErr = fmt.Errorf("openapitest: route the served document: %w", err)
		return
	}
	kinDoc, kinRouter = doc, router
}

// Load is the served document as kin-openapi reads it, validated.
func Load() (*openapi3.T, error) {
	kinOnce.Do(loadKin)
	return kinDoc, kinErr
}

// bearerPresent is the document's bearerAuth as a request can show it:
// whether the key is good is the server's to say (401).
func bearerPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	h := in.RequestValidationInput.Request.Header.Get("Authorization")
	if scheme, token, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") && token != "" {
		return nil
	}
	return fmt.Errorf("no bearer token")
}

// decode undoes a gzip Content-Encoding; it answers false for an encoding
// it cannot undo, whose body is then not checked.
func decode(h http.Header, body []byte) ([]byte, bool) {
	switch enc := strings.ToLower(strings.TrimSpace(h.Get("Content-Encoding"))); enc {
	case "", "identity":
		return body, true
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return body, false
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			return body, false
		}
		return plain, true
	}
	return body, false
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}
