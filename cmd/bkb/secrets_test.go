package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bkb-go/bkb/storage/postgres"
)

// TestRedactURL: a PostgreSQL password is masked in every form a user may
// give it: a URL's user info, its query, a keyword/value string (quoted or
// not), and in any error that quotes it.
func TestRedactURL(t *testing.T) {
	for _, c := range []struct{ conn, secret string }{
		{"postgres://bkb:Secret1@db.example:5432/bkb?sslmode=disable", "Secret1"},
		{"postgresql://bkb:p%40ss%2Fword@db.example/bkb", "p%40ss%2Fword"},
		{"postgres://bkb@db.example/bkb?password=Secret2&sslmode=disable", "Secret2"},
		{"postgres://bkb@db.example/bkb?sslmode=disable&password=Secret2b", "Secret2b"},
		{"host=db.example user=bkb password=Secret3 dbname=bkb", "Secret3"},
		{"host=db.example user=bkb password='Sec ret4' dbname=bkb", "Sec ret4"},
		{"postgres://bkb:Secret5@[::1", "Secret5"}, // unparsable
	} {
		got := redactURL(c.conn)
		if strings.Contains(got, c.secret) || strings.Contains(got, strings.Fields(c.secret)[0]) || !strings.Contains(got, "***") {
			t.Errorf("redactURL(%q) = %q", c.conn, got)
		}
		if msg := maskSecrets("cannot parse `" + c.conn + "`: failed"); strings.Contains(msg, c.secret) {
			t.Errorf("error quoting %q: %q", c.conn, msg)
		}
	}
	if got := redactURL("postgres://bkb:bkb@127.0.0.1/bkb_test"); got != "postgres://bkb:***@127.0.0.1/bkb_test" {
		t.Errorf("a short password: %q (want only the password masked)", got)
	}
	if got := maskSecrets("bkb: study bkb_test"); got != "bkb: study bkb_test" {
		t.Errorf("a short password masked ordinary text: %q", got)
	}
}

// TestSafeText: control characters from a crafted file are escaped.
func TestSafeText(t *testing.T) {
	if got := safeText("study \x1b]0;pwned\x07 \u009b31m\tx"); got != `study \x1b]0;pwned\x07 \x9b31m\x09x` {
		t.Errorf("safeText = %q", got)
	}
}

// craftJournal writes a copy of the journal src with its header changed by
// edit.
func craftJournal(t *testing.T, src, dst string, edit func(h map[string]any)) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(string(b), "\n")
	var h map[string]any
	if err := json.Unmarshal([]byte(first), &h); err != nil {
		t.Fatal(err)
	}
	edit(h)
	nb, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, append(append(nb, '\n'), rest...), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestCraftedJournal: a journal whose header names its study or a
// parameter with terminal escape sequences prints none of them; one whose
// header names another arms file (no hash, or a wrong one) does not read
// it into an error.
func TestCraftedJournal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	if r := runBKB(t, nil, "optimize", "--study", good, "-T", "5", "-f", "branin", "-q"); r.code != 0 {
		t.Fatalf("optimize: %s", r.stderr)
	}
	const esc = "\x1b]0;pwned\x07\x1b[31m"
	named := craftJournal(t, good, filepath.Join(dir, "named.jsonl"), func(h map[string]any) { h["name"] = esc + "evil" })
	param := craftJournal(t, good, filepath.Join(dir, "param.jsonl"), func(h map[string]any) {
		h["config"].(map[string]any)["space"].(map[string]any)["params"].([]any)[0].(map[string]any)["name"] = "x" + esc
	})
	for _, args := range [][]string{
		{"status", "--study", named},
		{"tell", "--study", named, "--trial", "99", "--value", "1"},
		{"ask", "--study", named, "--format", "tsv"},
		{"copy", "--from", named, "--to", filepath.Join(dir, "copy.jsonl")},
		{"status", "--study", param},
		{"optimize", "--study", param, "--resume", "-T", "6"},
	} {
		r := runBKB(t, nil, args...)
		if strings.ContainsAny(r.stdout+r.stderr, "\x1b\x07") {
			t.Errorf("%v printed a control character: %q %q", args, r.stdout, r.stderr)
		}
	}
	wantRun(t, runBKB(t, nil, "status", "--study", param), 2, "control character")

	secret := writeFile(t, dir, "secret.csv", "TOPSECRET,1\n")
	for _, arms := range []map[string]any{
		{"kind": "csv", "file": secret},
		{"kind": "csv", "file": secret, "sha256": strings.Repeat("ab", 32)},
	} {
		p := craftJournal(t, good, filepath.Join(dir, "arms.jsonl"), func(h map[string]any) { h["config"].(map[string]any)["arms"] = arms })
		r := runBKB(t, nil, "status", "--study", p)
		if r.code != 2 || strings.Contains(r.stdout+r.stderr, "TOPSECRET") {
			t.Errorf("arms %v: exit %d, %q", arms, r.code, r.stderr)
		}
	}
}

