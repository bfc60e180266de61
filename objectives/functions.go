package objectives

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Function is a standard test function to be MINIMISED, with its standard
// domain and its known optimum. The definitions follow S. Surjanovic and
// D. Bingham, "Virtual Library of Simulation Experiments: Test Functions and
// Datasets", https://www.sfu.ca/~ssurjano/optimization.html (the "SFU
// library" below); each constructor cites the page it follows.
//
// MinValue and Argmins: the SFU library rounds the optimum to 4-6 significant
// digits and the minimisers to even fewer, which is not enough to compute a
// regret near the optimum (a rounded MinValue above the true minimum makes the
// regret of good points negative). This package therefore stores the value at
// the minimiser refined to (near) double precision, which agrees with the
// published value to every digit the SFU library gives (except for
// Styblinski-Tang, whose published value is too high; see StyblinskiTang).
// Each constructor quotes the published figures. Argmins are refined the
// same way.
//
// A Function obtained from a constructor or from Lookup is a fresh copy: its
// slices may be modified by the caller without affecting other copies. Value
// is safe for concurrent use.
type Function struct {
	// Name is the canonical lower-case name accepted by Lookup.
	Name string
	// Dim is the input dimension d.
	Dim int
	// Lower and Upper bound the standard (hyper-rectangular) domain, each of
	// length Dim.
	Lower, Upper []float64
	// MinValue is the known global minimum of the function over its domain.
	MinValue float64
	// Argmins lists the known global minimisers, at least one, each of
	// length Dim.
	Argmins [][]float64

	f func(x []float64) float64
}

// Value returns f(x). It panics if len(x) != Dim or if f is not a Function
// built by this package (both are programmer errors); points outside the
// standard domain are evaluated all the same.
func (f *Function) Value(x []float64) float64 {
	if f == nil || f.f == nil {
		panic("objectives: Value called on an uninitialised Function")
	}
	if len(x) != f.Dim {
		panic(fmt.Sprintf("objectives: %s: point has dimension %d, want %d", f.Name, len(x), f.Dim))
	}
	return f.f(x)
}

// Domain returns the standard domain as a Box, with copies of the bounds.
func (f *Function) Domain() Box {
	return Box{Lower: slices.Clone(f.Lower), Upper: slices.Clone(f.Upper)}
}

// String returns the name and dimension, e.g. "ackley:5".
func (f *Function) String() string {
	return f.Name + ":" + strconv.Itoa(f.Dim)
}

// MaxLookupDim bounds the dimension accepted by Lookup for the
// dimension-generic functions ("ackley:d" and so on).
const MaxLookupDim = 10000

// registryEntry describes one name accepted by Lookup.
type registryEntry struct {
	// fixed is the dimension of a fixed-dimension function, 0 for a generic one.
	fixed int
	// minDim is the smallest dimension a generic function accepts.
	minDim int
	// build returns the function in dimension d (d is already validated).
	build func(d int) *Function
}

var registry = map[string]registryEntry{
	"ackley":         {minDim: 1, build: Ackley},
	"branin":         {fixed: 2, build: func(int) *Function { return Branin() }},
	"hartmann3":      {fixed: 3, build: func(int) *Function { return Hartmann3() }},
	"hartmann6":      {fixed: 6, build: func(int) *Function { return Hartmann6() }},
	"levy":           {minDim: 1, build: Levy},
	"michalewicz":    {fixed: 2, build: func(int) *Function { return Michalewicz() }},
	"rosenbrock":     {minDim: 2, build: Rosenbrock},
	"shekel":         {fixed: 4, build: func(int) *Function { return Shekel() }},
	"sixhumpcamel":   {fixed: 2, build: func(int) *Function { return SixHumpCamel() }},
	"styblinskitang": {minDim: 1, build: StyblinskiTang},
}

// aliases maps other common spellings (after normalisation) to registry names.
var aliases = map[string]string{
	"camel6":   "sixhumpcamel",
	"sixhump":  "sixhumpcamel",
	"shekel10": "shekel",
	"stybtang": "styblinskitang",
	"hartmann": "hartmann6",
	"hart3":    "hartmann3",
	"hart6":    "hartmann6",
	"michal":   "michalewicz",
	"rosen":    "rosenbrock",
}

