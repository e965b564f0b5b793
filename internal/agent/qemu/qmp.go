package qemu

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// qmp is a client of one QEMU's QMP socket: QMP is JSON objects, one a
// line, over a unix socket. The server greets, the client negotiates with
// qmp_capabilities, then every command gets exactly one answer (return
// or error) in order, with asynchronous events interleaved. The runtime
// needs a handful of commands and two events, so this is the whole client
// (docs/decisions/0043-qemu-vms-and-their-qmp-client.md says why it is
// not a library's).
type qmp struct {
	conn net.Conn

	wmu  sync.Mutex // one command in flight: answers come in order
	ans  chan qmpMessage
	next int // the id of the next command; QMP echoes it in the answer

	mu     sync.Mutex
	events []qmpEvent // every event seen, oldest first
	notify chan struct{}
	closed chan struct{}
	err    error
}

type qmpMessage struct {
	Return json.RawMessage `json:"return"`
	Error  *struct {
		Class string `json:"class"`
		Desc  string `json:"desc"`
	} `json:"error"`
	ID    int             `json:"id"`
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
	QMP   json.RawMessage `json:"QMP"`
}

// qmpEvent is an asynchronous event: SHUTDOWN, RESET, POWERDOWN, STOP, …
type qmpEvent struct {
	Name string
	Data json.RawMessage
}

// dialQMP connects to the socket at path and negotiates capabilities.
func dialQMP(path string, timeout time.Duration) (*qmp, error) {
	conn, err := net.DialTimeout("unix", path, timeout)
	if err != nil {
		return nil, err
	}
	q := &qmp{conn: conn, ans: make(chan qmpMessage, 1), notify: make(chan struct{}), closed: make(chan struct{})}
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	conn.SetReadDeadline(time.Now().Add(timeout))
	var greeting qmpMessage
	if !sc.Scan() {
		conn.Close()
		return nil, fmt.Errorf("QMP greeting: %v", errOr(sc.Err(), errors.New("socket closed")))
	}
	if err := json.Unmarshal(sc.Bytes(), &greeting); err != nil || greeting.QMP == nil {
		conn.Close()
		return nil, fmt.Errorf("QMP greeting %q: not QMP", sc.Bytes())
	}
	conn.SetReadDeadline(time.Time{})
	go q.read(sc)
	if _, err := q.run("qmp_capabilities", nil, timeout); err != nil {
		q.Close()
		return nil, err
	}
	return q, nil
}

func errOr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

func (q *qmp) read(sc *bufio.Scanner) {
	for sc.Scan() {
		var m qmpMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			continue
		}
		if m.Event != "" {
			q.mu.Lock()
			q.events = append(q.events, qmpEvent{Name: m.Event, Data: m.Data})
			close(q.notify)
			q.notify = make(chan struct{})
			q.mu.Unlock()
			continue
		}
		// An answer no command waits for any more (it timed out) is
		// replaced by the next, never left to be read as another's.
		select {
		case <-q.ans:
		default:
		}
		q.ans <- m
	}
	q.mu.Lock()
	q.err = errOr(sc.Err(), errors.New("QMP socket closed"))
	q.mu.Unlock()
	close(q.closed)
}

// run executes command with args and answers its return value.
func (q *qmp) run(command string, args any, timeout time.Duration) (json.RawMessage, error) {
	q.wmu.Lock()
	defer q.wmu.Unlock()
	q.next++
	id := q.next
	req := map[string]any{"execute": command, "id": id}
	if args != nil {
		req["arguments"] = args
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	q.conn.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := q.conn.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("QMP %s: %w", command, err)
	}
	deadline := time.After(timeout)
	for {
		select {
		case m := <-q.ans:
			if m.ID != id {
				continue // a late answer to an earlier command
			}
			if m.Error != nil {
				return nil, fmt.Errorf("QMP %s: %s: %s", command, m.Error.Class, m.Error.Desc)
			}
			return m.Return, nil
		case <-q.closed:
			if command == "quit" {
				return nil, nil // QEMU closes the socket as it quits
			}
			return nil, fmt.Errorf("QMP %s: %w", command, q.closedErr())
		case <-deadline:
			return nil, fmt.Errorf("QMP %s: no answer in %v", command, timeout)
		}
	}
}

func (q *qmp) closedErr() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// status answers query-status's status: running, paused, shutdown, …
func (q *qmp) status(timeout time.Duration) (string, error) {
	raw, err := q.run("query-status", nil, timeout)
	if err != nil {
		return "", err
	}
	var st struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return "", fmt.Errorf("query-status: %w", err)
	}
	return st.Status, nil
}

// eventsSince answers the events after the first n seen, and a channel
// closed when another comes.
func (q *qmp) eventsSince(n int) ([]qmpEvent, <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if n > len(q.events) {
		n = len(q.events)
	}
	return append([]qmpEvent(nil), q.events[n:]...), q.notify
}

// Done is closed when the socket closes (QEMU quit or died).
func (q *qmp) Done() <-chan struct{} { return q.closed }

func (q *qmp) Close() error { return q.conn.Close() }
