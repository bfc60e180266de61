package bandit

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/kernel"
)

// Lazy UCB (Options.Lazy): a step reads only the arms that can win.
//
// The posterior (gp.Exact or gp.DTC) holds a working set W of arms as its
// candidates, whose rows, means and variances it keeps current. Every
// other arm x keeps the mean mu_c and standard deviation s_c (score
// units: the posterior's own variance scale) of its last visit and the
// values S_c, D_c, E_c of three running sums at that time. Its UCB now is
// at most
//
//	B(x) = mu_c + sqrt(k(x,x)) (D - D_c)
//	       + (s_c + p(x) (E - E_c)) sqrt(beta^2 + S - S_c)
//
// (p(x): the prior standard deviation in score units). S sums the squared
// normalized innovations of the observations, alpha_t^2 =
// (y_t - mu_t(x_t))^2 / (v_t(x_t) + lambda) for the exact posterior
// (for the DTC: (y_t - mu~_t(x_t))^2 / (1 + z_t^T V^{-1} z_t)). With the
// kernel fixed (exact GP; DTC between dictionary changes) an observation
// moves the mean of x by c_t(x, x_t) alpha_t / sqrt(v_t(x_t) + lambda)
// and lowers its variance by c_t(x, x_t)^2 / (v_t(x_t) + lambda), so by
// Cauchy-Schwarz the mean moves by at most sqrt(v_c - v) sqrt(S - S_c)
// when the variance falls from v_c to v, and
// max over v of sqrt(v_c - v) a + beta sqrt(v) = sqrt(v_c) sqrt(a^2 + beta^2).
// That is the proven part (docs/scaling.md). D and E cover BKB's
// dictionary changes: after each step that changes S they grow by twice
// the largest change of a working-set arm's mean (over sqrt(k(x,x))) and
// increase of its standard deviation (over p(x)); the working set holds
// the observed arms and the contenders, where the changes are largest
// (BBKB's also holds probes spread over the arm set, bbkb_lazy.go).
// That part is measured (LazyCheck counts violations), not proven.
//
// An Ask computes the exact UCB of W, then visits the arms outside W whose
// bound is at least the best UCB found, best bound first, in growing
// chunks (their rows are computed and they join W), until no bound is
// above the best. Ties go to the lowest arm index, as in the full scan,
// so lazy GP-UCB chooses exactly the full scan's arm (up to rounding of
// the rows computed from scratch). Arms in W that have not been close to
// the best within lazyRetireAfter asks leave W (their rows freed).

const (
	// lazyRetireAfter is the horizon, in asks, over which an arm of the
	// working set must be unable to reach the best before it leaves.
	lazyRetireAfter = 8
	// lazyDriftFactor multiplies the dictionary-change drift measured on
	// the working set.
	lazyDriftFactor = 2
	// lazyStamps is how many of the latest asks' stamps keep the weight
	// bound (each costs O(m^2) a step).
	lazyStamps = 32
	// lazyTol is the relative slack of the bound for rounding.
	lazyTol = 1e-9
)

type lazyCand struct {
	arm int
	b   float64
}

type lazyStamp struct {
	ask   int // the Ask that created it
	w     []float64
	basis int
	refs  int
	m     float64 // ||w - w_c||_V at this Ask, +Inf if the basis changed
}

type lazyState struct {
	x   *mat.Dense
	d   int
	ex  *gp.Exact
	dtc *gp.DTC
	lam float64

	win  []int32 // arm -> working-set index, or -1
	warm []int   // working-set index -> arm
	idle []int   // working-set index -> asks since it was close to the best

	mu, sd        []float64 // outside W: mean and sd at the last visit
	sn            []float64 // DTC: sqrt of the learned part z^T V^{-1} z of the variance then
	stS, stD, stE []float64 // running sums at the last visit
	pmu, psd      []float64 // prior sd in mean and in score units
	dead          []bool
	alive         []int
	ndead         int
	// probe marks the arms kept in W for good so that the drift of a
	// dictionary change is measured on arms spread over the arm set, not
	// only near the data (lazy BBKB, probeArms).
	probe []bool

	S, D, E float64
	// Stamps (DTC only): the weights w_c at each retirement, so that an
	// arm cached then has the second bound mu_c + s_c (beta + M) with
	// M = ||w - w_c||_V while the basis is unchanged (lazy.go header).
	stamp  []int32 // arm -> stamp, or -1
	stamps []lazyStamp
	hist   [lazyRetireAfter + 1][3]float64 // running sums at the last asks (ring)
	asks   int

	cand           []lazyCand
	scores, cv     []float64
	pendW          []int
	before, befSD  []float64
	rowsRead, rows int64
	violations     int
	eliminated     int
}