// Names returns the canonical names accepted by Lookup, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Lookup returns a fresh copy of the named test function. Names are
// case-insensitive and may contain '-', '_' or spaces ("Six-Hump-Camel");
// a few common aliases are accepted (e.g. "camel6", "shekel10", "stybtang").
// The dimension-generic functions (ackley, levy, rosenbrock, styblinskitang)
// take an optional dimension after a colon, "ackley:5"; without it they are
// 2-dimensional. A fixed-dimension function accepts only its own dimension
// after the colon ("hartmann6:6"). An unknown name is an error that lists the
// valid names.
func Lookup(name string) (*Function, error) {
	base, dimStr, hasDim := strings.Cut(strings.TrimSpace(name), ":")
	key := strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', ' ', '\t':
			return -1
		}
		return r
	}, strings.ToLower(base))
	if a, ok := aliases[key]; ok {
		key = a
	}
	e, ok := registry[key]
	if !ok {
		return nil, fmt.Errorf("objectives: unknown function %q; valid names: %s", name, strings.Join(Names(), ", "))
	}
	d := e.fixed
	if d == 0 {
		d = 2
	}
	if hasDim {
		n, err := strconv.Atoi(strings.TrimSpace(dimStr))
		if err != nil {
			return nil, fmt.Errorf("objectives: function %q: dimension %q is not an integer", name, dimStr)
		}
		switch {
		case e.fixed != 0 && n != e.fixed:
			return nil, fmt.Errorf("objectives: function %s has fixed dimension %d, got %d", key, e.fixed, n)
		case e.fixed == 0 && (n < e.minDim || n > MaxLookupDim):
			return nil, fmt.Errorf("objectives: function %s: dimension must be in [%d, %d], got %d", key, e.minDim, MaxLookupDim, n)
		}
		d = n
	}
	return e.build(d), nil
}

// filled returns a slice of length d with every element v.
func filled(d int, v float64) []float64 {
	s := make([]float64, d)
	for i := range s {
		s[i] = v
	}
	return s
}

func checkDim(name string, d, min int) {
	if d < min {
		panic(fmt.Sprintf("objectives: %s needs dimension >= %d, got %d", name, min, d))
	}
}

// Branin returns the Branin (Branin-Hoo) function on [-5, 10] x [0, 15],
// https://www.sfu.ca/~ssurjano/branin.html:
//
//	f(x) = a (x2 - b x1^2 + c x1 - r)^2 + s (1 - t) cos(x1) + s,
//	a = 1, b = 5.1/(4 pi^2), c = 5/pi, r = 6, s = 10, t = 1/(8 pi).
//
// Published minimum 0.397887 at (-pi, 12.275), (pi, 2.275) and
// (9.42478, 2.475). The exact minimum is s t = 5/(4 pi), attained exactly at
// (-pi, 12.275), (pi, 2.275) and (3 pi, 2.475), where x2 - b x1^2 + c x1 = r
// and cos(x1) = -1.
func Branin() *Function {
	const (
		b = 5.1 / (4 * math.Pi * math.Pi)
		c = 5 / math.Pi
		r = 6.0
		s = 10.0
		t = 1 / (8 * math.Pi)
	)
	return &Function{
		Name:     "branin",
		Dim:      2,
		Lower:    []float64{-5, 0},
		Upper:    []float64{10, 15},
		MinValue: 5 / (4 * math.Pi),
		Argmins:  [][]float64{{-math.Pi, 12.275}, {math.Pi, 2.275}, {3 * math.Pi, 2.475}},
		f: func(x []float64) float64 {
			u := x[1] - b*x[0]*x[0] + c*x[0] - r
			return u*u + s*(1-t)*math.Cos(x[0]) + s
		},
	}
}

// SixHumpCamel returns the six-hump camel function on [-3, 3] x [-2, 2],
// https://www.sfu.ca/~ssurjano/camel6.html:
//
//	f(x) = (4 - 2.1 x1^2 + x1^4/3) x1^2 + x1 x2 + (-4 + 4 x2^2) x2^2.
//
// Published minimum -1.0316 at (0.0898, -0.7126) and (-0.0898, 0.7126); the
// refined minimisers are +-(0.08984201310031806, -0.7126564030207396) and
// the refined minimum -1.0316284534898774.
func SixHumpCamel() *Function {
	return &Function{
		Name:     "sixhumpcamel",
		Dim:      2,
		Lower:    []float64{-3, -2},
		Upper:    []float64{3, 2},
		MinValue: sixHumpMin,
		Argmins:  [][]float64{{sixHumpX1, -sixHumpX2}, {-sixHumpX1, sixHumpX2}},
		f: func(x []float64) float64 {
			x1, x2 := x[0], x[1]
			x1s, x2s := x1*x1, x2*x2
			return (4-2.1*x1s+x1s*x1s/3)*x1s + x1*x2 + (-4+4*x2s)*x2s
		},
	}
}

