package servertest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// WSMessage is one graphql-transport-ws message.
type WSMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// WS is one graphql-transport-ws connection of a test: each read and
// write that fails fails T.
type WS struct {
	T    testing.TB
	Conn *websocket.Conn
}

// Subscribe opens one graphql-transport-ws connection to the server at
// url (its http:// address) as token, and starts the subscription query
// on it as operation "1".
func Subscribe(t testing.TB, url, token, query string, vars map[string]any) *WS {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	s := &WS{T: t, Conn: conn}
	init, _ := json.Marshal(map[string]any{"Authorization": "Bearer " + token})
	s.Send(WSMessage{Type: "connection_init", Payload: init})
	if m := s.Next(); m.Type != "connection_ack" {
		t.Fatalf("after connection_init: %s %s", m.Type, m.Payload)
	}
	q, _ := json.Marshal(map[string]any{"variables": vars, "query": query})
	s.Send(WSMessage{ID: "1", Type: "subscribe", Payload: q})
	return s
}

// Send writes m.
func (s *WS) Send(m WSMessage) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := wsjson.Write(ctx, s.Conn, m); err != nil {
		s.T.Fatal(err)
	}
}

// Next reads the next message that is not a ping (which it answers),
// waiting at most 10 s.
func (s *WS) Next() WSMessage {
	s.T.Helper()
	m, err := s.Read(10 * time.Second)
	if err != nil {
		s.T.Fatalf("read: %v", err)
	}
	return m
}

// Read reads the next message that is not a ping (which it answers),
// waiting at most d.
func (s *WS) Read(d time.Duration) (WSMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		var m WSMessage
		if err := wsjson.Read(ctx, s.Conn, &m); err != nil {
			return m, err
		}
		if m.Type == "ping" {
			s.Send(WSMessage{Type: "pong"})
			continue
		}
		return m, nil
	}
}

// Quiet checks that nothing more arrives for a moment.
func (s *WS) Quiet() {
	s.T.Helper()
	if m, err := s.Read(300 * time.Millisecond); err == nil {
		s.T.Fatalf("unexpected message %s %s", m.Type, m.Payload)
	}
}

// ClosedWith reads s until its connection closes and answers the close
// code and reason. Events before the close are skipped (a suspension's own
// transitions may come first), and so is the operation's complete, which
// gqlgen may write while the close handshake it runs in the background
// has not yet sent the close frame.
func (s *WS) ClosedWith() (websocket.StatusCode, string) {
	s.T.Helper()
	for {
		m, err := s.Read(10 * time.Second)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, ce.Reason
			}
			s.T.Fatalf("read: %v, want a close", err)
		}
		if m.Type != "next" && m.Type != "complete" {
			s.T.Fatalf("unexpected %s %s before the close", m.Type, m.Payload)
		}
	}
}

// NextData reads n "next" messages of s, each one's data decoded as a D
// and taken by pick, failing on any other message or on errors in one.
func NextData[D, E any](s *WS, n int, pick func(D) E) []E {
	s.T.Helper()
	var out []E
	for len(out) < n {
		m := s.Next()
		if m.Type != "next" {
			s.T.Fatalf("message %s %s, want next (%d of %d read)", m.Type, m.Payload, len(out), n)
		}
		var p struct {
			Data   D
			Errors []any
		}
		if err := json.Unmarshal(m.Payload, &p); err != nil || len(p.Errors) > 0 {
			s.T.Fatalf("payload %s: %v", m.Payload, err)
		}
		out = append(out, pick(p.Data))
	}
	return out
}
