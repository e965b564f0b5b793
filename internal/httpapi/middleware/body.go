package middleware

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"gpugraph/internal/lib/apierr"
)

// requestTimeoutCode is the code of a request whose body did not arrive
// within the body deadline (HTTP 408).
const requestTimeoutCode = "REQUEST_TIMEOUT"

// bodies reads request bodies whole before a request takes a slot of the
// public budget or a database connection, so a client that trickles its
// body holds neither: only the bytes it has sent, counted in mem, and only
// until timeout. The bytes count as the buffer holding them grows, so a
// client must send what it holds.
type bodies struct {
	timeout time.Duration
	wait    time.Duration // how long a body waits for room in mem
	mem     *budget       // bytes held by bodies, in all and per key
}

// firstChunk is the buffer a body of unknown length starts with;
// firstKnown the most a body of announced length starts with, charged
// before its bytes arrive.
const (
	firstChunk = 32 << 10
	firstKnown = 256 << 10
)

// read replaces r.Body with its content, read whole within b.timeout and
// at most limit bytes, charging the bytes to key. An announced length
// over limit, a body over limit, or a read that failed otherwise are not
// answered here: the body then replays what arrived and the error, and the
// handler answers as it would have (413 in its own words). A body that did
// not arrive in time is answered here (408), as is a body the memory
// budget has no room for. release gives the bytes back when the request is
// done with them.
func (b *bodies) read(w http.ResponseWriter, r *http.Request, key string, limit int64) (release func(), refused *apierr.Error) {
	release = func() {}
	if r.Body == nil || r.Body == http.NoBody {
		return release, nil
	}
	if r.ContentLength > limit {
		r.Body = &readBody{err: &http.MaxBytesError{Limit: limit}}
		return release, nil
	}
	rc := http.NewResponseController(w)
	// Where the writer cannot set deadlines the server's ReadTimeout is
	// the only bound, as before.
	_ = rc.SetReadDeadline(time.Now().Add(b.timeout))
	src := http.MaxBytesReader(w, r.Body, limit)
	var held int64
	release = func() {
		if held > 0 {
			b.mem.release(key, held)
			held = 0
		}
	}
	var buf []byte
	var readErr error
	for readErr == nil {
		if len(buf) == cap(buf) {
			grown := max(firstChunk, 2*int64(cap(buf)))
			if cap(buf) == 0 && r.ContentLength >= 0 {
				// An announced length up to firstKnown is read into one
				// buffer (a 109 KB document: one allocation, not three);
				// beyond it the buffer grows with what arrives, as above.
				grown = max(grown, min(r.ContentLength+1, firstKnown))
			}
			if r.ContentLength >= 0 {
				// One byte past the announced length sees the end.
				grown = min(grown, r.ContentLength+1)
			}
			grown = min(grown, limit+1)
			if err := b.mem.acquire(r.Context(), key, grown-int64(cap(buf)), b.wait); err != nil {
				release()
				return func() {}, b.refusal(err)
			}
			held += grown - int64(cap(buf))
			next := make([]byte, len(buf), grown)
			copy(next, buf)
			buf = next
		}
		var n int
		n, readErr = src.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
	}
	if errors.Is(readErr, os.ErrDeadlineExceeded) {
		// The deadline stays passed: net/http's drain of the rest of the
		// body after the answer fails at once, and the connection closes.
		release()
		e := apierr.New(http.StatusRequestTimeout, requestTimeoutCode,
			"the request body did not arrive within %s; send it at once", b.timeout)
		w.Header().Set("Connection", "close")
		return func() {}, e
	}
	// From here the request's own timeout bounds it, not the read deadline
	// (net/http lifts it when a body ends; one cut short would leave it
	// set, and the connection's read ending there cancels the request).
	_ = rc.SetReadDeadline(time.Time{})
	if readErr == io.EOF {
		readErr = nil
	}
	r.Body = &readBody{Reader: *bytes.NewReader(buf), buf: buf, err: readErr}
	return release, nil
}

func (b *bodies) refusal(err error) *apierr.Error {
	if errors.Is(err, errShare) {
		e := apierr.New(http.StatusTooManyRequests, rateLimitedCode,
			"this credential is sending more request bodies at once than its share of %d bytes; retry when one has answered", b.mem.share)
		e.RetryAfter = 1
		return e
	}
	return refusal(err, 0)
}

// readBody is a body read ahead: its bytes, then err (a read error the
// handler answers, such as *http.MaxBytesError), else io.EOF.
type readBody struct {
	bytes.Reader
	buf []byte
	err error
}

// Whole answers the body's bytes and its read error as a read to the end
// would, without copying them when none has been read yet (the transports
// take a body this way).
func (b *readBody) Whole() ([]byte, error) {
	if b.Len() < len(b.buf) {
		rest, err := io.ReadAll(b)
		return rest, err
	}
	b.Seek(0, io.SeekEnd)
	return b.buf, b.err
}

func (b *readBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if err == io.EOF && b.err != nil {
		return n, b.err
	}
	return n, err
}

func (b *readBody) Close() error { return nil }
