package objectives

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"gonum.org/v1/gonum/mat"
)

func TestBoxValidate(t *testing.T) {
	t.Parallel()
	inf, nan := math.Inf(1), math.NaN()
	for _, tc := range []struct {
		b    Box
		want string // "" for valid
	}{
		{Box{Lower: []float64{0, -1}, Upper: []float64{1, 1}}, ""},
		{Box{Lower: []float64{-1e300}, Upper: []float64{1e300}}, ""},
		{Box{Lower: []float64{0}, Upper: []float64{1, 2}}, "1 lower bounds but 2 upper"},
		{Box{}, "dimension 0"},
		{Box{Lower: []float64{0, 0}, Upper: []float64{1, 0}}, "dimension 1: lower bound 0 is not below upper bound 0"},
		{Box{Lower: []float64{0, 2}, Upper: []float64{1, 1}}, "dimension 1: lower bound 2"},
		{Box{Lower: []float64{nan}, Upper: []float64{1}}, "dimension 0: lower bound NaN"},
		{Box{Lower: []float64{0, 0, -inf}, Upper: []float64{1, 1, 1}}, "dimension 2: lower bound -Inf"},
		{Box{Lower: []float64{0}, Upper: []float64{inf}}, "dimension 0: upper bound +Inf"},
		{Box{Lower: []float64{0}, Upper: []float64{nan}}, "dimension 0: upper bound NaN"},
		{Box{Lower: []float64{-math.MaxFloat64}, Upper: []float64{math.MaxFloat64}}, "dimension 0: width"},
	} {
		err := tc.b.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: unexpected error %v", tc.b, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want %q", tc.b, err, tc.want)
		}
	}
}

func TestBoxContains(t *testing.T) {
	t.Parallel()
	b := Box{Lower: []float64{0, 0}, Upper: []float64{1, 2}}
	for _, tc := range []struct {
		x    []float64
		want bool
	}{
		{[]float64{0, 2}, true},
		{[]float64{0.5, 1}, true},
		{[]float64{1.5, 1}, false},
		{[]float64{0.5, -1e-300}, false},
		{[]float64{math.NaN(), 1}, false},
		{[]float64{0.5}, false},
		{[]float64{0.5, 1, 1}, false},
	} {
		if got := b.Contains(tc.x); got != tc.want {
			t.Errorf("Contains(%v) = %v", tc.x, got)
		}
	}
}

func TestGrid(t *testing.T) {
	t.Parallel()
	b := Box{Lower: []float64{0, -1, 10}, Upper: []float64{1, 1, 20}}
	g, err := Grid(b, 3)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := g.Dims(); r != 27 || c != 3 {
		t.Fatalf("dims %dx%d", r, c)
	}
	want := [][]float64{{0, -1, 10}, {0, -1, 15}, {0, -1, 20}, {0, 0, 10}}
	for i, w := range want {
		if !floatsEqual(g.RawRowView(i), w) {
			t.Errorf("row %d = %v, want %v", i, g.RawRowView(i), w)
		}
	}
	if last := g.RawRowView(26); !floatsEqual(last, b.Upper) {
		t.Errorf("last row %v, want %v", last, b.Upper)
	}
	// Ticks with awkward spacing still end exactly on the bounds.
	g7, _ := Grid(Box{Lower: []float64{-0.3}, Upper: []float64{0.7}}, 7)
	if g7.At(0, 0) != -0.3 || g7.At(6, 0) != 0.7 {
		t.Errorf("grid endpoints %v, %v", g7.At(0, 0), g7.At(6, 0))
	}
	c, _ := Grid(b, 1)
	if !floatsEqual(c.RawRowView(0), []float64{0.5, 0, 15}) {
		t.Errorf("1-point grid %v", c.RawRowView(0))
	}

	for _, tc := range []struct {
		b      Box
		perDim int
		want   string
	}{
		{b, 0, "must be positive"},
		{b, -3, "must be positive"},
		{Box{Lower: filled(8, 0), Upper: filled(8, 1)}, 10, "10^8 points exceed the limit of 10000000"},
		{Box{Lower: filled(64, 0), Upper: filled(64, 1)}, 1 << 40, "exceed the limit"},
		{Box{Lower: []float64{1}, Upper: []float64{0}}, 3, "dimension 0"},
	} {
		if _, err := Grid(tc.b, tc.perDim); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Grid(dim %d, %d) error %v, want %q", tc.b.Dim(), tc.perDim, err, tc.want)
		}
	}
}

func floatsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-12*(1+math.Abs(b[i])) {
			return false
		}
	}
	return true
}

// builders are the random arm-set builders, for the tests they share.
var builders = []struct {
	name  string
	build func(Box, int, uint64) (*mat.Dense, error)
}{
	{"Uniform", Uniform},
	{"Sobol", Sobol},
	{"LatinHypercube", LatinHypercube},
}

