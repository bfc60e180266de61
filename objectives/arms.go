package objectives

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Box is an axis-aligned hyper-rectangle [Lower_1, Upper_1] x ... x
// [Lower_d, Upper_d], the domain from which arm sets are built.
type Box struct {
	Lower, Upper []float64
}

// Dim returns the dimension of b, len(b.Lower).
func (b Box) Dim() int { return len(b.Lower) }

// Validate reports a box whose bounds differ in length, are empty, are not
// finite, or are not strictly increasing (Lower_i < Upper_i) in some
// dimension, or whose width Upper_i - Lower_i overflows. The error names the
// offending dimension (0-based).
func (b Box) Validate() error {
	if len(b.Lower) != len(b.Upper) {
		return fmt.Errorf("objectives: box has %d lower bounds but %d upper bounds", len(b.Lower), len(b.Upper))
	}
	if len(b.Lower) == 0 {
		return errors.New("objectives: box has dimension 0")
	}
	for i, lo := range b.Lower {
		hi := b.Upper[i]
		switch {
		case math.IsNaN(lo) || math.IsInf(lo, 0):
			return fmt.Errorf("objectives: box dimension %d: lower bound %v is not finite", i, lo)
		case math.IsNaN(hi) || math.IsInf(hi, 0):
			return fmt.Errorf("objectives: box dimension %d: upper bound %v is not finite", i, hi)
		case !(lo < hi):
			return fmt.Errorf("objectives: box dimension %d: lower bound %v is not below upper bound %v", i, lo, hi)
		case math.IsInf(hi-lo, 0):
			return fmt.Errorf("objectives: box dimension %d: width %v - %v overflows", i, hi, lo)
		}
	}
	return nil
}

// Contains reports whether x has the box's dimension and lies in the closed
// box.
func (b Box) Contains(x []float64) bool {
	if len(x) != len(b.Lower) || len(x) != len(b.Upper) {
		return false
	}
	for i, v := range x {
		if !(v >= b.Lower[i] && v <= b.Upper[i]) {
			return false
		}
	}
	return true
}

// scale maps u in [0, 1] to Lower_i + u (Upper_i - Lower_i), clamped to the
// box so that rounding can never leave it.
func (b Box) scale(i int, u float64) float64 {
	v := b.Lower[i] + u*(b.Upper[i]-b.Lower[i])
	return min(max(v, b.Lower[i]), b.Upper[i])
}

// MaxArmElements bounds n*d for every arm-set builder (800 MB of float64s),
// so that a typo in n fails with an error instead of exhausting memory.
const MaxArmElements = 100_000_000

// MaxGridPoints bounds the number of points Grid builds.
const MaxGridPoints = 10_000_000

// checkSize validates n and the box, and the n*d budget.
func checkSize(who string, b Box, n int) error {
	if err := b.Validate(); err != nil {
		return fmt.Errorf("objectives: %s: %w", who, err)
	}
	if n <= 0 {
		return fmt.Errorf("objectives: %s: number of points must be positive, got %d", who, n)
	}
	if d := b.Dim(); n > MaxArmElements/d {
		return fmt.Errorf("objectives: %s: %d points in dimension %d exceed the limit of %d numbers", who, n, d, MaxArmElements)
	}
	return nil
}

