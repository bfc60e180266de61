package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	spacepkg "github.com/bkb-go/bkb/space"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/objectives"
)

// BuildArms returns the candidate set of the configuration: one valid point
// per row (a value per parameter), without duplicates. A CSV file whose
// content changed since the study was created (Arms.SHA256) is an error;
// the hash of a new study's file is recorded in c.
func (c *Config) BuildArms() (*mat.Dense, error) {
	p := c.Space.Dim()
	if c.Arms.Kind == "csv" {
		return c.loadCSVArms()
	}
	unitBox := objectives.Box{Lower: make([]float64, p), Upper: make([]float64, p)}
	for i := range unitBox.Upper {
		unitBox.Upper[i] = 1
	}
	var u *mat.Dense
	var err error
	switch c.Arms.Kind {
	case "sobol":
		u, err = objectives.Sobol(unitBox, c.Arms.N, c.Arms.Seed)
	case "lhs":
		u, err = objectives.LatinHypercube(unitBox, c.Arms.N, c.Arms.Seed)
	case "random":
		u, err = objectives.Uniform(unitBox, c.Arms.N, c.Arms.Seed)
	case "grid":
		u, err = objectives.Grid(unitBox, c.Arms.PerDim)
	default:
		return nil, fmt.Errorf("study: unknown arm set %q", c.Arms.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("study: %s arms: %w", c.Arms.Kind, err)
	}
	n, _ := u.Dims()
	out := make([]float64, 0, n*p)
	seen := make(map[string]bool, n)
	x := make([]float64, p)
	cond := c.Space.Plan() // nil without conditions
	for i := 0; i < n; i++ {
		c.Space.FromUnit(x, u.RawRowView(i))
		if cond != nil {
			// Design points that differ only where parameters are
			// inactive are one point (condition.go).
			cond.Canonicalize(x)
		}
		key := PointKey(x)
		if seen[key] {
			continue // a discrete space has fewer points than the design
		}
		seen[key] = true
		out = append(out, x...)
	}
	return mat.NewDense(len(out)/p, p, out), nil
}

// PointKey identifies a point exactly: two points have one key when
// every coordinate has the same bits. The key is the bits themselves, 8
// bytes a coordinate (a restore keys every candidate of a long study,
// and formatting them as text cost it about 5 ms); it is a map key only,
// never stored or ordered.
func PointKey(x []float64) string {
	if len(x) == 0 {
		return ""
	}
	b := make([]byte, 8*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	// b is not written again: the string shares its bytes, as
	// strings.Builder's does.
	return unsafe.String(&b[0], len(b))
}

// MaxArmsFile bounds the size of an arms CSV file.
const MaxArmsFile = 1 << 30

// loadCSVArms reads a CSV of arms: one point per line, a value per
// parameter in the space's order (a categorical by its label or index),
// optional header line, '#' comments.
func (c *Config) loadCSVArms() (*mat.Dense, error) {
	f, err := os.Open(c.Arms.File)
	if err != nil {
		return nil, fmt.Errorf("study: arms file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("study: arms file %s is not a regular file", c.Arms.File)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxArmsFile+1))
	if err != nil {
		return nil, fmt.Errorf("study: arms file: %w", err)
	}
	if len(b) > MaxArmsFile {
		return nil, fmt.Errorf("study: arms file %s is larger than %d bytes", c.Arms.File, MaxArmsFile)
	}
	sum := sha256.Sum256(b)
	hash := hex.EncodeToString(sum[:])
	if c.Arms.SHA256 != "" && c.Arms.SHA256 != hash {
		return nil, fmt.Errorf("study: arms file %s changed since the study was created (SHA-256 differs)", c.Arms.File)
	}
	c.Arms.SHA256 = hash
	return ReadPoints(bytes.NewReader(b), c.Space, c.Arms.File)
}

// ReadPoints reads CSV points of space (see Config.Arms csv); name labels
// errors. Duplicate points are dropped.
func ReadPoints(r io.Reader, space Space, name string) (*mat.Dense, error) {
	if space.Continuous() {
		// Numbers only: the arm-set CSV format of objectives.LoadCSV
		// (comments, header, BOM), checked against the space.
		arms, err := objectives.LoadCSV(r, space.Dim())
		if err != nil {
			return nil, fmt.Errorf("study: %s: %v", name, strings.TrimPrefix(err.Error(), "objectives: "))
		}
		n, _ := arms.Dims()
		for i := 0; i < n; i++ {
			if err := space.Check(arms.RawRowView(i)); err != nil {
				return nil, fmt.Errorf("study: %s: arm %d: %v", name, i+1, TrimStudy(err))
			}
		}
		return arms, nil
	}
	rows, err := ReadCSV(r, space, name, false)
	if err != nil {
		return nil, err
	}
	p := space.Dim()
	out := make([]float64, 0, len(rows)*p)
	seen := map[string]bool{}
	for _, row := range rows {
		if k := PointKey(row.X); !seen[k] {
			seen[k] = true
			out = append(out, row.X...)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("study: %s: no points", name)
	}
	return mat.NewDense(len(out)/p, p, out), nil
}

// CSVRow is a parsed CSV line: a point and, with values, its value.
// CSVRow is one row of a CSV of points (and values): its line, point and
// value.
type CSVRow struct {
	Line  int
	X     []float64
	Value float64
}

// ReadCSV parses points (and with withValue a last column of values).
// The first line is a header if any of its fields is not a valid level;
// a header may name the columns in any order.
func ReadCSV(r io.Reader, space Space, name string, withValue bool) ([]CSVRow, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	p := space.Dim()
	want := p
	if withValue {
		want++
	}
	var rows []CSVRow
	order := make([]int, p) // column of each parameter
	for i := range order {
		order[i] = i
	}
	valueCol := p
	statusCol := -1 // a "status" column (bkb export): rows not complete are skipped
	for first := true; ; first = false {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("study: %s: %w", name, err)
		}
		if first && withValue && isCSVHeader(rec, space) && slices.ContainsFunc(rec, func(f string) bool { return strings.TrimSpace(f) == "value" }) {
			// A header with a "value" column may have other columns too
			// (the trace of bkb export and optimize --trace): they are
			// ignored, and with a "status" column only complete rows count.
			want = len(rec)
			for j, f := range rec {
				switch strings.TrimSpace(f) {
				case "value":
					valueCol = j
				case "status":
					statusCol = j
				}
			}
			for i, prm := range space.Params {
				order[i] = slices.IndexFunc(rec, func(f string) bool { return strings.TrimSpace(f) == prm.Name })
			}
			continue
		}
		if len(rec) != want {
			return nil, fmt.Errorf("study: %s:%d: %d fields, want %d (%s)", name, line, len(rec), want, strings.Join(csvColumns(space, withValue), ","))
		}
		if statusCol >= 0 && strings.TrimSpace(rec[statusCol]) != "complete" {
			continue
		}
		if first && isCSVHeader(rec, space) {
			cols := map[string]int{}
			for j, f := range rec {
				cols[strings.TrimSpace(f)] = j
			}
			for i, prm := range space.Params {
				j, ok := cols[prm.Name]
				if !ok {
					return nil, fmt.Errorf("study: %s:%d: header has no column %q", name, line, prm.Name)
				}
				order[i] = j
				delete(cols, prm.Name)
			}
			if withValue {
				if len(cols) != 1 {
					return nil, fmt.Errorf("study: %s:%d: header needs one value column besides the parameters", name, line)
				}
				for _, j := range cols {
					valueCol = j
				}
			}
			continue
		}
		row := CSVRow{Line: line, X: make([]float64, p)}
		var blank []bool // conditional parameters left empty
		for i, prm := range space.Params {
			if prm.Condition != nil && strings.TrimSpace(rec[order[i]]) == "" {
				// Not active at this point (checked below): bkb export
				// leaves it empty.
				if blank == nil {
					blank = make([]bool, p)
				}
				blank[i] = true
				row.X[i] = prm.Placeholder()
				continue
			}
			v, err := prm.ParseLevel(rec[order[i]])
			if err != nil {
				return nil, fmt.Errorf("study: %s:%d: %v", name, line, err)
			}
			row.X[i] = v
		}
		if space.Conditional() {
			if err := spacepkg.CheckBlanks(space, row.X, blank); err != nil {
				return nil, fmt.Errorf("study: %s:%d: %v", name, line, err)
			}
		}
		if err := space.Check(row.X); err != nil {
			return nil, fmt.Errorf("study: %s:%d: %v", name, line, strings.TrimPrefix(err.Error(), "study: "))
		}
		if withValue {
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[valueCol]), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("study: %s:%d: value %q is not a finite number", name, line, rec[valueCol])
			}
			row.Value = v
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func csvColumns(space Space, withValue bool) []string {
	cols := space.Names()
	if withValue {
		cols = append(cols, "value")
	}
	return cols
}

// isCSVHeader reports whether a first CSV line names columns: it contains
// every parameter name.
func isCSVHeader(rec []string, space Space) bool {
	names := map[string]bool{}
	for _, f := range rec {
		names[strings.TrimSpace(f)] = true
	}
	for _, p := range space.Params {
		if !names[p.Name] {
			return false
		}
	}
	return true
}
