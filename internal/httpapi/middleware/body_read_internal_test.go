package middleware

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const bodyLimit = 1 << 20 // as /graphql's

func testBodies() *bodies {
	return &bodies{timeout: 5 * time.Second, wait: time.Second, mem: newBudget(8<<20, 8<<20)}
}

// A body of announced length up to firstKnown is read into one buffer of
// that length and handed on whole without a copy; an unannounced one
// grows as it arrives and reads the same.
func TestBodiesReadOnce(t *testing.T) {
	doc := strings.Repeat("x", 109<<10)
	for _, announced := range []bool{true, false} {
		r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(doc))
		if !announced {
			r.Body = io.NopCloser(strings.NewReader(doc)) // no length to go by
			r.ContentLength = -1
		}
		release, refused := testBodies().read(httptest.NewRecorder(), r, "k", bodyLimit)
		if refused != nil {
			t.Fatal(refused)
		}
		rb := r.Body.(*readBody)
		if announced && cap(rb.buf) != len(doc)+1 {
			t.Errorf("announced %d bytes: buffer of %d, want one of %d", len(doc), cap(rb.buf), len(doc)+1)
		}
		got, err := rb.Whole()
		if err != nil || string(got) != doc {
			t.Fatalf("announced=%v: read %d bytes, %v; want the document", announced, len(got), err)
		}
		if &got[0] != &rb.buf[0] {
			t.Errorf("announced=%v: the body handed on is a copy, want the bytes read", announced)
		}
		release()
	}
	// One buffer, whatever the announced length up to firstKnown: a
	// 109 KB body takes as many allocations as a 1 KB one (one more
	// under the race detector; growing through three buffers took two
	// more).
	allocs := func(n int) float64 {
		doc := strings.Repeat("x", n)
		b := testBodies()
		return testing.AllocsPerRun(20, func() {
			r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(doc))
			release, _ := b.read(httptest.NewRecorder(), r, "k", bodyLimit)
			release()
		})
	}
	if small, large := allocs(1<<10), allocs(109<<10); large > small+1 {
		t.Errorf("a 109 KB body took %.0f allocations, a 1 KB one %.0f: want one buffer for either", large, small)
	}
}

// Whole answers what a read to the end would: the rest after a partial
// read, and the read error kept for the end (the 413 of a body too large).
func TestReadBodyWhole(t *testing.T) {
	tooLarge := &http.MaxBytesError{Limit: 4}
	b := &readBody{Reader: *bytes.NewReader([]byte("abcdef")), buf: []byte("abcdef"), err: tooLarge}
	if got, err := b.Whole(); string(got) != "abcdef" || !errors.Is(err, tooLarge) {
		t.Errorf("Whole() = %q, %v; want abcdef, the read error", got, err)
	}
	if n, err := b.Read(make([]byte, 1)); n != 0 || !errors.Is(err, tooLarge) {
		t.Errorf("after Whole(): Read = %d, %v; want 0, the read error", n, err)
	}
	b = &readBody{Reader: *bytes.NewReader([]byte("abcdef")), buf: []byte("abcdef")}
	b.Read(make([]byte, 2))
	if got, err := b.Whole(); string(got) != "cdef" || err != nil {
		t.Errorf("Whole() after 2 bytes read = %q, %v; want cdef, nil", got, err)
	}
}
