package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strings"

	"gorm.io/gorm"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrate applies, in file-name order, every migration not applied yet.
// Files named *.postgres.sql or *.sqlite.sql run on that engine only.
// It is safe to run twice and, on PostgreSQL, from several replicas at once
// (an advisory lock serializes them).
func (s *Store) Migrate(ctx context.Context) error {
	files, err := s.migrations()
	if err != nil {
		return err
	}
	return s.DB.WithContext(ctx).Connection(func(conn *gorm.DB) error {
		if s.Dialect == Postgres {
			if err := conn.Exec("SELECT pg_advisory_lock(7245001)").Error; err != nil {
				return fmt.Errorf("migrate: lock: %w", err)
			}
			defer conn.Exec("SELECT pg_advisory_unlock(7245001)")
		}
		if err := conn.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (version ` + s.tokens().Replace("{{text}}") + ` PRIMARY KEY)`).Error; err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		var done []string
		if err := conn.Raw("SELECT version FROM schema_migrations").Scan(&done).Error; err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		applied := make(map[string]bool, len(done))
		for _, v := range done {
			applied[v] = true
		}
		for _, name := range files {
			if applied[name] {
				continue
			}
			body, err := migrationFiles.ReadFile("migrations/" + name)
			if err != nil {
				return err
			}
			sql := s.tokens().Replace(string(body))
			err = conn.Transaction(func(tx *gorm.DB) error {
				for _, stmt := range splitStatements(sql) {
					if err := tx.Exec(stmt).Error; err != nil {
						return fmt.Errorf("%s: %w", name, err)
					}
				}
				return tx.Exec("INSERT INTO schema_migrations (version) VALUES (?)", name).Error
			})
			if err != nil {
				return fmt.Errorf("migrate: %w", err)
			}
			slog.Debug("migrated", "version", name)
		}
		return nil
	})
}

func (s *Store) migrations() ([]string, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		switch {
		case strings.HasSuffix(n, ".postgres.sql") && s.Dialect != Postgres:
		case strings.HasSuffix(n, ".sqlite.sql") && s.Dialect != SQLite:
		default:
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

func (s *Store) tokens() *strings.Replacer {
	if s.Dialect == Postgres {
		return strings.NewReplacer("{{text}}", `text COLLATE "C"`, "{{time}}", "timestamptz",
			"{{bool}}", "boolean", "{{float}}", "double precision")
	}
	return strings.NewReplacer("{{text}}", "text", "{{time}}", "datetime",
		"{{bool}}", "boolean", "{{float}}", "real")
}

// splitStatements cuts a migration at semicolons that end a line; the
// migrations hold no semicolons inside strings or bodies.
func splitStatements(sql string) []string {
	var out []string
	var b strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") || trimmed == "" {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			out = append(out, strings.TrimSpace(b.String()))
			b.Reset()
		}
	}
	if s := strings.TrimSpace(b.String()); s != "" {
		out = append(out, s)
	}
	return out
}
