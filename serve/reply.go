package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// apiError is the body of every error answer.
type apiError struct {
	Error string `json:"error"`
	// Code is a machine-readable kind: "complete" when the budget is used
	// up, else empty.
	Code    string `json:"code,omitempty"`
	Pending int    `json:"pending,omitempty"`
}

// mask hides the secrets in a message, the longest first (so that an
// escaped form is replaced whole).
func (s *Server) mask(msg string) string {
	for _, sec := range s.secrets {
		msg = strings.ReplaceAll(msg, sec, "***")
	}
	if s.opt.Mask != nil {
		msg = s.opt.Mask(msg)
	}
	return msg
}

func (s *Server) fail(w http.ResponseWriter, code int, format string, args ...any) {
	s.reply(w, code, apiError{Error: fmt.Sprintf(format, args...)})
}

// reply writes v as JSON, with the secrets masked.
func (s *Server) reply(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"cannot encode the answer"}`)
	}
	if len(s.secrets) > 0 || s.opt.Mask != nil {
		b = []byte(s.mask(string(b)))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(b)
	w.Write([]byte{'\n'})
}

// replyErr maps a library error to a status.
func (s *Server) replyErr(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	var mbe *http.MaxBytesError
	body := apiError{Error: err.Error()}
	switch {
	case errors.As(err, &mbe):
		code = http.StatusRequestEntityTooLarge
		body.Error = fmt.Sprintf("request body larger than %d bytes", mbe.Limit)
	case errors.As(err, new(badRequest)):
		code = http.StatusBadRequest
	case errors.Is(err, storage.ErrNotFound), errors.Is(err, study.ErrNoTrial):
		code = http.StatusNotFound
	case errors.Is(err, storage.ErrExists):
		code = http.StatusConflict
	case errors.Is(err, study.ErrComplete):
		code, body.Code = http.StatusConflict, "complete"
	case errors.Is(err, study.ErrValueRange):
		code = http.StatusBadRequest
	case errors.Is(err, errConflict), errors.Is(err, study.ErrNotPending):
		code = http.StatusConflict
	case r.Context().Err() != nil:
		code = 499
	}
	if code >= 500 {
		s.opt.Logf("%s %s: %s", r.Method, r.URL.Path, s.mask(err.Error()))
	}
	s.reply(w, code, body)
}

// badRequest marks a client's mistake.
type badRequest struct{ error }

func badf(format string, args ...any) error { return badRequest{fmt.Errorf(format, args...)} }

// decode reads a JSON body into v: unknown fields and trailing data are
// errors, and an empty body is an empty object.
func decode(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		b = []byte("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badf("malformed JSON body: %v", err)
	}
	if dec.More() {
		return badf("malformed JSON body: data after the JSON value")
	}
	return nil
}

// name returns the checked study name of a request.
func name(r *http.Request) (string, error) {
	n := r.PathValue("name")
	if err := storage.CheckStudyName(n); err != nil {
		return "", badRequest{err}
	}
	return n, nil
}

// trialNumber returns the trial number of a request.
func trialNumber(r *http.Request) (int, error) {
	t, err := strconv.Atoi(r.PathValue("trial"))
	if err != nil || t < 0 {
		return 0, badf("trial %q: want a trial number >= 0", r.PathValue("trial"))
	}
	return t, nil
}

// nameAndTrial returns the checked study name and the trial number of a
// request on one trial.
func nameAndTrial(r *http.Request) (string, int, error) {
	n, err := name(r)
	if err != nil {
		return "", 0, err
	}
	t, err := trialNumber(r)
	return n, t, err
}

func isNoTrial(err error) bool { return errors.Is(err, study.ErrNoTrial) }

// nameOfRequest returns the study name of a request; on an error it has
// answered and ok is false.
func (s *Server) nameOfRequest(w http.ResponseWriter, r *http.Request) (string, bool) {
	n, err := name(r)
	if err != nil {
		s.replyErr(w, r, err)
		return "", false
	}
	return n, true
}

// trialOfRequest returns the study name and trial number of a request on
// one trial; on an error it has answered and ok is false.
func (s *Server) trialOfRequest(w http.ResponseWriter, r *http.Request) (string, int, bool) {
	n, trial, err := nameAndTrial(r)
	if err != nil {
		s.replyErr(w, r, err)
		return "", 0, false
	}
	return n, trial, true
}

// decodeOr decodes the request's JSON body into v; on an error it has
// answered and returns false.
func (s *Server) decodeOr(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := decode(r, v); err != nil {
		s.replyErr(w, r, err)
		return false
	}
	return true
}

// loadOr loads the study n (see load); on an error it has answered and
// ok is false.
func (s *Server) loadOr(w http.ResponseWriter, r *http.Request, n string, refresh bool) (*study.Study, bool) {
	st, err := s.load(r.Context(), n, refresh)
	if err != nil {
		s.replyErr(w, r, err)
		return nil, false
	}
	return st, true
}