// hartmann evaluates -sum_i alpha_i exp(-sum_j A_ij (x_j - P_ij)^2), the
// common form of the Hartmann 3-D and 6-D functions.
func hartmann(alpha []float64, a, p [][]float64, x []float64) float64 {
	var sum float64
	for i, al := range alpha {
		var inner float64
		for j, xj := range x {
			d := xj - p[i][j]
			inner += a[i][j] * d * d
		}
		sum += al * math.Exp(-inner)
	}
	return -sum
}

var hartmannAlpha = []float64{1.0, 1.2, 3.0, 3.2}

// Hartmann3 returns the 3-dimensional Hartmann function on [0, 1]^3,
// https://www.sfu.ca/~ssurjano/hart3.html:
//
//	f(x) = -sum_{i=1}^4 alpha_i exp(-sum_{j=1}^3 A_ij (x_j - P_ij)^2),
//	alpha = (1, 1.2, 3, 3.2), A and P as on that page.
//
// Published minimum -3.86278 at (0.114614, 0.555649, 0.852547); refined
// -3.8627797873326625 at (0.11458887665506897, 0.55564889461693004,
// 0.85254698468667744).
func Hartmann3() *Function {
	a := [][]float64{
		{3.0, 10, 30},
		{0.1, 10, 35},
		{3.0, 10, 30},
		{0.1, 10, 35},
	}
	p := [][]float64{
		{0.3689, 0.1170, 0.2673},
		{0.4699, 0.4387, 0.7470},
		{0.1091, 0.8732, 0.5547},
		{0.0381, 0.5743, 0.8828},
	}
	return &Function{
		Name:     "hartmann3",
		Dim:      3,
		Lower:    filled(3, 0),
		Upper:    filled(3, 1),
		MinValue: hartmann3Min,
		Argmins:  [][]float64{slices.Clone(hartmann3Argmin[:])},
		f:        func(x []float64) float64 { return hartmann(hartmannAlpha, a, p, x) },
	}
}

// Hartmann6 returns the 6-dimensional Hartmann function on [0, 1]^6,
// https://www.sfu.ca/~ssurjano/hart6.html:
//
//	f(x) = -sum_{i=1}^4 alpha_i exp(-sum_{j=1}^6 A_ij (x_j - P_ij)^2),
//	alpha = (1, 1.2, 3, 3.2), A and P as on that page.
//
// Published minimum -3.32237 at
// (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573); refined
// -3.3223680114155148 at a point within 2e-6 of it (hartmann6Argmin).
func Hartmann6() *Function {
	a := [][]float64{
		{10, 3, 17, 3.5, 1.7, 8},
		{0.05, 10, 17, 0.1, 8, 14},
		{3, 3.5, 1.7, 10, 17, 8},
		{17, 8, 0.05, 10, 0.1, 14},
	}
	p := [][]float64{
		{0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886},
		{0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991},
		{0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650},
		{0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381},
	}
	return &Function{
		Name:     "hartmann6",
		Dim:      6,
		Lower:    filled(6, 0),
		Upper:    filled(6, 1),
		MinValue: hartmann6Min,
		Argmins:  [][]float64{slices.Clone(hartmann6Argmin[:])},
		f:        func(x []float64) float64 { return hartmann(hartmannAlpha, a, p, x) },
	}
}