func TestBuildersInBoxAndSeeded(t *testing.T) {
	t.Parallel()
	b := Box{Lower: []float64{-32.768, 0, 5}, Upper: []float64{32.768, math.Pi, 5.5}}
	for _, bl := range builders {
		t.Run(bl.name, func(t *testing.T) {
			t.Parallel()
			a, err := bl.build(b, 500, 8)
			if err != nil {
				t.Fatal(err)
			}
			if r, c := a.Dims(); r != 500 || c != 3 {
				t.Fatalf("dims %dx%d", r, c)
			}
			for i := range 500 {
				if x := a.RawRowView(i); !b.Contains(x) {
					t.Fatalf("arm %d = %v outside the box", i, x)
				}
			}
			a2, _ := bl.build(b, 500, 8)
			a3, _ := bl.build(b, 500, 9)
			if !mat.Equal(a, a2) {
				t.Fatal("same seed, different arms")
			}
			if mat.Equal(a, a3) {
				t.Fatal("different seeds, same arms")
			}
		})
	}
}

func TestBuildersErrors(t *testing.T) {
	t.Parallel()
	good := Box{Lower: []float64{0}, Upper: []float64{1}}
	for _, bl := range builders {
		for _, tc := range []struct {
			b    Box
			n    int
			want string
		}{
			{good, 0, "must be positive, got 0"},
			{good, -1, "must be positive, got -1"},
			{good, MaxArmElements + 1, "exceed the limit"},
			{Box{Lower: filled(4, 0), Upper: filled(4, 1)}, MaxArmElements / 2, "exceed the limit"},
			{Box{}, 5, "dimension 0"},
			{Box{Lower: []float64{0, 1}, Upper: []float64{1, 1}}, 5, "box dimension 1"},
		} {
			if _, err := bl.build(tc.b, tc.n, 0); err == nil || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), bl.name) {
				t.Errorf("%s(%v, %d) error %v, want %q", bl.name, tc.b, tc.n, err, tc.want)
			}
		}
	}
}

// TestLatinHypercubeStrata checks one arm per stratum per dimension.
func TestLatinHypercubeStrata(t *testing.T) {
	t.Parallel()
	unit := Box{Lower: []float64{0, 0, 0, 0}, Upper: []float64{1, 1, 1, 1}}
	for _, n := range []int{1, 2, 7, 100, 1000} {
		for _, seed := range []uint64{0, 3} {
			a, err := LatinHypercube(unit, n, seed)
			if err != nil {
				t.Fatal(err)
			}
			for j := 0; j < 4; j++ {
				seen := make([]bool, n)
				for i := 0; i < n; i++ {
					c := int(math.Floor(a.At(i, j) * float64(n)))
					if c < 0 || c >= n || seen[c] {
						t.Fatalf("n=%d seed=%d dim %d: arm %d (%v) in stratum %d, taken or out of range",
							n, seed, j, i, a.At(i, j), c)
					}
					seen[c] = true
				}
			}
		}
	}
	// On a general box the strata are the scaled ones.
	b := Box{Lower: []float64{-5, 100}, Upper: []float64{10, 101}}
	a, _ := LatinHypercube(b, 50, 1)
	for j := range 2 {
		seen := make([]bool, 50)
		for i := range 50 {
			c := int(math.Floor((a.At(i, j) - b.Lower[j]) / (b.Upper[j] - b.Lower[j]) * 50))
			c = min(c, 49)
			if seen[c] {
				t.Fatalf("dim %d: stratum %d taken twice", j, c)
			}
			seen[c] = true
		}
	}
}

func TestUniformMoments(t *testing.T) {
	t.Parallel()
	a, err := Uniform(Box{Lower: []float64{0, -2}, Upper: []float64{1, 2}}, 20000, 5)
	if err != nil {
		t.Fatal(err)
	}
	for j, want := range []struct{ mean, sd float64 }{{0.5, 1 / math.Sqrt(12)}, {0, 4 / math.Sqrt(12)}} {
		col := mat.Col(nil, j, a)
		var m, s2 float64
		for _, v := range col {
			m += v / float64(len(col))
		}
		for _, v := range col {
			s2 += (v - m) * (v - m) / float64(len(col))
		}
		if math.Abs(m-want.mean) > 4*want.sd/math.Sqrt(20000) || math.Abs(math.Sqrt(s2)-want.sd) > 0.02*want.sd {
			t.Errorf("coordinate %d: mean %v sd %v, want %v %v", j, m, math.Sqrt(s2), want.mean, want.sd)
		}
	}
}