// Grid returns the full tensor grid with perDim equally spaced points per
// dimension, endpoints included (perDim = 1 gives the centre of the box):
// perDim^d arms, in lexicographic order with the last coordinate varying
// fastest. It is an error if the grid would have more than MaxGridPoints
// points.
func Grid(b Box, perDim int) (*mat.Dense, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("objectives: Grid: %w", err)
	}
	if perDim <= 0 {
		return nil, fmt.Errorf("objectives: Grid: points per dimension must be positive, got %d", perDim)
	}
	d := b.Dim()
	n := 1
	for range d {
		if n > MaxGridPoints/perDim {
			return nil, fmt.Errorf("objectives: Grid: %d^%d points exceed the limit of %d", perDim, d, MaxGridPoints)
		}
		n *= perDim
	}
	if n > MaxArmElements/d {
		return nil, fmt.Errorf("objectives: Grid: %d points in dimension %d exceed the limit of %d numbers", n, d, MaxArmElements)
	}
	// ticks[i][k] is the k-th coordinate value in dimension i.
	ticks := make([][]float64, d)
	for i := range ticks {
		t := make([]float64, perDim)
		if perDim == 1 {
			t[0] = b.Lower[i] + (b.Upper[i]-b.Lower[i])/2
		} else {
			for k := range t {
				t[k] = b.scale(i, float64(k)/float64(perDim-1))
			}
			t[0], t[perDim-1] = b.Lower[i], b.Upper[i]
		}
		ticks[i] = t
	}
	out := mat.NewDense(n, d, nil)
	idx := make([]int, d) // mixed-radix counter, last digit fastest
	for r := 0; r < n; r++ {
		row := out.RawRowView(r)
		for i, k := range idx {
			row[i] = ticks[i][k]
		}
		for i := d - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < perDim {
				break
			}
			idx[i] = 0
		}
	}
	return out, nil
}

// newRand returns the generator every builder draws from: PCG seeded with
// (seed, stream), so that the same seed gives the same arms.
func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// Stream constants keep the builders' random streams distinct for one seed.
const (
	streamUniform = 0x6f626a2d756e6966 // "obj-unif"
	streamLHS     = 0x6f626a2d6c687321 // "obj-lhs!"
	streamSobol   = 0x6f626a2d736f626c // "obj-sobl"
	streamReward  = 0x6f626a2d6e6f6973 // "obj-nois"
	streamGP      = 0x6f626a2d67707370 // "obj-gpsp"
)

// Uniform returns n arms drawn independently and uniformly from the box,
// using math/rand/v2's PCG generator seeded with seed.
func Uniform(b Box, n int, seed uint64) (*mat.Dense, error) {
	if err := checkSize("Uniform", b, n); err != nil {
		return nil, err
	}
	rng := newRand(seed, streamUniform)
	out := mat.NewDense(n, b.Dim(), nil)
	for r := 0; r < n; r++ {
		row := out.RawRowView(r)
		for i := range row {
			row[i] = b.scale(i, rng.Float64())
		}
	}
	return out, nil
}

// LatinHypercube returns a Latin hypercube sample of n arms from the box
// (McKay, Beckman and Conover, Technometrics 21, 1979): in every dimension
// each of the n equal-width strata [Lower + k w/n, Lower + (k+1) w/n) holds
// exactly one arm, placed uniformly within it, and the strata are paired
// across dimensions by independent random permutations.
//
// Hand-written (a dozen lines, the same algorithm as gonum's
// stat/samplemv.LatinHypercube) because samplemv imports stat/distmv, whose
// dependency golang.org/x/tools is not in this module's go.sum.
func LatinHypercube(b Box, n int, seed uint64) (*mat.Dense, error) {
	if err := checkSize("LatinHypercube", b, n); err != nil {
		return nil, err
	}
	d := b.Dim()
	rng := newRand(seed, streamLHS)
	out := mat.NewDense(n, d, nil)
	fn := float64(n)
	for i := 0; i < d; i++ {
		perm := rng.Perm(n)
		for k, r := range perm {
			// Stratum k of dimension i goes to arm r; the min keeps
			// (k + u)/n below (k+1)/n should it round up.
			u := min((float64(k)+rng.Float64())/fn, math.Nextafter(float64(k+1)/fn, 0))
			out.Set(r, i, b.scale(i, u))
		}
	}
	return out, nil
}

// MaxCSVColumns bounds the number of fields of a line LoadCSV reads: the
// dimension of an arm set read from a file (a CSV of two million columns
// would otherwise make a space of two million parameters).
const MaxCSVColumns = 10_000

// maxCSVLine bounds the length of one line read by LoadCSV: MaxCSVColumns
// fields of up to 100 bytes each (a float64 needs at most 24), so that a
// line of too many columns is refused while it is read, after at most
// this many bytes.
const maxCSVLine = 100 * MaxCSVColumns

