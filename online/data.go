package online

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
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
}

// Row returns example i's input. It aliases X.
func (ds *Dataset) Row(i int) []float64 { return ds.X[i*ds.D : (i+1)*ds.D] }

// LoadCSV reads a dataset from a CSV file without header, one example per
// line, the target in the last column (the format of ../shared/data). Files
// ending in .gz (or starting with the gzip magic) are decompressed. The task
// is Classification when every target is -1 or +1, Regression otherwise.
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
// a trailing comma on a line is ignored.
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
		for len(b) > 0 {
			i := bytes.IndexByte(b, ',')
			if i < 0 {
				fields = append(fields, b)
				break
			}
			fields = append(fields, b[:i])
			b = b[i+1:]
		}
		if cols < 0 {
			cols = len(fields)
			if cols < 2 {
				return nil, fmt.Errorf("line %d: need at least 2 columns, got %d", line, cols)
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
	ds.Task = Classification
	for _, y := range ds.Y {
		if y != 1 && y != -1 {
			ds.Task = Regression
			break
		}
	}
	return ds, nil
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
	// FeatureRange is where seeds 000 and 002 rescale features: [-1, 1].
	FeatureRange = Range{-1, 1}
	// UnitRange is where seed 002 rescales regression targets: [0, 1].
	UnitRange = Range{0, 1}
	// SymmetricRange is where seed 000 rescales regression targets: [-1, 1].
	SymmetricRange = Range{-1, 1}
)

// Scale rescales, in place, every feature column to fr and (for
// regression) the targets to tr by the min-max map over the whole dataset,
// the offline preprocessing of seed 002, Appendix A ("targets and features
// rescaled to fit in [0, 1] and [-1, 1]") and seed 000, Section 4. Constant
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
// al.) stores log(Goal) minus its mean, while seed 002 used the raw WEKA
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