func newLazyGP(name string, arms *mat.Dense, opt Options, useDTC bool) (*GP, error) {
	n, d := arms.Dims()
	p := &GP{name: name, opt: opt, score: ScoreUCB, arms: n,
		rng:   rand.New(rand.NewPCG(opt.Seed, 0x62_6b_62)),
		count: make([]int, n)}
	L := &lazyState{x: arms, d: d, lam: opt.Lambda,
		win: make([]int32, n), mu: make([]float64, n), sd: make([]float64, n),
		stS: make([]float64, n), stD: make([]float64, n), stE: make([]float64, n),
		pmu: make([]float64, n), psd: make([]float64, n), dead: make([]bool, n), alive: make([]int, n),
		stamp: make([]int32, n), sn: make([]float64, n)}
	if useDTC {
		g, err := gp.NewDTCWith(opt.Kernel, d, opt.Lambda, gp.CoreOptions{LegacyCore: opt.LegacyCore, DeadPivots: opt.DeadPivots})
		if err != nil {
			return nil, err
		}
		p.post, p.dtc, L.dtc = g, g, g
	} else {
		g, err := gp.NewExact(opt.Kernel, d, opt.Lambda)
		if err != nil {
			return nil, err
		}
		p.post, L.ex = g, g
	}
	diag := make([]float64, n)
	kernel.Diagonal(diag, opt.Kernel, arms)
	for i, v := range diag {
		p.kappa2 = math.Max(p.kappa2, v)
		L.win[i] = -1
		L.stamp[i] = -1
		L.alive[i] = i
		L.pmu[i] = math.Sqrt(v)
		L.psd[i] = L.pmu[i]
		if useDTC {
			L.psd[i] = math.Sqrt(v / opt.Lambda)
		}
		L.sd[i] = L.psd[i] // the prior: mean 0, variance k(x,x)
		L.sn[i] = L.sd[i]
	}
	p.lz = L
	return p, nil
}

// bound returns B(x) for an arm outside the working set.
func (L *lazyState) bound(i int, b2 float64) float64 {
	s := L.sd[i] + L.psd[i]*(L.E-L.stE[i])
	a2 := L.S - L.stS[i]
	g := s * math.Sqrt(b2+a2)
	if k := L.stamp[i]; k >= 0 {
		st := &L.stamps[k]
		b := math.Sqrt(b2)
		// The weight bound: mean within sn M, sd at most s.
		g = math.Min(g, L.sn[i]*st.m+b*s)
		if st.basis == L.dtc.Basis() {
			// S fixed since the visit: only the learned part N = sn^2
			// of the variance falls, the residual R stays; the maximum
			// of a sqrt(N - v) + b sqrt(R + v) over v in [0, N].
			n := L.sn[i] * L.sn[i]
			r := math.Max(L.sd[i]*L.sd[i]-n, 0)
			if a2*r > b2*n {
				g = math.Min(g, math.Sqrt(a2)*L.sn[i]+b*math.Sqrt(r))
			}
		}
	}
	u := L.mu[i] + L.pmu[i]*(L.D-L.stD[i]) + g
	return u + lazyTol*(math.Abs(L.mu[i])+math.Sqrt(b2)*L.psd[i])
}

// newStamp records the current weights for arms cached now.
func (L *lazyState) newStamp() int32 {
	for k := range L.stamps {
		if L.stamps[k].refs == 0 {
			st := &L.stamps[k]
			st.w = L.dtc.Weights(st.w[:0])
			st.basis, st.m, st.ask = L.dtc.Basis(), 0, L.asks
			return int32(k)
		}
	}
	L.stamps = append(L.stamps, lazyStamp{w: L.dtc.Weights(nil), basis: L.dtc.Basis(), ask: L.asks})
	return int32(len(L.stamps) - 1)
}