// Ackley returns the d-dimensional Ackley function on [-32.768, 32.768]^d,
// https://www.sfu.ca/~ssurjano/ackley.html, with the recommended a = 20,
// b = 0.2, c = 2 pi:
//
//	f(x) = -a exp(-b sqrt(sum x_i^2 / d)) - exp(sum cos(c x_i) / d) + a + e.
//
// Minimum 0 at the origin. Ackley panics if d < 1.
func Ackley(d int) *Function {
	checkDim("ackley", d, 1)
	const (
		a = 20.0
		b = 0.2
		c = 2 * math.Pi
	)
	return &Function{
		Name:     "ackley",
		Dim:      d,
		Lower:    filled(d, -32.768),
		Upper:    filled(d, 32.768),
		MinValue: 0,
		Argmins:  [][]float64{filled(d, 0)},
		f: func(x []float64) float64 {
			var sq, cs float64
			for _, v := range x {
				sq += v * v
				cs += math.Cos(c * v)
			}
			n := float64(len(x))
			return -a*math.Exp(-b*math.Sqrt(sq/n)) - math.Exp(cs/n) + a + math.E
		},
	}
}

// Rosenbrock returns the d-dimensional Rosenbrock (valley) function on
// [-5, 10]^d, https://www.sfu.ca/~ssurjano/rosen.html:
//
//	f(x) = sum_{i=1}^{d-1} [100 (x_{i+1} - x_i^2)^2 + (x_i - 1)^2].
//
// Minimum 0 at (1, ..., 1). Rosenbrock panics if d < 2.
func Rosenbrock(d int) *Function {
	checkDim("rosenbrock", d, 2)
	return &Function{
		Name:     "rosenbrock",
		Dim:      d,
		Lower:    filled(d, -5),
		Upper:    filled(d, 10),
		MinValue: 0,
		Argmins:  [][]float64{filled(d, 1)},
		f: func(x []float64) float64 {
			var s float64
			for i := 0; i+1 < len(x); i++ {
				u := x[i+1] - x[i]*x[i]
				v := x[i] - 1
				s += 100*u*u + v*v
			}
			return s
		},
	}
}

// Levy returns the d-dimensional Levy function on [-10, 10]^d,
// https://www.sfu.ca/~ssurjano/levy.html: with w_i = 1 + (x_i - 1)/4,
//
//	f(x) = sin^2(pi w_1) + sum_{i=1}^{d-1} (w_i - 1)^2 [1 + 10 sin^2(pi w_i + 1)]
//	       + (w_d - 1)^2 [1 + sin^2(2 pi w_d)].
//
// Minimum 0 at (1, ..., 1). Levy panics if d < 1.
func Levy(d int) *Function {
	checkDim("levy", d, 1)
	return &Function{
		Name:     "levy",
		Dim:      d,
		Lower:    filled(d, -10),
		Upper:    filled(d, 10),
		MinValue: 0,
		Argmins:  [][]float64{filled(d, 1)},
		f: func(x []float64) float64 {
			w := func(v float64) float64 { return 1 + (v-1)/4 }
			s0 := math.Sin(math.Pi * w(x[0]))
			s := s0 * s0
			for i := 0; i+1 < len(x); i++ {
				wi := w(x[i])
				si := math.Sin(math.Pi*wi + 1)
				s += (wi - 1) * (wi - 1) * (1 + 10*si*si)
			}
			wd := w(x[len(x)-1])
			sd := math.Sin(2 * math.Pi * wd)
			return s + (wd-1)*(wd-1)*(1+sd*sd)
		},
	}
}

// StyblinskiTang returns the d-dimensional Styblinski-Tang function on
// [-5, 5]^d, https://www.sfu.ca/~ssurjano/stybtang.html:
//
//	f(x) = 1/2 sum_{i=1}^d (x_i^4 - 16 x_i^2 + 5 x_i).
//
// The SFU page gives the minimum as -39.16599 d at x_i = -2.903534. The
// minimiser is right, but the value is not: the function separates, and
// 1/2 (x^4 - 16 x^2 + 5 x) at the root x = -2.9035340277711771 of
// 4 x^3 - 32 x + 5 = 0 is -39.166165703771415, so MinValue is
// -39.166165703771415 d (as used by e.g. BoTorch); the published
// -39.16599 d lies above the true minimum. StyblinskiTang panics if d < 1.
func StyblinskiTang(d int) *Function {
	checkDim("styblinskitang", d, 1)
	return &Function{
		Name:     "styblinskitang",
		Dim:      d,
		Lower:    filled(d, -5),
		Upper:    filled(d, 5),
		MinValue: stybTangMin1 * float64(d),
		Argmins:  [][]float64{filled(d, stybTangX)},
		f: func(x []float64) float64 {
			var s float64
			for _, v := range x {
				v2 := v * v
				s += v2*v2 - 16*v2 + 5*v
			}
			return s / 2
		},
	}
}

