package connlimit_test

import (
	"io"
	"net"
	"testing"
	"time"

	"gpugraph/internal/lib/connlimit"
)

// A connection over a cap is closed as it is accepted; one that closes
// gives its place back; the caps count per address and in all.
func TestCaps(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := connlimit.New(tcp, 3, 2)
	defer l.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func(from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", tcp.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// closedAtOnce: the server side closed it without a byte.
	closedAtOnce := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err := c.Read(make([]byte, 1))
		return err == io.EOF || (err != nil && !isTimeout(err))
	}
	next := func() net.Conn {
		t.Helper()
		select {
		case c := <-accepted:
			return c
		case <-time.After(2 * time.Second):
			t.Fatal("no connection accepted")
			return nil
		}
	}
	a1, a2 := dial("127.0.0.1"), dial("127.0.0.1")
	s1, _ := next(), next()
	if a3 := dial("127.0.0.1"); !closedAtOnce(a3) {
		t.Error("a third connection of one address was kept")
	}
	dial("127.0.0.2")
	next()
	if b2 := dial("127.0.0.3"); !closedAtOnce(b2) {
		t.Error("a fourth connection in all was kept")
	}
	if all, from := l.Open("127.0.0.1"); all != 3 || from != 2 {
		t.Errorf("open: %d in all, %d from 127.0.0.1; want 3 and 2", all, from)
	}
	if n := l.Refused.Load(); n != 2 {
		t.Errorf("refused %d, want 2", n)
	}
	// Closing the server's side twice gives the place back once.
	s1.Close()
	s1.Close()
	a1.Close()
	dial("127.0.0.1")
	next()
	if all, from := l.Open("127.0.0.1"); all != 3 || from != 2 {
		t.Errorf("after one closed and one more came: %d in all, %d from 127.0.0.1; want 3 and 2", all, from)
	}
	_ = a2
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
