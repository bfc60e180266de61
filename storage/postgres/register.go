package postgres

import (
	"context"
	"regexp"
	"strings"

	"github.com/bkb-go/bkb/storage"
)

// kvConnRE matches the start of a libpq keyword/value connection string.
var kvConnRE = regexp.MustCompile(`^\s*(host|hostaddr|port|dbname|user|password|passfile|sslmode|service|application_name|connect_timeout|options|target_session_attrs)\s*=`)

// IsConnString reports whether location names a PostgreSQL database: a
// postgres:// or postgresql:// URL, or a keyword/value string
// ("host=... dbname=...").
func IsConnString(location string) bool {
	return strings.HasPrefix(location, "postgres://") || strings.HasPrefix(location, "postgresql://") || kvConnRE.MatchString(location)
}

// Importing the package registers it with storage.OpenLocation.
func init() {
	storage.Register("postgres", IsConnString, func(ctx context.Context, location string, opt storage.OpenOptions) (storage.Storage, error) {
		return Open(ctx, location, Options{HeartbeatGrace: opt.HeartbeatGrace, CacheDir: opt.CacheDir})
	})
}