// TestPasswordMaskedCLI: bkb never prints a PostgreSQL password, however
// it was given, and copy --to a keyword/value string copies to PostgreSQL
// instead of creating a file of that name.
func TestPasswordMaskedCLI(t *testing.T) {
	base := os.Getenv("BKB_POSTGRES_URL")
	if base == "" {
		t.Skip("BKB_POSTGRES_URL is not set: no PostgreSQL server to test against (.ci/run starts one)")
	}
	t.Parallel()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	pw, ok := u.User.Password()
	if !ok || pw == "" {
		t.Skip("BKB_POSTGRES_URL has no password to mask")
	}
	dir := t.TempDir()
	j := filepath.Join(dir, "s.jsonl")
	if r := runBKB(t, nil, "optimize", "--study", j, "-T", "5", "-f", "branin", "-q"); r.code != 0 {
		t.Fatalf("optimize: %s", r.stderr)
	}
	query := *u
	query.User = url.User(u.User.Username())
	q := query.Query()
	q.Set("password", pw)
	query.RawQuery = q.Encode()
	kv := "host=" + u.Hostname() + " port=" + u.Port() + " user=" + u.User.Username() + " password=" + pw + " dbname=" + strings.TrimPrefix(u.Path, "/") + " sslmode=disable"
	name := fmt.Sprintf("f19pw-%d", time.Now().UnixNano())
	t.Cleanup(func() {
		st, err := postgres.Open(context.Background(), base, postgres.Options{})
		if err != nil {
			t.Logf("cleanup: %v", err)
			return
		}
		defer st.Close()
		if _, err := st.Pool().Exec(context.Background(), "DELETE FROM bkb_studies WHERE name LIKE $1", name+"-%"); err != nil {
			t.Logf("cleanup: %v", err)
		}
	})
	for i, conn := range []string{base, query.String(), kv} {
		study := fmt.Sprintf("%s-%d", name, i)
		for _, args := range [][]string{
			{"copy", "--from", j, "--to", conn, "--study", study},
			{"status", "--storage", conn, "--study", study},
			{"worker", "--storage", conn, "--study", study, "--progress", "lines"},
			{"status", "--storage", conn, "--study", study + "-missing"},
		} {
			r := runBKBProcess(t, nil, args...) // a fresh process: no password registered by an earlier run
			for _, leak := range []string{":" + pw + "@", "password=" + pw} {
				if strings.Contains(r.stdout+r.stderr, leak) {
					t.Errorf("%v printed the password (%q): %s %s", args, leak, r.stdout, r.stderr)
				}
			}
			if args[0] == "copy" && r.code != 0 {
				t.Errorf("copy to %s: exit %d: %s", redactURL(conn), r.code, r.stderr)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("copy created files: %v", entries)
	}
}

// TestRetryNoticeLine: the notice of a storage retrying its connection is
// one line on stderr, with the password of the command's --storage
// masked, even where the error quotes it.
func TestRetryNoticeLine(t *testing.T) {
	registerArgSecrets([]string{"--storage=postgres://bkb:n0tice-pw@db.example:5432/bkb"})
	var buf bytes.Buffer
	retryNotice(&buf)("create or migrate the schema", errors.New("failed to connect to `user=bkb password=n0tice-pw`:\n\tdb.example:5432: dial error"), 30*time.Second)
	got := buf.String()
	if strings.Count(got, "\n") != 1 || strings.Contains(got, "n0tice-pw") ||
		!strings.HasPrefix(got, "bkb: cannot reach PostgreSQL (create or migrate the schema: failed to connect") || !strings.HasSuffix(got, "retrying for up to 30s\n") {
		t.Errorf("notice %q", got)
	}
}