// LoadCSV reads an arm set, one arm per line with comma-separated
// coordinates. Blank lines are skipped, and so is everything from a '#' to
// the end of its line (so whole-line and trailing comments are allowed).
// The first remaining line is a header, and skipped, if none of its fields
// is a number. If dim > 0 every arm (and the header, if any) must have dim
// fields; if dim <= 0 the dimension is that of the header or, without one,
// of the first arm. Every other field must be a finite number
// (strconv.ParseFloat syntax, surrounding spaces allowed). A UTF-8
// byte-order mark and CRLF line ends are accepted. Errors name the 1-based
// line number and the problem: wrong number of fields, an empty field, a
// field that is not a number (including a first line that mixes numbers and
// names), NaN or Inf, no arms at all, more than MaxCSVColumns fields, or
// a line longer than 1,000,000 bytes.
func LoadCSV(r io.Reader, dim int) (*mat.Dense, error) {
	if r == nil {
		return nil, errors.New("objectives: LoadCSV: nil reader")
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxCSVLine)
	var data []float64
	rows := 0
	line := 0
	headerAllowed := true
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			text = strings.TrimPrefix(text, "\uFEFF") // UTF-8 byte-order mark
		}
		if k := commentStart(text); k >= 0 {
			text = text[:k]
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		if n := strings.Count(text, ",") + 1; n > MaxCSVColumns {
			return nil, fmt.Errorf("objectives: LoadCSV: line %d: %d fields, more than the %d columns an arm set may have", line, n, MaxCSVColumns)
		}
		fields, err := splitCSVLine(text)
		if err != nil {
			return nil, fmt.Errorf("objectives: LoadCSV: line %d: %v", line, err)
		}
		if headerAllowed {
			headerAllowed = false
			if isHeader(fields) {
				if dim > 0 && len(fields) != dim {
					return nil, fmt.Errorf("objectives: LoadCSV: line %d: header has %d fields, want %d", line, len(fields), dim)
				}
				dim = len(fields)
				continue
			}
		}
		if dim <= 0 {
			dim = len(fields)
		}
		if len(fields) != dim {
			return nil, fmt.Errorf("objectives: LoadCSV: line %d: has %d fields, want %d", line, len(fields), dim)
		}
		if len(data)+dim > MaxArmElements {
			return nil, fmt.Errorf("objectives: LoadCSV: line %d: more than %d numbers", line, MaxArmElements)
		}
		for j, f := range fields {
			f = strings.TrimSpace(f)
			if f == "" {
				return nil, fmt.Errorf("objectives: LoadCSV: line %d: field %d is empty", line, j+1)
			}
			v, err := strconv.ParseFloat(f, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return nil, fmt.Errorf("objectives: LoadCSV: line %d: field %d %q is not a number", line, j+1, f)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("objectives: LoadCSV: line %d: field %d %q is not finite", line, j+1, f)
			}
			data = append(data, v)
		}
		rows++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("objectives: LoadCSV: line %d: longer than %d bytes", line+1, maxCSVLine)
		}
		return nil, fmt.Errorf("objectives: LoadCSV: reading line %d: %w", line+1, err)
	}
	if rows == 0 {
		return nil, fmt.Errorf("objectives: LoadCSV: no arms in %d lines", line)
	}
	return mat.NewDense(rows, dim, data), nil
}

// commentStart returns the index of the first '#' outside double quotes,
// -1 if there is none.
func commentStart(text string) int {
	quoted := false
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '"':
			quoted = !quoted
		case '#':
			if !quoted {
				return i
			}
		}
	}
	return -1
}

// splitCSVLine splits one line of CSV into its fields. A line with a
// quote is parsed by encoding/csv (a quoted number, as pandas' QUOTE_ALL or
// a spreadsheet writes it, is its number; a quoted field may hold a comma);
// the common unquoted line is split on commas without allocating a reader.
func splitCSVLine(text string) ([]string, error) {
	if !strings.ContainsRune(text, '"') {
		return strings.Split(text, ","), nil
	}
	cr := csv.NewReader(strings.NewReader(text))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	fields, err := cr.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, err
	}
	return fields, nil
}

// isHeader reports whether no field of a line parses as a number.
func isHeader(fields []string) bool {
	for _, f := range fields {
		if _, err := strconv.ParseFloat(strings.TrimSpace(f), 64); err == nil || errors.Is(err, strconv.ErrRange) {
			return false
		}
	}
	return true
}
