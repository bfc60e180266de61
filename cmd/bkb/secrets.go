package main

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/bkb-go/bkb/storage/postgres"
	"github.com/jackc/pgx/v5/pgconn"
)

// Secrets: a PostgreSQL password may come in a URL's user info, in its
// query (?password=), or in a keyword/value string (password=...). Every
// connection string bkb is given is parsed with pgx's own parser, its
// password remembered, and every line bkb prints about a storage, and
// every error it reports, is masked (maskSecrets).

var (
	secretsMu sync.Mutex
	secrets   []string
)

// isConnString reports whether loc names a PostgreSQL database
// (postgres.IsConnString).
func isConnString(loc string) bool { return postgres.IsConnString(loc) }

// passwordRE finds passwords pgx's parser could not read out (a string it
// refuses): password=..., quoted or not, in a query or a keyword/value
// string.
var passwordRE = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)`)

// minSecret is the shortest password masked wherever it appears in an
// error: a shorter one ("bkb") would mask ordinary words; redactURL still
// masks it in the connection string itself.
const minSecret = 4

// userinfoRE finds the password of a URL's user info that net/url could
// not parse.
var userinfoRE = regexp.MustCompile(`(://[^:/@\s]*):([^@\s]*)@`)

// registerSecrets remembers the password of the connection string conn,
// if it has one, so that maskSecrets hides it wherever it appears.
func registerSecrets(conn string) {
	var found []string
	if cfg, err := pgconn.ParseConfig(conn); err == nil && cfg.Password != "" {
		found = append(found, cfg.Password)
	}
	if u, err := url.Parse(conn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			found = append(found, pw)
		}
	}
	for _, m := range userinfoRE.FindAllStringSubmatch(conn, -1) {
		found = append(found, m[2])
	}
	for _, m := range passwordRE.FindAllStringSubmatch(conn, -1) {
		if pw := strings.Trim(m[2], "'"); pw != "" {
			found = append(found, pw)
		}
	}
	secretsMu.Lock()
	defer secretsMu.Unlock()
	for _, pw := range found {
		if pw == "" || len(pw) < minSecret {
			continue // masked where it stands (redactURL), not everywhere
		}
		for _, form := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw), url.UserPassword("u", pw).String()[2:]} {
			if form != "" && !contains(secrets, form) {
				secrets = append(secrets, form)
			}
		}
	}
}

// registerArgSecrets remembers the passwords of every command-line
// argument that is, or holds, a connection string (--storage URL,
// --storage=URL, copy --from/--to), before anything is printed.
func registerArgSecrets(args []string) {
	for _, a := range args {
		if i := strings.IndexByte(a, '='); strings.HasPrefix(a, "--") && i > 0 {
			a = a[i+1:]
		}
		if isConnString(a) || strings.Contains(strings.ToLower(a), "password") {
			registerSecrets(a)
		}
	}
}

// maskSecrets replaces every remembered password in s by "***", and any
// password=... the parsers did not see.
func maskSecrets(s string) string {
	secretsMu.Lock()
	list := append([]string(nil), secrets...)
	secretsMu.Unlock()
	// Longest first, so that an escaped form is replaced whole.
	for i := range list {
		for j := i + 1; j < len(list); j++ {
			if len(list[j]) > len(list[i]) {
				list[i], list[j] = list[j], list[i]
			}
		}
	}
	for _, pw := range list {
		s = strings.ReplaceAll(s, pw, "***")
	}
	return passwordRE.ReplaceAllString(s, "${1}***")
}

// maskMark stands for a password in a URL until it is printed as ***.
const maskMark = "BKBPASSWORDMASK"

// redactURL returns a connection string (URL or keyword/value) for
// display: its password masked in every form (user info, ?password=,
// password=...).
func redactURL(conn string) string {
	registerSecrets(conn)
	if u, err := url.Parse(conn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), maskMark)
		}
		if q := u.Query(); q.Has("password") {
			q.Set("password", maskMark)
			u.RawQuery = q.Encode()
		}
		conn = strings.ReplaceAll(u.String(), maskMark, "***")
	} else {
		conn = userinfoRE.ReplaceAllString(conn, "${1}:***@")
	}
	return maskSecrets(conn)
}

// safeText escapes control characters (a terminal's escape sequences,
// tabs, newlines) in text bkb prints that came from a file or a storage:
// a crafted study name or label cannot drive the terminal.
func safeText(s string) string {
	if !hasControl(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hasControl reports whether s has a C0 or C1 control character or DEL.
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return true
		}
	}
	return false
}
