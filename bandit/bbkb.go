package bandit

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/acquisition"
	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/internal/chol"
	"github.com/bkb-go/bkb/kernel"
)

// ErrBatchFull is returned by BBKB.Ask when the current batch is closed
// (the adaptive rule or MaxBatch stopped it) and some of its arms have not
// been told yet. The caller waits for a Tell (a worker finishing) and asks
// again; once every arm of the batch is told the posterior is updated and
// the next Ask opens a new batch.
var ErrBatchFull = errors.New("bandit: batch is full; tell the pending arms, then ask again")

// LogDetBeta is the batch beta of BBKB (Calandriello et al., ICML 2020,
// Alg. 1; the authors' batch-bkb code):
//
//	beta = sqrt(lambda) F + sqrt(Xi^2 (C~ logdet + log(1/Delta))),
//	logdet = sum over batches of sum_{x in batch} log(1 + sigma~^2(x)),
//
// with sigma~^2 the stale (batch-start) DTC variance on the 1/lambda scale.
// It multiplies sigma~ as in the paper; PaperScale does not matter for it.
type LogDetBeta struct {
	F, Delta, Xi float64
}

// Validate reports parameters outside their range.
func (b LogDetBeta) Validate() error {
	if !(b.Delta > 0 && b.Delta < 1) || !(b.F >= 0) || !(b.Xi >= 0) {
		return fmt.Errorf("bandit: BBKB beta needs 0<delta<1, F>=0, xi>=0; got delta=%v F=%v xi=%v", b.Delta, b.F, b.Xi)
	}
	return nil
}

// BBKBOptions configures NewBBKB. The embedded Options are those of BKB
// (kernel, lambda, beta, PaperScale, qbar, incremental resampling, seed).
type BBKBOptions struct {
	Options
	// Ratio is the ratio threshold C~ > 1 of the adaptive batch rule
	// (default 2, the authors' default). The batch stops after the arm for
	// which 1 + sum of the chosen arms' stale variances sigma~^2 exceeds
	// it (the "global" rule, Lemma 1 of the paper). Larger values give
	// bigger batches and more regret.
	Ratio float64
	// MaxBatch, when positive, also stops a batch at this many arms.
	MaxBatch int
	// MinBatch, when positive, keeps a batch open until it holds this many
	// arms, whatever the ratio rule says (a departure from the paper, for
	// parallel workers: with W workers a batch shorter than W leaves
	// workers idle). Each arm after the rule would have stopped is still
	// chosen by the lazy fantasized UCB, so the batch is GP-BUCB's
	// conditioning on the pending arms; the paper's ratio bound then holds
	// with C~ the largest 1 + sum of stale variances a batch reached
	// (BatchStats.MaxRatio) instead of Ratio.
	MinBatch int
	// LogDet, when set, replaces Options.Beta by the batch beta.
	LogDet *LogDetBeta
	// Distinct keeps an arm already in the batch from being chosen again.
	// By default a batch may hold an arm more than once, as the paper's
	// algorithm and the authors' code do: with noisy rewards replicating
	// the best arm is what sequential BKB does too, and forbidding it cost
	// 3.3x BKB's cumulative regret on Hartmann 3 (TestBBKBRegret: 155
	// against 46; with repeats 46). Set it when evaluations are
	// deterministic, so that parallel workers never evaluate the same arm
	// twice. (Under the DTC the fantasy does not shrink the residual
	// (k(x,x) - ||z(x)||^2)/lambda of an arm outside the dictionary, so
	// with repeats allowed a batch can hold such an arm several times.)
	Distinct bool
	// BruteForce recomputes every arm's fantasized variance after each
	// choice instead of only those that can still win (lazy updates). The
	// arms chosen are the same; it exists for tests and benchmarks.
	BruteForce bool
}

// BatchStats reports BBKB's batching.
type BatchStats struct {
	// Batches is the number of completed batches (posterior updates).
	Batches int
	// Arms is the number of arms in completed batches.
	Arms int
	// AverageBatchSize is the number of arms asked over the number of
	// batches, counting the batch in progress (T / #batches, the paper's
	// figure; 0 before the first Ask).
	AverageBatchSize float64
	// MaxBatchSize is the largest completed batch.
	MaxBatchSize int
	// MaxRatio is the largest 1 + sum of the stale variances of a
	// completed batch's arms before its last: the quantity the batch rule
	// keeps within Ratio (above it only with MinBatch).
	MaxRatio float64
	// Recomputes counts fantasized-variance recomputations of single arms
	// inside batches (lazy updates; brute force recomputes every arm).
	Recomputes int
	// Chosen counts arms chosen by UCB inside batches after their first
	// arm, the steps that may recompute variances.
	Chosen int
	// LogDet is the accumulated sum of log(1 + sigma~^2) over chosen arms.
	LogDet float64
}

