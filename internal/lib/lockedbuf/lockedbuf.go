// Package lockedbuf is a bytes.Buffer that goroutines share: a server's
// or a process's log written on its goroutines while a test reads it. It
// lives outside any _test.go file so that the tests of every package (the
// command's, the HTTP edge's, the connectors') use this one.
package lockedbuf

import (
	"bytes"
	"sync"
)

// Buffer is safe for concurrent Write and String; the zero value is empty
// and ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String answers what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
