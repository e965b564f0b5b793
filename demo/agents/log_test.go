package agents

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// The agents' routine lines are written at DEBUG: gone at the server's
// default level, there at --log-level=debug; warnings keep their level.
func TestAgentLinesAtDebug(t *testing.T) {
	for _, tc := range []struct {
		level slog.Level
		want  string
	}{
		{slog.LevelInfo, "level=WARN msg=\"report failed; retrying\" demoAgent=dgx-1\n"},
		{slog.LevelDebug, "level=DEBUG msg=\"inventory accepted\" demoAgent=dgx-1\nlevel=WARN msg=\"report failed; retrying\" demoAgent=dgx-1\n"},
	} {
		var b bytes.Buffer
		h := slog.NewTextHandler(&b, &slog.HandlerOptions{Level: tc.level, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}})
		log := slog.New(debug{h}).With("demoAgent", "dgx-1")
		log.Info("inventory accepted")
		log.Warn("report failed; retrying")
		if got := b.String(); got != tc.want {
			t.Errorf("at %v:\n%s\nwant\n%s", tc.level, got, tc.want)
		}
		if log.Enabled(t.Context(), slog.LevelInfo) != (tc.level <= slog.LevelDebug) {
			t.Errorf("at %v: Info enabled %v", tc.level, !strings.Contains(tc.want, "DEBUG"))
		}
	}
}
