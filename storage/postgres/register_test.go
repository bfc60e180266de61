package postgres_test

import (
	"testing"

	"github.com/bkb-go/bkb/storage"
	_ "github.com/bkb-go/bkb/storage/postgres"
)

// TestRegistered: importing the package makes storage.OpenLocation open
// PostgreSQL URLs and keyword/value strings, and nothing else.
func TestRegistered(t *testing.T) {
	t.Parallel()
	for loc, want := range map[string]string{
		"postgres://u:p@127.0.0.1/db": "postgres",
		"postgresql://127.0.0.1/db":   "postgres",
		"host=127.0.0.1 dbname=bkb":   "postgres",
		"studies/run.jsonl":           "",
		"hostname.jsonl":              "",
	} {
		if got := storage.Match(loc); got != want {
			t.Errorf("Match(%q) = %q, want %q", loc, got, want)
		}
	}
}
