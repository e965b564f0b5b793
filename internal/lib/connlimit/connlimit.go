// Package connlimit caps the connections a listener holds open: in all,
// and per client address, so that one client (or a botnet of idle
// keep-alives and half-sent headers) cannot take every file descriptor
// and goroutine of the server. A connection over a cap is closed as soon
// as it is accepted; the others are untouched. net/http has no such bound
// of its own (golang.org/x/net/netutil.LimitListener caps the total only,
// and by making new connections wait in the kernel's backlog, which would
// hold health checks up too).
package connlimit

import (
	"net"
	"sync"
	"sync/atomic"
)

// Listener is a net.Listener whose Accept closes connections over its caps.
type Listener struct {
	net.Listener
	total, perAddress int

	mu     sync.Mutex
	open   int
	byAddr map[string]int

	// Refused counts the connections closed for a cap.
	Refused atomic.Int64
}

// New caps ln at total connections and perAddress per client address; 0
// leaves that cap off.
func New(ln net.Listener, total, perAddress int) *Listener {
	return &Listener{Listener: ln, total: total, perAddress: perAddress, byAddr: map[string]int{}}
}

// Accept answers the next connection within the caps.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := hostOf(c.RemoteAddr())
		if l.admit(host) {
			return &conn{Conn: c, release: func() { l.leave(host) }}, nil
		}
		l.Refused.Add(1)
		_ = c.Close()
	}
}

func (l *Listener) admit(host string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if (l.total > 0 && l.open >= l.total) || (l.perAddress > 0 && l.byAddr[host] >= l.perAddress) {
		return false
	}
	l.open++
	l.byAddr[host]++
	return true
}

func (l *Listener) leave(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byAddr[host]--; l.byAddr[host] <= 0 {
		delete(l.byAddr, host)
	}
}

// Open answers the connections held now, in all and from host.
func (l *Listener) Open(host string) (all, fromHost int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open, l.byAddr[host]
}

func hostOf(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// conn gives its place back once, at its first Close (net/http closes a
// connection once; a hijacked one is closed by whoever took it).
type conn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite lets net/http half-close a TCP connection as it does on its own.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