// updateStamps computes M = ||w - w_c||_V for the lazyStamps newest live
// stamps in the current basis (O(m^2) each) and +Inf for the others
// (their arms keep the Cauchy-Schwarz bound).
func (L *lazyState) updateStamps() {
	basis := L.dtc.Basis()
	newest := L.asks - lazyStamps
	for k := range L.stamps {
		st := &L.stamps[k]
		switch {
		case st.refs == 0:
		case st.basis != basis || st.ask < newest:
			st.m = math.Inf(1)
		default:
			st.m = L.dtc.WeightDistance(st.w)
		}
	}
}

func (L *lazyState) unstamp(a int) {
	if k := L.stamp[a]; k >= 0 {
		L.stamps[k].refs--
		L.stamp[a] = -1
	}
}

// add brings arms into the working set and returns the index of the first.
func (L *lazyState) add(arms []int) (int, error) {
	data := make([]float64, 0, len(arms)*L.d)
	for _, a := range arms {
		data = append(data, L.x.RawRowView(a)...)
	}
	x := mat.NewDense(len(arms), L.d, data)
	var first int
	var err error
	if L.dtc != nil {
		first, err = L.dtc.AddCandidates(x)
	} else {
		first, err = L.ex.AddCandidates(x)
	}
	if err != nil {
		return 0, err
	}
	for k, a := range arms {
		L.unstamp(a)
		L.win[a] = int32(first + k)
		L.warm = append(L.warm, a)
		L.idle = append(L.idle, 0)
	}
	L.rows += int64(len(arms))
	L.rowsRead += int64(len(arms))
	return first, nil
}

func (L *lazyState) post() posterior {
	if L.dtc != nil {
		return L.dtc
	}
	return L.ex
}

// retire moves the listed working-set indices out of W, caching their
// posterior; dead ones are eliminated.
func (L *lazyState) retire(idx []int) error {
	if len(idx) == 0 {
		return nil
	}
	means, vars := L.post().Means(), L.post().Variances()
	k := int32(-1)
	if L.dtc != nil {
		k = L.newStamp()
		L.stamps[k].refs = len(idx)
	}
	for _, w := range idx {
		a := L.warm[w]
		L.mu[a], L.sd[a] = means[w], math.Sqrt(math.Max(vars[w], 0))
		L.sn[a] = L.sd[a]
		if L.dtc != nil {
			L.sn[a] = math.Min(L.sd[a], math.Sqrt(L.dtc.LearnedVariance(w)))
		}
		L.stS[a], L.stD[a], L.stE[a] = L.S, L.D, L.E
		L.win[a] = -1
		L.stamp[a] = k
	}
	var ni []int
	var err error
	if L.dtc != nil {
		ni, err = L.dtc.RetireCandidates(idx)
	} else {
		ni, err = L.ex.RetireCandidates(idx)
	}
	if err != nil {
		return err
	}
	warm, idle := L.warm[:0], L.idle[:0]
	for w, a := range L.warm {
		if ni[w] >= 0 {
			L.win[a] = int32(ni[w])
			warm = append(warm, a)
			idle = append(idle, L.idle[w])
		}
	}
	L.warm, L.idle = warm, idle
	return nil
}

// keep reports whether working-set index w must stay in W (observed, in
// the dictionary or pending).
func (p *GP) lazyKeep(w int) bool {
	L := p.lz
	a := L.warm[w]
	if p.count[a] > 0 || slices.Contains(p.pending, a) || (L.probe != nil && L.probe[a]) {
		return true
	}
	return L.dtc != nil && L.dtc.InDictionary(w)
}

// scoreW fills L.scores with the exact UCB of every working-set arm
// (conditioned on the pending arms), pending arms at -Inf.
func (p *GP) lazyScoreW(b float64) error {
	L := p.lz
	n := len(L.warm)
	L.scores = slices.Grow(L.scores[:0], n)[:n]
	means, vars := L.post().Means(), L.post().Variances()
	if len(p.pending) > 0 {
		L.pendW = L.pendW[:0]
		for _, a := range p.pending {
			L.pendW = append(L.pendW, int(L.win[a]))
		}
		L.cv = slices.Grow(L.cv[:0], n)[:n]
		if err := L.post().ConditionalVariances(L.cv, L.pendW); err != nil {
			return err
		}
		vars = L.cv
	}
	for w := range n {
		L.scores[w] = means[w] + b*math.Sqrt(math.Max(vars[w], 0))
	}
	for _, a := range p.pending {
		L.scores[L.win[a]] = math.Inf(-1)
	}
	return nil
}

