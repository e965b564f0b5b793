package openapitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// CheckAnswer checks one answer of the server against the contract of its
// path: a Run:ai path's JSON against the document (the operation's response
// for a status it lists, Error otherwise, with code equal to the status);
// OpenRelay's restart against the seed's field types (CheckVM) or its
// error body. Other paths, and answers that are not JSON (CSV, the mux's
// plain-text 404), are not checked. It answers nil when the answer is
// valid or not checked.
func CheckAnswer(method, path string, status int, contentType string, body []byte) error {
	if !strings.HasPrefix(contentType, "application/json") {
		return nil
	}
	if method == http.MethodPost && strings.HasPrefix(path, "/v1/vms/") && strings.HasSuffix(path, "/restart") {
		if status == http.StatusOK {
			return CheckVM(body)
		}
		return checkOpenRelayError(body)
	}
	op := runaiOperation(strings.ToLower(method), path)
	if op == "" {
		return nil
	}
	loadOnce.Do(load)
	if loadErr != nil {
		return loadErr
	}
	ref := fmt.Sprintf("%s %s %d", method, op, status)
	listed := false
	if responses, ok := get(raw, "paths", op, strings.ToLower(method), "responses").(map[string]any); ok {
		_, listed = responses[fmt.Sprint(status)]
	}
	if status >= 300 {
		if !listed {
			ref = "#/components/schemas/Error"
		}
		var e struct{ Code int }
		if err := json.Unmarshal(body, &e); err != nil || e.Code != status {
			return fmt.Errorf("%s %s: error body's code is not the status %d: %s", method, path, status, clip(body))
		}
	}
	if err := Check(ref, body); err != nil {
		return fmt.Errorf("%s %s → %d: %w", method, path, status, err)
	}
	return nil
}

// runaiOperation is the document's path template that path matches
// ("/api/v1/workloads/{workloadId}/pods"), the one with the most literal
// segments when several do; "" when none does.
func runaiOperation(method, path string) string {
	loadOnce.Do(load)
	paths, _ := raw["paths"].(map[string]any)
	segs := strings.Split(strings.Trim(path, "/"), "/")
	best, bestLiterals := "", -1
	for tmpl, ops := range paths {
		if _, ok := ops.(map[string]any)[method]; !ok {
			continue
		}
		ts := strings.Split(strings.Trim(tmpl, "/"), "/")
		if len(ts) != len(segs) {
			continue
		}
		literals, match := 0, true
		for i, t := range ts {
			if strings.HasPrefix(t, "{") {
				continue
			}
			if t != segs[i] {
				match = false
				break
			}
			literals++
		}
		if match && literals > bestLiterals {
			best, bestLiterals = tmpl, literals
		}
	}
	return best
}

// seedVM is the VM object of OpenRelay's "Restart a VM" seed: each field's
// type, and which are required. The seed types none of them as nullable, so
// a strict client refuses null for every one; fields the server adds beside
// the seed's (nodeId, gpuIds, …) are not checked.
var seedVM = map[string]struct {
	typ      string
	required bool
}{
	"capabilityTier": {"string", false}, "computeClass": {"string", false}, "createdAt": {"string", false},
	"diskSizeGb": {"integer", false}, "endpointUrl": {"string", false}, "gpuCount": {"integer", false},
	"gpuManufacturer": {"string", false}, "gpuModelId": {"string", false}, "gpuModelName": {"string", false},
	"id": {"string", true}, "imageUrl": {"string", false}, "managedBy": {"string", false},
	"name": {"string", true}, "organizationId": {"string", true}, "pricePerHourCents": {"integer", false},
	"provisioningStage": {"string", false}, "public": {"boolean", false}, "resourceSize": {"string", false},
	"serviceType": {"string", false}, "status": {"string", true}, "statusReason": {"string", false},
	"tier": {"string", false}, "volumeGb": {"integer", false},
}

// CheckVM checks a restart answer against the seed's VM object: required
// fields present, every seed field of the seed's type and not null.
func CheckVM(body []byte) error {
	var obj map[string]any
	d := json.NewDecoder(strings.NewReader(string(body)))
	d.UseNumber()
	if err := d.Decode(&obj); err != nil {
		return fmt.Errorf("openapitest: VM answer is not a JSON object: %v: %s", err, clip(body))
	}
	var bad []string
	for name, f := range seedVM {
		v, ok := obj[name]
		if !ok {
			if f.required {
				bad = append(bad, name+" is required")
			}
			continue
		}
		if !hasType(v, f.typ) {
			bad = append(bad, fmt.Sprintf("%s is %s, want %s", name, typeOf(v), f.typ))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("openapitest: VM answer does not match the seed's types: %s\nbody: %s", strings.Join(bad, "; "), clip(body))
	}
	return nil
}

// checkOpenRelayError checks {"error": {"code": "…", "message": "…"}}.
func checkOpenRelayError(body []byte) error {
	var e struct {
		Error *struct {
			Code    *string `json:"code"`
			Message *string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || e.Error.Code == nil || e.Error.Message == nil || *e.Error.Code == "" {
		return fmt.Errorf(`openapitest: OpenRelay error is not {"error": {"code": "…", "message": "…"}}: %s`, clip(body))
	}
	return nil
}

func hasType(v any, typ string) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Int64()
		return err == nil
	}
	return false
}

func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case []any:
		return "array"
	}
	return "object"
}
