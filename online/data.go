package online

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Dataset is an in-memory regression or classification dataset: N examples
// of dimension D, X row-major (N x D), targets Y.
type Dataset struct {
	Name string
	X    []float64
	Y    []float64
	N, D int
	Task Task
	// Header holds the column names when the file's first line was not
	// numeric (nil otherwise).
	Header []string
	// Labels are the two original target values mapped to -1 and +1 when a
	// file with exactly two distinct targets (0/1, 1/2, -1/+1, ...) was read
	// as a classification dataset; SetTask(Regression) restores them.
	Labels [2]float64
}

// Row returns example i's input. It aliases X.
func (ds *Dataset) Row(i int) []float64 { return ds.X[i*ds.D : (i+1)*ds.D] }

// LoadCSV reads a dataset from a CSV file without header, one example per
// line, the target in the last column (the format of ../shared/data). Files
// ending in .gz (or starting with the gzip magic) are decompressed. The task
// is Classification when the targets take exactly two distinct integer
// values (-1/+1, 0/1, 1/2, ...; the smaller is mapped to -1, the larger to
// +1, see Dataset.Labels), Regression otherwise; SetTask overrides the
// detection.
func LoadCSV(path string) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("online: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	var r io.Reader = br
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("online: %s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	name := filepath.Base(path)
	for _, ext := range []string{".gz", ".csv"} {
		name = strings.TrimSuffix(name, ext)
	}
	ds, err := ReadCSV(r, name)
	if err != nil {
		return nil, fmt.Errorf("online: %s: %w", path, err)
	}
	return ds, nil
}

// ReadCSV parses the CSV format of LoadCSV from r. Blank lines are skipped;
// a trailing comma on a line is ignored; a line with quotes is parsed by
// encoding/csv (a quoted number is its number); a first line in which no field
// parses as a number is taken as a header (Dataset.Header).
func ReadCSV(r io.Reader, name string) (*Dataset, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	ds := &Dataset{Name: name}
	cols := -1
	line := 0
	var fields [][]byte
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		b = bytes.TrimSuffix(b, []byte(","))
		fields = fields[:0]
		quoted := bytes.IndexByte(b, '"') >= 0
		if quoted {
			// Quoted fields (pandas' QUOTE_ALL, a spreadsheet): encoding/csv.
			cr := csv.NewReader(bytes.NewReader(b))
			cr.TrimLeadingSpace = true
			rec, err := cr.Read()
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			for _, f := range rec {
				fields = append(fields, []byte(f))
			}
		}
		for len(b) > 0 && !quoted {
			i := bytes.IndexByte(b, ',')
			if i < 0 {
				fields = append(fields, b)
				break
			}
			fields = append(fields, b[:i])
			b = b[i+1:]
		}
		if cols < 0 && ds.Header == nil && !anyNumeric(fields) {
			// A first line without a single number is a header.
			for _, f := range fields {
				ds.Header = append(ds.Header, string(bytes.TrimSpace(f)))
			}
			continue
		}
		if cols < 0 {
			cols = len(fields)
			if cols < 2 {
				return nil, fmt.Errorf("line %d: need at least 2 columns, got %d", line, cols)
			}
			if ds.Header != nil && len(ds.Header) != cols {
				return nil, fmt.Errorf("line %d: %d columns, the header has %d", line, cols, len(ds.Header))
			}
		} else if len(fields) != cols {
			return nil, fmt.Errorf("line %d: %d columns, want %d", line, len(fields), cols)
		}
		for j, fb := range fields {
			v, err := strconv.ParseFloat(string(bytes.TrimSpace(fb)), 64)
			if err != nil {
				return nil, fmt.Errorf("line %d, column %d: %w", line, j+1, err)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("line %d, column %d: non-finite value", line, j+1)
			}
			if j == cols-1 {
				ds.Y = append(ds.Y, v)
			} else {
				ds.X = append(ds.X, v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cols < 0 {
		return nil, errors.New("no examples")
	}
	ds.D = cols - 1
	ds.N = len(ds.Y)
	ds.Task = Regression
	if lo, hi, ok := twoValues(ds.Y); ok && lo == math.Trunc(lo) && hi == math.Trunc(hi) {
		ds.Labels = [2]float64{lo, hi}
		ds.Task = Classification
		for i, y := range ds.Y {
			ds.Y[i] = labelOf(y, hi)
		}
	}
	return ds, nil
}

// anyNumeric reports whether some field parses as a float.
func anyNumeric(fields [][]byte) bool {
	for _, f := range fields {
		if _, err := strconv.ParseFloat(string(bytes.TrimSpace(f)), 64); err == nil {
			return true
		}
	}
	return false
}

// twoValues reports whether y takes exactly two distinct values lo < hi.
func twoValues(y []float64) (lo, hi float64, ok bool) {
	if len(y) == 0 {
		return 0, 0, false
	}
	lo, hi = y[0], y[0]
	for _, v := range y {
		switch {
		case v == lo || v == hi:
		case lo == hi && v < lo:
			lo = v
		case lo == hi:
			hi = v
		default:
			return 0, 0, false
		}
	}
	return lo, hi, lo != hi
}

func labelOf(y, hi float64) float64 {
	if y == hi {
		return 1
	}
	return -1
}

// SetTask sets the dataset's task, overriding the detection of ReadCSV:
// Regression restores the original two target values of a detected
// classification dataset; Classification needs exactly two distinct targets
// and maps them to -1 (the smaller) and +1.
func (ds *Dataset) SetTask(t Task) error {
	if t == ds.Task {
		return nil
	}
	switch t {
	case Regression:
		if ds.Labels != [2]float64{} {
			for i, y := range ds.Y {
				if y > 0 {
					ds.Y[i] = ds.Labels[1]
				} else {
					ds.Y[i] = ds.Labels[0]
				}
			}
		}
		ds.Task = Regression
		return nil
	case Classification:
		lo, hi, ok := twoValues(ds.Y)
		if !ok {
			return fmt.Errorf("online: %s: classification needs exactly two distinct target values", ds.Name)
		}
		ds.Labels = [2]float64{lo, hi}
		for i, y := range ds.Y {
			ds.Y[i] = labelOf(y, hi)
		}
		ds.Task = Classification
		return nil
	}
	return fmt.Errorf("online: unknown task %d", int(t))
}

// ParseTask returns the task named s: "regression" or "classification"
// ("binary", "classify" are accepted too).
func ParseTask(s string) (Task, error) {
	switch s {
	case "regression", "regress":
		return Regression, nil
	case "classification", "classify", "binary":
		return Classification, nil
	}
	return 0, fmt.Errorf("online: unknown task %q (want regression or classification)", s)
}

// Clone returns a deep copy.
func (ds *Dataset) Clone() *Dataset {
	c := *ds
	c.X = append([]float64(nil), ds.X...)
	c.Y = append([]float64(nil), ds.Y...)
	return &c
}

// Head returns the first n examples (all if n <= 0 or n >= N), sharing
// storage with ds.
func (ds *Dataset) Head(n int) *Dataset {
	if n <= 0 || n >= ds.N {
		return ds
	}
	c := *ds
	c.X = ds.X[:n*ds.D]
	c.Y = ds.Y[:n]
	c.N = n
	return &c
}

// Range is a closed interval [Lo, Hi] that values are rescaled to.
type Range struct{ Lo, Hi float64 }

var (
	// FeatureRange is where Jézéquel et al. (NeurIPS 2019) and Li and Liao (ICML 2023) rescale features: [-1, 1].
	FeatureRange = Range{-1, 1}
	// UnitRange is where Li and Liao (ICML 2023) rescales regression targets: [0, 1].
	UnitRange = Range{0, 1}
	// SymmetricRange is where Jézéquel et al. (NeurIPS 2019) rescales regression targets: [-1, 1].
	SymmetricRange = Range{-1, 1}
)

// Scale rescales, in place, every feature column to fr and (for
// regression) the targets to tr by the min-max map over the whole dataset,
// the offline preprocessing of Li and Liao (ICML 2023), Appendix A ("targets and features
// rescaled to fit in [0, 1] and [-1, 1]") and Jézéquel et al. (NeurIPS 2019), Section 4. Constant
// columns map to the middle of the range. A nil range leaves that part
// unchanged; classification labels are never rescaled.
func (ds *Dataset) Scale(fr, tr *Range) {
	if fr != nil {
		for j := 0; j < ds.D; j++ {
			lo, hi := math.Inf(1), math.Inf(-1)
			for i := 0; i < ds.N; i++ {
				v := ds.X[i*ds.D+j]
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
			for i := 0; i < ds.N; i++ {
				ds.X[i*ds.D+j] = rescale(ds.X[i*ds.D+j], lo, hi, *fr)
			}
		}
	}
	if tr != nil && ds.Task == Regression {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range ds.Y {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		for i, v := range ds.Y {
			ds.Y[i] = rescale(v, lo, hi, *tr)
		}
	}
}

// TargetScaling reports how ScaleTargetsRobust mapped the targets: [Lo, Hi]
// of the original targets went to the range; Clipped targets lay outside
// the fences and were clipped to Lo or Hi.
type TargetScaling struct {
	Lo, Hi  float64
	Clipped int
	// FenceLo, FenceHi are the outlier fences Q1 - 10 IQR and Q3 + 10 IQR.
	FenceLo, FenceHi float64
}

// OutlierFence is the multiple of the interquartile range beyond the
// quartiles at which ScaleTargetsRobust treats a target as an outlier (Tukey
// uses 3 for "far out"; 10, about 14 standard deviations for normal
// targets, keeps the long tails of skewed but clean targets such as
// elevators' log Goal, whose maximum is 5 IQR above the third quartile).
const OutlierFence = 10.0

// ScaleTargetsRobust rescales regression targets to r by the min-max map of
// the targets inside the fences [Q1 - 10 IQR, Q3 + 10 IQR] and clips the
// targets outside them to the ends of r. Without outliers it is exactly
// the min-max scaling of Scale; with one target of 1e6 among values of
// order 1 it keeps the others spread over r instead of squeezing them to a
// point (which makes every learner's MSE meaninglessly small). A zero IQR
// (more than half the targets equal) falls back to min-max. Classification
// labels are left alone.
func (ds *Dataset) ScaleTargetsRobust(r Range) TargetScaling {
	if ds.Task != Regression || ds.N == 0 {
		return TargetScaling{}
	}
	s := append([]float64(nil), ds.Y...)
	slices.Sort(s)
	q1, q3 := quantile(s, 0.25), quantile(s, 0.75)
	iqr := q3 - q1
	sc := TargetScaling{Lo: s[0], Hi: s[len(s)-1], FenceLo: math.Inf(-1), FenceHi: math.Inf(1)}
	if iqr > 0 {
		sc.FenceLo, sc.FenceHi = q1-OutlierFence*iqr, q3+OutlierFence*iqr
		sc.Lo, sc.Hi = math.Inf(1), math.Inf(-1)
		for _, v := range s {
			if v >= sc.FenceLo && v <= sc.FenceHi {
				sc.Lo, sc.Hi = math.Min(sc.Lo, v), math.Max(sc.Hi, v)
			} else {
				sc.Clipped++
			}
		}
	}
	for i, v := range ds.Y {
		v = math.Max(sc.Lo, math.Min(sc.Hi, v))
		ds.Y[i] = rescale(v, sc.Lo, sc.Hi, r)
	}
	return sc
}

// quantile returns the q-quantile of sorted s by linear interpolation.
func quantile(s []float64, q float64) float64 {
	p := q * float64(len(s)-1)
	i := int(p)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (p-float64(i))*(s[i+1]-s[i])
}

// MedianDistance returns the median Euclidean distance between the pairs of
// at most m rows of ds drawn without replacement from seed (all rows when
// N <= m): the median heuristic for the Gaussian kernel width (Dai et al., NIPS 2014,
// Section 5, and common practice). It looks at the inputs only, never at
// the targets, so it does not leak labels into the prequential protocol
// (like the min-max feature scaling, it is offline preprocessing). It
// returns 0 when all sampled rows are equal.
func (ds *Dataset) MedianDistance(m int, seed uint64) float64 {
	idx := Permutation(ds.N, seed)
	if len(idx) > m {
		idx = idx[:m]
	}
	d := make([]float64, 0, len(idx)*(len(idx)-1)/2)
	for a := 0; a < len(idx); a++ {
		xa := ds.Row(idx[a])
		for b := a + 1; b < len(idx); b++ {
			xb := ds.Row(idx[b])
			var s float64
			for j, v := range xa {
				t := v - xb[j]
				s += t * t
			}
			d = append(d, math.Sqrt(s))
		}
	}
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return quantile(d, 0.5)
}

func rescale(v, lo, hi float64, r Range) float64 {
	if !(hi > lo) {
		return (r.Lo + r.Hi) / 2
	}
	return r.Lo + (r.Hi-r.Lo)*(v-lo)/(hi-lo)
}

// Permutation returns a uniformly random permutation of 0..n-1 drawn from
// seed (math/rand/v2 PCG with stream 0x5eed).
func Permutation(n int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	return rng.Perm(n)
}

// DatasetStream presents a dataset in a given order.
type DatasetStream struct {
	ds    *Dataset
	order []int
	pos   int
}

// NewDatasetStream returns a stream over ds in the order of a random
// permutation drawn from seed (each of the papers' "random permutations").
// ds is not copied and must not change during the pass.
func NewDatasetStream(ds *Dataset, seed uint64) *DatasetStream {
	return &DatasetStream{ds: ds, order: Permutation(ds.N, seed)}
}

// NewOrderedStream returns a stream over ds in its file order.
func NewOrderedStream(ds *Dataset) *DatasetStream {
	o := make([]int, ds.N)
	for i := range o {
		o[i] = i
	}
	return &DatasetStream{ds: ds, order: o}
}

// Next returns the next example.
func (s *DatasetStream) Next() ([]float64, float64, bool) {
	if s.pos >= len(s.order) {
		return nil, 0, false
	}
	i := s.order[s.pos]
	s.pos++
	return s.ds.Row(i), s.ds.Y[i], true
}

// Len returns the number of examples.
func (s *DatasetStream) Len() int { return len(s.order) }

// Dim returns the input dimension.
func (s *DatasetStream) Dim() int { return s.ds.D }

// Task returns the dataset's task.
func (s *DatasetStream) Task() Task { return s.ds.Task }

// Order returns the dataset indices in stream order (aliases internal state).
func (s *DatasetStream) Order() []int { return s.order }

// ExpTargets replaces every target y by exp(y - max y), in place. The
// elevators file of ../shared/data (T. Evans' uci_datasets, from Wilson et
// al.) stores log(Goal) minus its mean, while Li and Liao (ICML 2023) used the raw WEKA
// target Goal: exp(y - c) is Goal up to a positive factor, which the min-max
// rescaling of Scale removes, so ExpTargets then Scale reproduces the
// paper's targets exactly.
func (ds *Dataset) ExpTargets() {
	m := math.Inf(-1)
	for _, y := range ds.Y {
		m = math.Max(m, y)
	}
	for i, y := range ds.Y {
		ds.Y[i] = math.Exp(y - m)
	}
}
