package auth

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gpugraph/internal/lib/apierr"
)

// The 403 of a missing permission names the credential the caller used.
func TestRequireNamesTheCredential(t *testing.T) {
	for _, c := range []struct {
		caller *Caller
		status int
		want   string
	}{
		{&Caller{Credential: APIKey}, 403, "this API key lacks the compute.read permission"},
		{&Caller{Credential: AccessToken}, 403, "this access token lacks the compute.read permission"},
		{&Caller{}, 403, "this credential lacks the compute.read permission"},
		{nil, 401, "missing API key: send Authorization: Bearer <API key>"},
	} {
		e, ok := apierr.As(c.caller.Require(ComputeRead))
		if !ok || e.Status != c.status || e.Message != c.want {
			t.Errorf("%+v: %v, want %d %s", c.caller, e, c.status, c.want)
		}
	}
	if err := newCaller("org-1", 1, false, []string{ComputeOperate}).Require(ComputeRead); err != nil {
		t.Errorf("an implied permission: %v", err)
	}
	if err := SystemCaller().Require(NodesAdmin); err != nil || SystemCaller().CredentialKind() != CommandLine {
		t.Errorf("the command line: %v, %s", err, SystemCaller().CredentialKind())
	}
}

// The sentence is made in one place: services ask the caller (Require,
// Missing), which knows its credential, and never build the 403 themselves.
func TestMissingPermissionOnlyThroughTheCaller(t *testing.T) {
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "graph") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == filepath.Join("..", "..", "internal", "auth") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "apierr.MissingPermission(") {
			t.Errorf("%s calls apierr.MissingPermission: ask the caller (c.Require(perm), c.Missing(perm)), which names its credential", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The 401 of a request without a credential is one sentence, made in one
// place (MissingKey), whichever check finds the credential missing: the
// lookup of an empty bearer token, a face asking for its caller, a service
// handed none.
func TestMissingKeyIsOneSentence(t *testing.T) {
	const want = "missing API key: send Authorization: Bearer <API key>"
	_, lookup := (&Authenticator{}).Lookup(context.Background(), "")
	_, authenticate := Authenticate(context.Background())
	for name, err := range map[string]error{
		"MissingKey":   MissingKey(),
		"Lookup":       lookup,
		"Authenticate": authenticate,
		"Require":      (*Caller)(nil).Require(ComputeRead),
	} {
		if e, ok := apierr.As(err); !ok || e.Status != 401 || e.Code != apierr.Unauthenticated || e.Message != want {
			t.Errorf("%s: %v, want 401 %s %q", name, err, apierr.Unauthenticated, want)
		}
	}
	n := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "graph") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if k := strings.Count(string(b), "missing API key"); k > 0 {
			n += k
			if filepath.Clean(path) != filepath.Join("..", "..", "internal", "auth", "auth.go") {
				t.Errorf("%s writes the missing-key sentence: answer auth.MissingKey()", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("the missing-key sentence is written %d times, want once (auth.MissingKey)", n)
	}
}