// better reports whether (s, arm) beats (best, bestArm): a larger score,
// or an equal one at a lower index, as acquisition.Argmax breaks ties.
func better(s float64, arm int, best float64, bestArm int) bool {
	return s > best || (s == best && (bestArm < 0 || arm < bestArm))
}

func (p *GP) lazyAsk() (int, error) {
	L := p.lz
	b := p.beta()
	b2 := b * b
	if err := p.lazyScoreW(b); err != nil {
		return -1, err
	}
	best, bestArm := math.Inf(-1), -1
	for w, s := range L.scores {
		if a := L.warm[w]; better(s, a, best, bestArm) && !math.IsInf(s, -1) && !(p.fresh && p.told(a)) {
			best, bestArm = s, a
		}
	}
	L.contenders(b2, best)
	chunk := 4
	var batch []int
	for k := 0; k < len(L.cand) && L.cand[k].b >= best; {
		batch = batch[:0]
		for ; k < len(L.cand) && len(batch) < chunk && L.cand[k].b >= best; k++ {
			batch = append(batch, L.cand[k].arm)
		}
		first, err := L.add(batch)
		if err != nil {
			return -1, fmt.Errorf("bandit: lazy visit: %w", err)
		}
		if len(p.pending) > 0 {
			if err := p.lazyScoreW(b); err != nil {
				return -1, err
			}
		} else {
			means, vars := L.post().Means(), L.post().Variances()
			for w := first; w < len(L.warm); w++ {
				L.scores = append(L.scores, means[w]+b*math.Sqrt(math.Max(vars[w], 0)))
			}
		}
		for w := first; w < len(L.warm); w++ {
			if s, a := L.scores[w], L.warm[w]; better(s, a, best, bestArm) && !math.IsInf(s, -1) && !(p.fresh && p.told(a)) {
				best, bestArm = s, a
			}
		}
		chunk *= 2
	}
	if bestArm < 0 && p.fresh {
		// Every arm left to ask has a told reward: Ask's choice.
		p.fresh = false
		return p.lazyAsk()
	}
	if bestArm < 0 {
		if math.IsInf(best, -1) {
			return -1, errors.New("bandit: every remaining arm is pending (asked and not told); tell a reward before asking again")
		}
		return -1, errors.New("bandit: every score is NaN")
	}
	if math.IsInf(best, 0) || math.IsNaN(best) {
		return -1, fmt.Errorf("bandit: best score is %v (arm %d): the posterior overflowed; rescale the rewards", best, bestArm)
	}
	if p.opt.LazyCheck {
		if err := p.lazyCheck(b, bestArm); err != nil {
			return -1, err
		}
	}
	if err := p.lazyTidy(b, best); err != nil {
		return -1, err
	}
	return bestArm, nil
}

// contenders sets L.cand to the arms outside W whose bound reaches best,
// largest bound first (ties to the lowest index): the order in which an
// Ask visits them (GP-UCB and BKB at every Ask, BBKB at a batch's start).
func (L *lazyState) contenders(b2, best float64) {
	L.cand = L.cand[:0]
	for _, a := range L.alive {
		if L.win[a] >= 0 {
			continue
		}
		if u := L.bound(a, b2); u >= best {
			L.cand = append(L.cand, lazyCand{a, u})
		}
	}
	sortCandidates(L.cand)
}

// sortCandidates orders arms largest value first, ties to the lowest
// index: the order a lazy step visits them in.
func sortCandidates(c []lazyCand) {
	slices.SortFunc(c, func(x, y lazyCand) int {
		if x.b != y.b {
			if x.b > y.b {
				return -1
			}
			return 1
		}
		return x.arm - y.arm
	})
}