type toldObs struct {
	arm int
	y   float64
}

// BBKB is Batched BKB (Calandriello, Carratino, Lazaric, Valko, Rosasco,
// "Near-linear time Gaussian process optimization with adaptive batching
// and resparsification", ICML 2020) over a
// finite arm set, driven through the Policy interface.
//
// A batch is chosen with the posterior mean frozen at its start: each Ask
// takes the argmax of the UCB, then fantasizes a rank-one update of V with
// the chosen arm's embedding, which shrinks the variances of the arms it
// covaries with. Consecutive Asks extend the batch while 1 + the sum of
// the chosen arms' stale variances stays within Ratio (and MaxBatch); the
// Ask that crosses it still returns its arm and closes the batch, after
// which Ask returns ErrBatchFull until every arm of the batch is told.
// Tells may come in any order; the one that completes a closed batch adds
// all of its observations to the DTC posterior, accumulates the batch
// logdet and resamples the dictionary once (resparsification once per
// batch, not per observation). EndBatch closes a batch early.
//
// A sequential caller (Ask, Tell, Ask, ...) such as Run gets exactly the
// paper's algorithm: the batch keeps growing with the mean frozen, the
// told rewards wait until the batch closes.
//
// Arms told that are not in the current batch (a user's own choices, a
// warm start) are kept until the batch update when a batch is in
// progress, and otherwise observed at once, with a resample, as BKB does.
//
// Cost: the first fantasy after a dictionary change embeds the observed
// arms in the new dictionary and factors V, O(n m^2 + m^3) for n distinct
// observed arms; while the dictionary stays the same V's factor is updated
// by one O(m^2) rank-one update per observation and the embeddings are
// kept. Every arm chosen costs an O(A) scan plus, for each arm whose variance is
// recomputed, O(m^2) once per batch for its embedding and O(m b) for the
// b fantasies so far; each observation costs O(A m) in the DTC.
//
// With Options.Lazy a batch reads only the arms that can still win
// (bbkb_lazy.go): the posterior's candidates are a working set of arms,
// Posterior's included, and the arms chosen are the full scan's whenever
// the lazy bounds hold. It reads few rows with short batches (MaxBatch
// of a few workers) on 100,000 arms; a long batch of the ratio rule
// visits most arms, and costs a little more than the full scan; on
// 1,000,000 arms either reads most rows and saves memory, not time
// (docs/scaling.md).
//
// BBKB is not safe for concurrent use: a caller with several workers
// serialises Ask and Tell.
type BBKB struct {
	fresh  bool // within AskFresh: a batch opened leaves out the told arms
	opt    BBKBOptions
	arms   *mat.Dense
	n      int
	dtc    *gp.DTC
	rng    *rand.Rand
	kappa2 float64

	// Current batch.
	batch  []int
	untold []int // per arm: batch occurrences not told yet
	nUntld int
	closed bool
	ratio  float64 // 1 + sum of stale variances of the batch's arms
	// ratioBefore is ratio before the batch's last arm.
	ratioBefore float64
	told        []toldObs
	extra       []toldObs // told arms not in the batch, applied at the update

	// Fantasy state, valid while a batch is in progress.
	beta  float64
	means []float64 // frozen posterior mean (aliases the DTC)
	var0  []float64 // stale variances at the batch start
	cur   []float64 // fantasized variance, as of ver
	ucb   []float64 // UCB from cur; -Inf for excluded arms
	ver   []int     // number of fantasies cur includes
	ny    *gp.Nystrom
	m     int
	emb   []float64 // n x m embeddings, valid where embID == basis
	embID []int
	vf    chol.Factor // V = lambda I + sum_i count_i z_i z_i^T in the basis
	vbuf  []float64
	g     []float64 // fantasy k: V_k^{-1} z_{c_k}, row-major k x m
	dd    []float64 // 1 + z_{c_k}^T V_k^{-1} z_{c_k}
	work  []float64
	// The basis (Nystrom on S), the embedding cache and V's factor persist
	// across batches while S does not change: built says they are current,
	// basis numbers them for the cache, and changes is the DTC's
	// DictionaryChanges() when they were built.
	built   bool
	basis   int
	changes int

	logdet float64
	stats  BatchStats

	// Lazy (bbkb_lazy.go): lz holds the working set's posterior (dtc is
	// its DTC, whose candidates are the working set) and the bounds;
	// meanA is the batch-start mean by arm (means aliases it), valid where
	// ver >= 0 (ver -1: ucb is a bound); the embeddings are a pool of rows,
	// embSlot[arm] the row of an arm or -1, embArms the arm of each row.
	lz      *GP
	meanA   []float64
	embSlot []int32
	embArms []int
}