func TestLoadCSV(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		dim  int
		want [][]float64
	}{
		{"plain", "1,2\n3,4\n", 0, [][]float64{{1, 2}, {3, 4}}},
		{"no final newline", "1,2\n3,4", 2, [][]float64{{1, 2}, {3, 4}}},
		{"header", "x,y\n1,2\n", 2, [][]float64{{1, 2}}},
		{"header infers dim", "a, b ,c\n1,2,3\n", 0, [][]float64{{1, 2, 3}}},
		{"comments blanks spaces", "# arms\n\n  1.5 , -2e-3 # first\n#x\n\t3,4\r\n", 0, [][]float64{{1.5, -2e-3}, {3, 4}}},
		{"comment then header", "# c\nx\n7\n8\n", 1, [][]float64{{7}, {8}}},
		{"BOM", "\uFEFFx,y\n1,2\n", 0, [][]float64{{1, 2}}},
		{"one column", "0.25\n0.5\n", 0, [][]float64{{0.25}, {0.5}}},
		// Quoted fields, as pandas' QUOTE_ALL or a spreadsheet writes them.
		{"quoted", "\"x\",\"y # mm\"\n\"1.5\", \"-2\"\n3,\"4\" # c\n", 0, [][]float64{{1.5, -2}, {3, 4}}},
	} {
		got, err := LoadCSV(strings.NewReader(tc.in), tc.dim)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !mat.Equal(got, mat.NewDense(len(tc.want), len(tc.want[0]), flatten(tc.want))) {
			t.Errorf("%s: got %v, want %v", tc.name, mat.Formatted(got), tc.want)
		}
	}
}

func flatten(rows [][]float64) []float64 {
	var out []float64
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

func TestLoadCSVErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		dim  int
		want string
	}{
		{"empty", "", 0, "no arms in 0 lines"},
		{"only comments", "# a\n\n# b\n", 0, "no arms in 3 lines"},
		{"only header", "x,y\n", 0, "no arms in 1 lines"},
		{"short row", "1,2\n3\n", 0, "line 2: has 1 fields, want 2"},
		{"long row", "1,2\n3,4,5\n", 2, "line 2: has 3 fields, want 2"},
		{"first row wrong dim", "1,2,3\n", 2, "line 1: has 3 fields, want 2"},
		{"header wrong dim", "x,y,z\n1,2\n", 2, "line 1: header has 3 fields, want 2"},
		{"header sets dim", "x,y\n1,2,3\n", 0, "line 2: has 3 fields, want 2"},
		{"not a number", "1,2\n3,abc\n", 0, `line 2: field 2 "abc" is not a number`},
		{"mixed first line", "1,abc\n", 0, `line 1: field 2 "abc" is not a number`},
		{"second header", "x,y\nx,y\n", 0, "line 2: field 1"},
		{"NaN", "# c\n1,NaN\n", 0, `line 2: field 2 "NaN" is not finite`},
		{"Inf", "1,2\n\n-Inf,2\n", 0, `line 3: field 1 "-Inf" is not finite`},
		{"overflow", "1e999,2\n", 0, "line 1: field 1 \"1e999\" is not finite"},
		{"empty field", "1,,2\n", 0, "line 1: field 2 is empty"},
		{"trailing comma", "1,2,\n", 0, "line 1: field 3 is empty"},
		{"bad quote", "1,\"2\n", 0, "line 1: extraneous or missing \" in quoted-field"},
		{"quoted text", "1,2\n\"3\",\"a\"\n", 0, `line 2: field 2 "a" is not a number`},
		{"long line", "1," + strings.Repeat(" ", maxCSVLine) + "2\n", 0, "line 1: longer than"},
		{"too many columns", "x\n" + strings.Repeat("0,", MaxCSVColumns) + "0\n", 0, "line 2: 10001 fields, more than the 10000 columns"},
		{"too many header columns", strings.Repeat("a,", MaxCSVColumns) + "a\n", 0, "line 1: 10001 fields"},
	} {
		_, err := LoadCSV(strings.NewReader(tc.in), tc.dim)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}

	if _, err := LoadCSV(nil, 0); err == nil {
		t.Error("nil reader: no error")
	}
	boom := errors.New("boom")
	_, err := LoadCSV(iotest.ErrReader(boom), 0)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("read error: %v", err)
	}
}

// TestLoadCSVColumns: a CSV of one line of 2,000,000 columns (4 MB) is
// refused while its first line is read, without splitting it or building
// a matrix of two million dimensions: under 50 MB allocated (measured, not
// timed; the test is not parallel, so the count is its own).
func TestLoadCSVColumns(t *testing.T) {
	for _, c := range []struct{ name, in string }{
		{"numbers", strings.Repeat("0,", 2_000_000) + "0\n"},
		{"header", strings.Repeat("a,", 2_000_000) + "a\n0\n"},
		{"under the line cap", strings.Repeat("0,", 20_000) + "0\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := LoadCSV(strings.NewReader(c.in), 0)
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatal("accepted")
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 50<<20 {
				t.Fatalf("%d MB allocated, want under 50 (%v)", alloc>>20, err)
			}
		})
	}
	// The cap itself is accepted.
	m, err := LoadCSV(strings.NewReader(strings.Repeat("0.5,", MaxCSVColumns-1)+"0.5\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, d := m.Dims(); d != MaxCSVColumns {
		t.Fatalf("dimension %d", d)
	}
}