// lazyTidy eliminates (with Options.Eliminate) and retires working-set
// arms that could not reach the best within the horizon.
func (p *GP) lazyTidy(b, best float64) error {
	L := p.lz
	L.asks++
	L.hist[L.asks%len(L.hist)] = [3]float64{L.S, L.D, L.E}
	old := L.hist[(L.asks+1)%len(L.hist)] // lazyRetireAfter asks ago
	dS, dD, dE := L.S-old[0], L.D-old[1], L.E-old[2]
	// The horizon: keeping a row costs O(m) a step (O(t) exact), computing
	// it again O(m^2) (O(t^2)), so an arm leaves W only if it could not
	// reach the best within about m/4 asks, extrapolated from the
	// growth of the sums over the last lazyRetireAfter asks.
	size := p.post.Len()
	if L.dtc != nil {
		size = L.dtc.DictionarySize()
	}
	h := math.Max(1, float64(size/4)/lazyRetireAfter)
	dS, dD, dE = dS*h, dD*h, dE*h
	grow := math.Sqrt(b*b+dS) - b
	// With the weight bound (DTC, basis unchanged), an arm retired
	// lazyRetireAfter asks ago would have grown by at most s M instead,
	// M of a stamp of that age; the smallest such M is the least it could
	// have grown.
	if L.dtc != nil {
		basis := L.dtc.Basis()
		for _, st := range L.stamps {
			if st.refs > 0 && st.basis == basis && st.ask <= L.asks-lazyRetireAfter {
				grow = math.Min(grow, st.m*h)
			}
		}
	}
	means, vars := L.post().Means(), L.post().Variances()
	lcb := math.Inf(-1)
	if p.opt.Eliminate {
		for w := range L.warm {
			lcb = math.Max(lcb, means[w]-b*math.Sqrt(math.Max(vars[w], 0)))
		}
	}
	var out []int
	for w, a := range L.warm {
		s := math.Sqrt(math.Max(vars[w], 0))
		u := means[w] + b*s
		if L.dead[a] {
			out = append(out, w)
			continue
		}
		if p.lazyKeep(w) {
			L.idle[w] = 0
			continue
		}
		if p.opt.Eliminate && u < lcb {
			L.dead[a] = true
			L.ndead++
			L.eliminated++
			out = append(out, w)
			continue
		}
		// Close to the best: within what its bound would have grown by
		// over the last lazyRetireAfter asks.
		reach := u + s*grow + L.pmu[a]*dD + L.psd[a]*dE*math.Sqrt(b*b+dS)
		// An arm that would not be needed for lazyRetireAfter asks
		// leaves now.
		if reach >= best {
			L.idle[w] = 0
		} else {
			L.idle[w]++
			out = append(out, w)
		}
	}
	if p.opt.Eliminate {
		b2 := b * b
		for _, a := range L.alive {
			if L.win[a] < 0 && !L.dead[a] && L.bound(a, b2) < lcb {
				L.dead[a] = true
				L.ndead++
				L.eliminated++
			}
		}
	}
	// Retiring compacts the working set's rows: batch it.
	if len(out) > 0 && (L.asks%lazyRetireAfter == 0 || len(out) > len(L.warm)/8) {
		if err := L.retire(out); err != nil {
			return err
		}
	}
	if L.ndead > len(L.alive)/8 {
		alive := L.alive[:0]
		for _, a := range L.alive {
			if !L.dead[a] {
				alive = append(alive, a)
			}
		}
		L.alive, L.ndead = alive, 0
	}
	return nil
}

// lazyCheck computes the exact UCB of every arm outside W and counts those
// above their bound; it also checks that no arm beats the choice.
func (p *GP) lazyCheck(b float64, chosen int) error {
	L := p.lz
	b2 := b * b
	best := math.Inf(-1)
	if w := L.win[chosen]; w >= 0 {
		best = L.scores[w]
	}
	for _, a := range L.alive {
		if L.win[a] >= 0 || L.dead[a] {
			continue
		}
		m, v, err := p.lazyPredict(a)
		if err != nil {
			return err
		}
		u := m + b*math.Sqrt(math.Max(v, 0))
		if u > L.bound(a, b2) {
			L.violations++
		} else if len(p.pending) == 0 && better(u, a, best, chosen) {
			// Below its bound yet above the choice: only rounding
			// between Predict and the rows can do this.
			L.violations++
		}
	}
	return nil
}

func (p *GP) lazyPredict(a int) (mean, variance float64, err error) {
	L := p.lz
	if w := L.win[a]; w >= 0 {
		return L.post().Means()[w], L.post().Variances()[w], nil
	}
	x := L.x.RawRowView(a)
	if L.dtc != nil {
		return L.dtc.Predict(x)
	}
	return L.ex.Predict(x)
}

// lazyPosterior computes every arm's mean and variance (score units).
func (p *GP) lazyPosterior() (means, vars []float64) {
	n := p.arms
	means, vars = make([]float64, n), make([]float64, n)
	for a := range n {
		if p.post.Len() == 0 {
			means[a], vars[a] = 0, p.lz.psd[a]*p.lz.psd[a]
			continue
		}
		means[a], vars[a], _ = p.lazyPredict(a)
	}
	return means, vars
}