// Michalewicz returns the 2-dimensional Michalewicz function with the
// recommended steepness m = 10 on [0, pi]^2,
// https://www.sfu.ca/~ssurjano/michal.html:
//
//	f(x) = -sum_{i=1}^d sin(x_i) sin^{2m}(i x_i^2 / pi).
//
// Published minimum -1.8013 at (2.20, 1.57); the refined minimum is
// -1.8013034100985525 at (2.2029055201726093, pi/2). (At the rounded
// published point the value is only -1.80114.)
func Michalewicz() *Function {
	const m = 10
	return &Function{
		Name:     "michalewicz",
		Dim:      2,
		Lower:    filled(2, 0),
		Upper:    filled(2, math.Pi),
		MinValue: michalewiczMin,
		Argmins:  [][]float64{{michalewiczX1, math.Pi / 2}},
		f: func(x []float64) float64 {
			var s float64
			for i, v := range x {
				t := math.Sin(float64(i+1) * v * v / math.Pi)
				s += math.Sin(v) * math.Pow(t*t, m)
			}
			return -s
		},
	}
}

// Shekel returns the Shekel function with m = 10 terms on [0, 10]^4,
// https://www.sfu.ca/~ssurjano/shekel.html:
//
//	f(x) = -sum_{i=1}^m (sum_{j=1}^4 (x_j - C_ji)^2 + beta_i)^{-1},
//	beta = (1, 2, 2, 4, 4, 6, 3, 7, 5, 5)/10, C as on that page.
//
// Published minimum -10.5364 at (4, 4, 4, 4); the refined minimum is
// -10.536443153483528 at (4.0007468682706344, 3.9995094800857736,
// 4.0007468682706344, 3.9995094800857736) (rows 1 and 3 of C are equal, as
// are rows 2 and 4). At (4, 4, 4, 4) itself the value is -10.536284.
func Shekel() *Function {
	beta := []float64{0.1, 0.2, 0.2, 0.4, 0.4, 0.6, 0.3, 0.7, 0.5, 0.5}
	c := [4][10]float64{
		{4, 1, 8, 6, 3, 2, 5, 8, 6, 7},
		{4, 1, 8, 6, 7, 9, 3, 1, 2, 3.6},
		{4, 1, 8, 6, 3, 2, 5, 8, 6, 7},
		{4, 1, 8, 6, 7, 9, 3, 1, 2, 3.6},
	}
	return &Function{
		Name:     "shekel",
		Dim:      4,
		Lower:    filled(4, 0),
		Upper:    filled(4, 10),
		MinValue: shekelMin,
		Argmins:  [][]float64{slices.Clone(shekelArgmin[:])},
		f: func(x []float64) float64 {
			var s float64
			for i, b := range beta {
				inner := b
				for j, xj := range x {
					d := xj - c[j][i]
					inner += d * d
				}
				s += 1 / inner
			}
			return -s
		},
	}
}

// Refined optima. Each minimiser was obtained by solving grad f = 0 with
// Newton's method in 40-digit arithmetic (mpmath.findroot), started from the
// published (SFU) minimiser; each value is f there, rounded to float64.
// TestArgminsAreStationary checks that they are stationary points in float64
// and TestNoPointBelowMin that no sampled point goes below them.
const (
	sixHumpX1  = 0.089842013100318062
	sixHumpX2  = 0.71265640302073963
	sixHumpMin = -1.0316284534898774

	hartmann3Min = -3.8627797873326625
	hartmann6Min = -3.3223680114155148

	michalewiczX1  = 2.2029055201726093
	michalewiczMin = -1.8013034100985525

	stybTangX    = -2.9035340277711771
	stybTangMin1 = -39.166165703771415

	shekelMin = -10.536443153483528
)

var (
	hartmann3Argmin = [3]float64{0.11458887665506897, 0.55564889461693004, 0.85254698468667744}
	hartmann6Argmin = [6]float64{0.20168951100670542, 0.15001069182345797, 0.47687397422189699,
		0.27533243049405607, 0.31165161660011324, 0.65730053406562031}
	shekelArgmin = [4]float64{4.0007468682706344, 3.9995094800857736, 4.0007468682706344, 3.9995094800857736}
)
