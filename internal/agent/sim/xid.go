package sim

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
)

// XID is a --mock-xid request: raise XID on the GPU at Index.
type XID struct {
	Index int
	XID   uint64
}

// ParseXID reads "INDEX:XID", e.g. "3:79".
func ParseXID(s string) (XID, error) {
	i, x, ok := strings.Cut(s, ":")
	if !ok {
		return XID{}, fmt.Errorf("mock XID %q: want INDEX:XID, e.g. 3:79", s)
	}
	index, err := strconv.Atoi(strings.TrimSpace(i))
	if err != nil || index < 0 {
		return XID{}, fmt.Errorf("mock XID %q: GPU index %q is not a non-negative number", s, i)
	}
	xid, err := strconv.ParseUint(strings.TrimSpace(x), 10, 64)
	if err != nil {
		return XID{}, fmt.Errorf("mock XID %q: XID %q is not a non-negative number", s, x)
	}
	return XID{Index: index, XID: xid}, nil
}

// RaiseAfterFirstHeartbeat returns a Config.AfterHeartbeat hook that raises
// the given XIDs once the server has accepted the first heartbeat. The hook
// returns only when the agent has handled them, so the first heartbeat shows
// the GPUs healthy and every later one reflects the XIDs.
func (m *Server) RaiseAfterFirstHeartbeat(xids []XID, log *slog.Logger) func(n int) {
	return func(n int) {
		if n != 1 {
			return
		}
		for _, x := range xids {
			log.Info("mock: raising XID", "index", x.Index, "xid", x.XID)
			if err := m.RaiseXID(x.Index, x.XID); err != nil {
				log.Error("mock: raising XID", "index", x.Index, "xid", x.XID, "err", err)
			}
		}
	}
}

// CheckIndexes rejects mock XIDs aimed at GPUs the server does not have.
func (m *Server) CheckIndexes(xids []XID) error {
	for _, x := range xids {
		if _, err := m.gpu(x.Index); err != nil {
			return err
		}
	}
	return nil
}