// NewBBKB returns Batched BKB over the arms (rows).
func NewBBKB(arms *mat.Dense, opt BBKBOptions) (*BBKB, error) {
	if err := checkArms(arms); err != nil {
		return nil, err
	}
	opt.defaults(arms)
	if opt.Ratio == 0 {
		opt.Ratio = 2
	}
	if !(opt.Ratio > 1) {
		return nil, fmt.Errorf("bandit: BBKB ratio threshold must exceed 1, got %v", opt.Ratio)
	}
	if opt.MaxBatch < 0 {
		return nil, fmt.Errorf("bandit: BBKB max batch must be >= 0, got %d", opt.MaxBatch)
	}
	if opt.MinBatch < 0 {
		return nil, fmt.Errorf("bandit: BBKB min batch must be >= 0, got %d", opt.MinBatch)
	}
	if opt.MaxBatch > 0 && opt.MinBatch > opt.MaxBatch {
		return nil, fmt.Errorf("bandit: BBKB min batch %d exceeds max batch %d", opt.MinBatch, opt.MaxBatch)
	}
	if err := opt.validate(); err != nil {
		return nil, err
	}
	if (opt.Eliminate || opt.LazyCheck) && !opt.Lazy {
		return nil, errors.New("bandit: Eliminate and LazyCheck need Lazy")
	}
	if opt.LogDet != nil {
		if err := opt.LogDet.Validate(); err != nil {
			return nil, err
		}
	}
	if !(opt.Qbar > 0) {
		return nil, fmt.Errorf("bandit: qbar must be positive, got %v", opt.Qbar)
	}
	n, d := arms.Dims()
	var g *gp.DTC
	if !opt.Lazy {
		var err error
		if g, err = gp.NewDTCWith(opt.Kernel, d, opt.Lambda, gp.CoreOptions{LegacyCore: opt.LegacyCore, DeadPivots: opt.DeadPivots}); err != nil {
			return nil, err
		}
		if err := g.SetCandidates(arms); err != nil {
			return nil, err
		}
	}
	ny, err := gp.NewNystrom(opt.Kernel, d)
	if err != nil {
		return nil, err
	}
	p := &BBKB{opt: opt, arms: arms, n: n, dtc: g, ny: ny,
		// The same stream as the GP policies: with MaxBatch 1 BBKB makes
		// exactly BKB's draws (TestBBKBSequentialEqualsBKB).
		rng:    rand.New(rand.NewPCG(opt.Seed, 0x62_6b_62)),
		untold: make([]int, n), var0: make([]float64, n), cur: make([]float64, n),
		ucb: make([]float64, n), ver: make([]int, n), embID: make([]int, n)}
	diag := make([]float64, n)
	kernel.Diagonal(diag, opt.Kernel, arms)
	for _, v := range diag {
		p.kappa2 = math.Max(p.kappa2, v)
	}
	if opt.Lazy {
		if err := p.lazyInit(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Name returns "bbkb".
func (p *BBKB) Name() string { return "bbkb" }

// Posterior returns the DTC posterior (updated once per batch). With
// Options.Lazy its candidates are the working set, not the arms: its
// candidate indices are not arm indices.
func (p *BBKB) Posterior() *gp.DTC { return p.dtc }

// Stats reports the posterior's state.
func (p *BBKB) Stats() Stats {
	_, j := p.dtc.Jitter()
	nu := p.dtc.Numerics()
	s := Stats{Observations: p.dtc.Len(), DictionarySize: p.dtc.DictionarySize(),
		DictionaryChanges: p.dtc.DictionaryChanges(), SumVariance: p.dtc.EffectiveDimension(), Jitter: j,
		VarianceClamps: nu.VarianceClamps, RetryJitter: nu.RetryJitter}
	if p.lz != nil {
		p.lz.lz.stats(&s)
	}
	return s
}

// BatchStats reports the batching so far.
func (p *BBKB) BatchStats() BatchStats {
	s := p.stats
	n, arms := s.Batches, s.Arms
	if len(p.batch) > 0 {
		n, arms = n+1, arms+len(p.batch)
	}
	if n > 0 {
		s.AverageBatchSize = float64(arms) / float64(n)
	}
	s.LogDet = p.logdet
	return s
}

// Batch returns the arms of the current batch in the order chosen
// (aliasing internal state; empty between batches).
func (p *BBKB) Batch() []int { return p.batch }

// BatchClosed reports whether the current batch is closed to new arms.
func (p *BBKB) BatchClosed() bool { return p.closed }

// Beta returns the beta of the current (or next) batch.
func (p *BBKB) Beta() float64 {
	if len(p.batch) > 0 {
		return p.beta
	}
	return p.batchBeta()
}

func (p *BBKB) batchBeta() float64 {
	lam := p.opt.Lambda
	if b := p.opt.LogDet; b != nil {
		return math.Sqrt(lam)*b.F + math.Sqrt(b.Xi*b.Xi*(p.opt.Ratio*p.logdet+math.Log(1/b.Delta)))
	}
	s := acquisition.State{T: p.dtc.Len(), Arms: p.n, Lambda: lam, Kappa2: p.kappa2, SumVar: p.dtc.EffectiveDimension()}
	b := p.opt.Beta.Beta(s)
	if !p.opt.PaperScale {
		b *= math.Sqrt(lam)
	}
	return b
}

// startBatch freezes the mean and takes the stale variances. The fantasy
// state is built on the first fantasy (ensureBasis): a batch closed after
// one arm needs none.
func (p *BBKB) startBatch() {
	p.beta = p.batchBeta()
	p.means = p.dtc.Means()
	copy(p.var0, p.dtc.Variances())
	copy(p.cur, p.var0)
	acquisition.UCB(p.ucb, p.means, p.cur, p.beta)
	for i := range p.ver {
		p.ver[i] = 0
	}
	p.g, p.dd = p.g[:0], p.dd[:0]
	p.ratio, p.ratioBefore = 1, 1
}

// ensureBasis builds, unless current, the fantasy state: the Nystrom
// embedding on the current dictionary and the factor of
// V = lambda I + sum_i count_i z_i z_i^T in that basis (any basis gives the
// same variances). O(m^3 + n m^2) for n distinct observed arms;
// while S does not change the factor is kept current by rank-one updates
// instead (observe).
func (p *BBKB) ensureBasis() error {
	if p.built {
		return nil
	}
	p.basis++
	p.changes = p.dtc.DictionaryChanges()
	p.ny.Reset()
	for _, r := range p.dtc.Dictionary() {
		if p.lz != nil {
			r = p.lz.lz.warm[r] // a row of the working set: its arm
		}
		p.ny.Add(p.arms.RawRowView(r), nil)
	}
	m := p.ny.Size()
	p.m = m
	if p.lz != nil {
		p.lazyResetEmbed()
	} else if need := p.n * m; cap(p.emb) < need {
		p.emb = make([]float64, need)
		for i := range p.embID {
			p.embID[i] = 0
		}
	}
	if p.lz == nil {
		p.emb = p.emb[:p.n*m]
	}
	if cap(p.vbuf) < m*m {
		p.vbuf = make([]float64, m*m)
	}
	v := p.vbuf[:m*m]
	for i := range v {
		v[i] = 0
	}
	for a := 0; a < m; a++ {
		v[a*m+a] = p.opt.Lambda
	}
	if m == 0 {
		p.vf.Reset()
		p.built = true
		return nil
	}
	// The observed arms in index order (the order of the sums), each
	// with its count: every arm for the full scan, the working set's
	// observed arms for a lazy one.
	arms, count := p.n, p.dtc.Count
	var observed []int
	if p.lz != nil {
		observed = p.lazyObserved()
		arms, count = len(observed), func(i int) int { return p.lz.count[i] }
	}
	for k := range arms {
		i := k
		if observed != nil {
			i = observed[k]
		}
		c := count(i)
		if c == 0 {
			continue
		}
		z := p.embed(i)
		w := float64(c)
		for a := 0; a < m; a++ {
			wa := w * z[a]
			row := v[a*m : a*m+a+1]
			for b := range row {
				row[b] += wa * z[b]
			}
		}
	}
	if err := p.vf.Factorize(v, m, m); err != nil {
		return fmt.Errorf("bandit: BBKB fantasy state, V of order %d: %w", m, err)
	}
	p.built = true
	return nil
}

// observe adds an observation to the DTC and, while the fantasy state is
// current, to V's factor (rank-one update, O(m^2)).
func (p *BBKB) observe(arm int, y float64) error {
	if err := p.dtc.ObserveCandidate(arm, y); err != nil {
		return fmt.Errorf("bandit: arm %d: %w", arm, err)
	}
	if p.built && p.m > 0 {
		p.work = append(p.work[:0], p.embed(arm)...)
		p.vf.RankOneUpdate(p.work)
	}
	return nil
}

// embed returns z(x_i) in the batch's basis, computing it once per batch.
func (p *BBKB) embed(i int) []float64 {
	if p.lz != nil {
		return p.lazyEmbed(i)
	}
	z := p.emb[i*p.m : (i+1)*p.m]
	if p.embID[i] != p.basis {
		p.ny.Embed(z, p.arms.RawRowView(i))
		p.embID[i] = p.basis
	}
	return z
}

// fantasize adds a fantasy observation at arm c (mean frozen): with
// g_k = V_k^{-1} z_c = V_0^{-1} z_c - sum_{j<k} g_j (g_j.z_c)/dd_j and
// dd_k = 1 + z_c.g_k, every variance drops by (z(x).g_k)^2/dd_k
// (Sherman-Morrison; the paper's rank-one update of Alg. 1).
func (p *BBKB) fantasize(c int) error {
	if err := p.ensureBasis(); err != nil {
		return err
	}
	m := p.m
	if m == 0 {
		return nil
	}
	z := p.embed(c)
	k := len(p.dd)
	p.g = append(p.g, z...)
	gk := p.g[k*m : (k+1)*m]
	p.vf.Solve(gk)
	for j := 0; j < k; j++ {
		gj := p.g[j*m : (j+1)*m]
		s := dotv(gj, z) / p.dd[j]
		for a := range gk {
			gk[a] -= s * gj[a]
		}
	}
	p.dd = append(p.dd, 1+dotv(z, gk))
	return nil
}

// refresh recomputes arm i's fantasized variance and UCB from scratch
// (a pure function of the batch state, so lazy and brute force agree to
// the bit).
func (p *BBKB) refresh(i int) {
	k := len(p.dd)
	v := p.var0[i]
	if k > 0 && p.m > 0 {
		z := p.embed(i)
		m := p.m
		for j := 0; j < k; j++ {
			s := dotv(z, p.g[j*m:(j+1)*m])
			v -= s * s / p.dd[j]
		}
		if v < 0 {
			v = 0
		}
	}
	p.cur[i] = v
	p.ver[i] = k
	if !math.IsInf(p.ucb[i], -1) {
		p.ucb[i] = p.means[i] + p.beta*math.Sqrt(v)
	}
	p.stats.Recomputes++
}

// selectArm returns the UCB argmax under the current fantasies (ties to
// the lowest index), or -1 when every arm is excluded. Stale UCBs are
// upper bounds (variances only shrink within a batch), so an argmax
// whose UCB is current is the true argmax; a stale one is refreshed and
// the search repeated (lazy evaluation).
func (p *BBKB) selectArm() int {
	k := len(p.dd)
	if p.opt.BruteForce {
		for i := range p.ucb {
			if p.ver[i] != k && !math.IsInf(p.ucb[i], -1) {
				p.refresh(i)
			}
		}
	}
	for {
		a := acquisition.Argmax(p.ucb)
		if a < 0 || math.IsInf(p.ucb[a], -1) {
			return -1
		}
		if p.ver[a] == k {
			return a
		}
		p.refresh(a)
	}
}

// afterChoice applies the fantasy of arm c and, as the paper's lazy rule
// does, refreshes the arms whose stale UCB is still at least c's new UCB.
func (p *BBKB) afterChoice(c int) error {
	if err := p.fantasize(c); err != nil {
		return err
	}
	p.stats.Chosen++
	if p.opt.BruteForce || p.m == 0 {
		if p.opt.Distinct {
			p.ucb[c] = math.Inf(-1)
		}
		return nil
	}
	p.refresh(c)
	uc := p.means[c] + p.beta*math.Sqrt(p.cur[c])
	if p.opt.Distinct {
		p.ucb[c] = math.Inf(-1)
	}
	k := len(p.dd)
	for i, u := range p.ucb {
		// ver -1 (lazy): a bound, refreshed when it leads (lazySelect).
		if u >= uc && p.ver[i] != k && p.ver[i] >= 0 {
			p.refresh(i)
		}
	}
	return nil
}
