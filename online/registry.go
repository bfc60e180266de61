package online

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/bkb-go/bkb/kernel"
)

// Profile selects which paper's experimental defaults Build uses.
type Profile string

const (
	// Profile000 is seed 000, Section 4: lambda = 1, KORS mu = 1, beta = 1,
	// eps = 0.5, FOGD with 1000 frequencies and eta = 1/sqrt(n), targets in
	// [-1, 1].
	Profile000 Profile = "000"
	// Profile002 is seed 002, Appendix A: alpha = 25/T, U = 2 (AOGD-ALD),
	// U = 1, mu = 1 (NONS-ALD), FOGD D = 400, NOGD B = 400, targets in [0, 1].
	Profile002 Profile = "002"
	// Profile003 is seed 003, Section 5.1: FORKS Table 1 settings, FOGD with
	// 4B features and NOGD with B and k = 0.1 B, eta = 0.2, hinge loss.
	Profile003 Profile = "003"
)

// Setting is what Build needs to know about the stream.
type Setting struct {
	Dim int
	// N is the stream length T (alpha = 25/T, rho = floor(theta N), B0, ...).
	N    int
	Task Task
	// Width is the Gaussian kernel width sigma of exp(-||x-y||^2/(2 sigma^2)).
	Width   float64
	Seed    uint64
	Profile Profile
}

// Kernel returns the Gaussian kernel of s.
func (s Setting) Kernel() kernel.RBF { return kernel.RBF{LengthScale: s.Width} }

func (s Setting) profile() Profile {
	if s.Profile != "" {
		return s.Profile
	}
	if s.Task == Classification {
		return Profile003
	}
	return Profile002
}

// LearnerNames lists the names Build accepts, in table order.
var LearnerNames = []string{
	"krr", "kawv", "pkawv-taylor", "pkrr-taylor", "pkawv-nystrom", "pkrr-nystrom",
	"aogd-ald", "nons-ald", "forks", "dsg", "fogd", "nogd",
}

// params is a parsed learner spec "name:key=value:key=value".
type params struct {
	name string
	kv   map[string]string
	used map[string]bool
}

func parseSpec(spec string) (*params, error) {
	parts := strings.Split(strings.TrimSpace(spec), ":")
	p := &params{name: strings.ToLower(parts[0]), kv: map[string]string{}, used: map[string]bool{}}
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("online: learner spec %q: parameter %q is not key=value", spec, kv)
		}
		p.kv[strings.ToLower(k)] = v
	}
	return p, nil
}

func (p *params) float(key string, def float64) (float64, error) {
	v, ok := p.kv[key]
	if !ok {
		return def, nil
	}
	p.used[key] = true
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("online: %s: parameter %s=%q: %w", p.name, key, v, err)
	}
	return f, nil
}

func (p *params) int(key string, def int) (int, error) {
	f, err := p.float(key, float64(def))
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) {
		return 0, fmt.Errorf("online: %s: parameter %s=%v is not an integer", p.name, key, f)
	}
	return int(f), nil
}

func (p *params) str(key, def string) string {
	v, ok := p.kv[key]
	if !ok {
		return def
	}
	p.used[key] = true
	return v
}

