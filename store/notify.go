package store

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"
)

// eventChannel is the PostgreSQL NOTIFY channel of the event log; the
// payload is the new event's id. Payloads are lossy (a listener that
// reconnects misses what was sent meanwhile), so a notification only says
// "read the log again from where you were".
const eventChannel = "gpugraph_vm_events"

// eventLogLock is the transaction-level advisory lock every event append
// takes on PostgreSQL. Held until commit, it makes event ids commit in the
// order they were drawn: a reader that saw id n never later sees a smaller
// id appear, which is what lets subscribers resume from their last id with
// no gap. (SQLite's writers are serialized already: BEGIN IMMEDIATE.)
const eventLogLock = 0x67707567 // "gpug"

// Notifications is the process-wide broker of event-log appends: one
// LISTEN connection per process on PostgreSQL, an in-process fan-out after
// commit on SQLite. Subscribers get a wake-up channel that coalesces: one
// pending wake stands for any number of appends.
type Notifications struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
	stop context.CancelFunc
	done chan struct{}
}

// Wake returns a channel that receives after every append committed from
// now on (coalesced), and the function that stops it.
func (n *Notifications) Wake() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	n.mu.Lock()
	n.subs[ch] = struct{}{}
	n.mu.Unlock()
	return ch, func() {
		n.mu.Lock()
		delete(n.subs, ch)
		n.mu.Unlock()
	}
}

// broadcast wakes every subscriber without ever blocking on one.
func (n *Notifications) broadcast() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for ch := range n.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Notifications answers the store's broker, starting it (and on
// PostgreSQL its listener connection) on first use.
func (s *Store) Notifications() *Notifications {
	s.notifyOnce.Do(func() {
		n := &Notifications{subs: map[chan struct{}]struct{}{}, done: make(chan struct{})}
		ctx, cancel := context.WithCancel(context.Background())
		n.stop = cancel
		if s.Dialect == Postgres {
			go n.listen(ctx, s.url)
		} else {
			close(n.done)
		}
		s.notes.Store(n)
	})
	return s.notes.Load()
}

// listen holds the process's one LISTEN connection, reconnecting with a
// backoff; every (re)connect wakes everyone, since what was notified while
// it was down is lost.
func (n *Notifications) listen(ctx context.Context, url string) {
	defer close(n.done)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := n.listenOnce(ctx, url)
		if ctx.Err() != nil {
			return
		}
		slog.Warn("event log listener lost its connection; reconnecting", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (n *Notifications) listenOnce(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+eventChannel); err != nil {
		return err
	}
	n.broadcast()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		n.broadcast()
	}
}

// close stops the listener and waits for it.
func (n *Notifications) close() {
	n.stop()
	<-n.done
}

// appendedKey marks, in a transaction's context, that it appended events.
type appendedKey struct{}

// lockEventLog takes the log's lock (eventLogLock) before ids are drawn.
func (s *Store) lockEventLog(db *gorm.DB) error {
	if s.Dialect != Postgres {
		return nil
	}
	return db.Exec("SELECT pg_advisory_xact_lock(?)", eventLogLock).Error
}

// noteAppend follows an event append: on PostgreSQL it queues a NOTIFY,
// which PostgreSQL delivers at commit (and never for a rollback); on SQLite
// it marks the transaction so tx wakes the in-process subscribers after
// commit.
func (s *Store) noteAppend(db *gorm.DB, lastID int64) error {
	if s.Dialect == Postgres {
		return db.Exec("SELECT pg_notify(?, ?)", eventChannel, strconv.FormatInt(lastID, 10)).Error
	}
	if flag, ok := db.Statement.Context.Value(appendedKey{}).(*bool); ok {
		*flag = true
	}
	return nil
}