func (p *params) unused() error {
	var bad []string
	for k := range p.kv {
		if !p.used[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return fmt.Errorf("online: %s: unknown parameter(s) %s", p.name, strings.Join(bad, ", "))
	}
	return nil
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// Build returns the learner described by spec for the setting s. A spec is
// a name from LearnerNames optionally followed by ":key=value" parameters,
// e.g. "pkawv-taylor:m=3", "fogd:d=1000:eta=0.01", "nons-ald:mu=5",
// "forks:rank=20". Common keys: width (kernel sigma), lambda, loss, seed;
// the defaults come from s.Profile (see Profile000, Profile002,
// Profile003). The name the learner reports includes non-default
// parameters.
func Build(spec string, s Setting) (Learner, error) {
	p, err := parseSpec(spec)
	if err != nil {
		return nil, err
	}
	if s.Dim < 1 || s.N < 1 {
		return nil, fmt.Errorf("online: setting needs dimension and length >= 1, got %d, %d", s.Dim, s.N)
	}
	width, err := p.float("width", s.Width)
	if err != nil {
		return nil, err
	}
	if err := positive("kernel width", width); err != nil {
		return nil, err
	}
	k := kernel.RBF{LengthScale: width}
	seed64, err := p.float("seed", float64(s.Seed))
	if err != nil {
		return nil, err
	}
	seed := uint64(seed64)
	defLoss := Square
	if s.Task == Classification {
		defLoss = Hinge
	}
	loss, err := ParseLoss(p.str("loss", defLoss.String()))
	if err != nil {
		return nil, err
	}
	prof := s.profile()
	sqrtT := math.Sqrt(float64(s.N))
	var l Learner
	switch p.name {
	case "krr", "kawv":
		lambda, e1 := p.float("lambda", 1)
		capacity, e2 := p.int("cap", DefaultExactCapacity)
		if err := firstErr(e1, e2); err != nil {
			return nil, err
		}
		mode := KRR
		if p.name == "kawv" {
			mode = AWV
		}
		l, err = NewExact(k, s.Dim, lambda, mode, capacity)
	case "pkawv-taylor", "pkrr-taylor":
		m, e1 := p.int("m", 2)
		lambda, e2 := p.float("lambda", 1)
		if err := firstErr(e1, e2); err != nil {
			return nil, err
		}
		mode := AWV
		if p.name == "pkrr-taylor" {
			mode = KRR
		}
		l, err = NewPKAWVTaylor(s.Dim, m, width, lambda, mode)
	case "pkawv-nystrom", "pkrr-nystrom":
		lambda, e1 := p.float("lambda", 1)
		mu, e2 := p.float("mu", 1)
		eps, e3 := p.float("eps", 0.5)
		beta, e4 := p.float("beta", 1)
		maxd, e5 := p.int("max", 0)
		if err := firstErr(e1, e2, e3, e4, e5); err != nil {
			return nil, err
		}
		mode := AWV
		if p.name == "pkrr-nystrom" {
			mode = KRR
		}
		l, err = NewPKAWVNystrom(PKAWVNystromConfig{
			Kernel: k, Dim: s.Dim, Lambda: lambda, Mode: mode,
			KORS:          KORS{Mu: mu, Eps: eps, Beta: beta, PaperWeights: p.str("weights", "sqrt") == "paper"},
			All:           p.str("all", "false") == "true",
			MaxDictionary: maxd, Seed: seed,
		})
	case "aogd-ald", "nons-ald":
		alpha, e1 := p.float("alpha", ALDThreshold(s.N))
		defU := 1.0
		if p.name == "aogd-ald" {
			defU = 2
		}
		u, e2 := p.float("u", defU)
		mu, e3 := p.float("mu", 1)
		eta, e4 := p.float("eta", 0)
		b0, e5 := p.int("b0", AOGDCap(s.Dim, s.N))
		if err := firstErr(e1, e2, e3, e4, e5); err != nil {
			return nil, err
		}
		cfg := ALDConfig{Kernel: k, Dim: s.Dim, Alpha: alpha, U: u, Mu: mu, Eta: eta, B0: b0}
		if p.name == "aogd-ald" {
			l, err = NewAOGDALD(cfg)
		} else {
			l, err = NewNONSALD(cfg)
		}
	case "forks":
		c := PaperFORKS(k, s.Dim, s.N, seed)
		if prof == Profile003Blocks {
			c = AdversarialFORKS(k, s.Dim, s.N, seed)
		}
		c.Loss = loss
		if loss == Square {
			// FORKS was only run with the hinge loss. For the square loss with
			// targets in [0, 1] its constants sigma_i = 0.5, alpha = 0.01
			// overshoot after every reset; use NONS-ALD's (Theorem 4.6 of
			// seed 002): sigma_i = 1/(4(U^2+Y^2)) = 1/8, alpha = mu = 1.
			c.Sigma, c.Alpha = 0.125, 1
		}
		var es [12]error
		var b int
		b, es[0] = p.int("b", c.Budget)
		if b != c.Budget {
			c.Budget, c.Sp, c.Sm, c.Rank = b, b, max(1, b/5), max(1, b/10)
		}
		c.Sp, es[1] = p.int("sp", c.Sp)
		c.Sm, es[2] = p.int("sm", c.Sm)
		c.Rank, es[3] = p.int("rank", c.Rank)
		if _, ok := p.kv["theta"]; ok {
			theta, e := p.float("theta", 0.3)
			es[4] = e
			c.Rho = max(1, int(theta*float64(s.N)))
		}
		c.Rho, es[5] = p.int("rho", c.Rho)
		c.Alpha, es[6] = p.float("alpha", c.Alpha)
		c.Sigma, es[7] = p.float("sigma", c.Sigma)
		c.C, es[8] = p.float("c", c.C)
		c.EtaKOGD, es[9] = p.float("eta", c.EtaKOGD)
		c.Blocks, es[10] = p.int("blocks", 1)
		c.MaxStored, es[11] = p.int("cap", 0)
		c.FullDecomposition = p.str("full", "false") == "true"
		if err := firstErr(es[:]...); err != nil {
			return nil, err
		}
		l, err = NewFORKS(c)
	case "dsg":
		defTheta, defT0 := 4.0, 100.0
		theta, e1 := p.float("theta", defTheta)
		t0, e2 := p.float("t0", defT0)
		nu, e3 := p.float("nu", 0)
		block, e4 := p.int("block", 1)
		if err := firstErr(e1, e2, e3, e4); err != nil {
			return nil, err
		}
		l, err = NewDSG(DSGConfig{Kernel: k, Dim: s.Dim, Loss: loss, Nu: nu, Theta: theta, T0: t0, Block: block, Seed: seed})
	case "fogd":
		defD, defEta := 400, 10/sqrtT
		switch prof {
		case Profile000:
			defD, defEta = 1000, 1/sqrtT
		case Profile003:
			defD, defEta = 4*forksBudget(s.N)/2, 0.2 // 4B features = 2B (cos, sin) pairs
		case Profile003Blocks:
			defD, defEta = 4*200/2, 0.2
		}
		d, e1 := p.int("d", defD)
		eta, e2 := p.float("eta", defEta)
		if err := firstErr(e1, e2); err != nil {
			return nil, err
		}
		l, err = NewFOGD(FOGDConfig{Kernel: k, Dim: s.Dim, Frequencies: d, Phase: p.str("phase", "false") == "true",
			Eta: eta, Loss: loss, Seed: seed})
	case "nogd":
		defB, defK, defEta := 400, 0, 10/sqrtT
		switch prof {
		case Profile003:
			defB = forksBudget(s.N)
			defK, defEta = defB/10, 0.2
		case Profile003Blocks:
			defB, defK, defEta = 200, 20, 0.2
		}
		b, e1 := p.int("b", defB)
		rank, e2 := p.int("rank", defK)
		eta, e3 := p.float("eta", defEta)
		if err := firstErr(e1, e2, e3); err != nil {
			return nil, err
		}
		l, err = NewNOGD(NOGDConfig{Kernel: k, Dim: s.Dim, Budget: b, Rank: rank, Eta: eta, Loss: loss})
	default:
		return nil, fmt.Errorf("online: unknown learner %q (want one of %s)", p.name, strings.Join(LearnerNames, ", "))
	}
	if err != nil {
		return nil, err
	}
	if err := p.unused(); err != nil {
		return nil, err
	}
	if len(p.kv) > 0 {
		return named{l, spec}, nil
	}
	return l, nil
}

func forksBudget(n int) int {
	if n > 10000 {
		return 100
	}
	return 50
}

// named overrides a learner's name with its spec.
type named struct {
	Learner
	name string
}

func (n named) Name() string { return n.name }

// Unwrap returns the learner built by Build without its spec name.
func Unwrap(l Learner) Learner {
	if n, ok := l.(named); ok {
		return n.Learner
	}
	return l
}
