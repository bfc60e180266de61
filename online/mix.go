package online

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// WidthMix selects the kernel width online: it runs one expert per width
// of a grid, all on the same stream, and predicts the exponentially
// weighted average of their predictions,
//
//	yhat_t = sum_i p_{t,i} f_{t,i}(x_t),  p_{t,i} ∝ exp(-eta_t L_{t-1,i}),
//
// where L_{t-1,i} is expert i's cumulative loss on the rounds before t
// (the exponentially weighted forecaster, Cesa-Bianchi and Lugosi 2006,
// Section 3.3). The weights use only past targets, so the prequential
// score of the mix is honest: no width is chosen with hindsight.
//
// Regression: the square loss with predictions and targets in an interval
// of length 1 is 1/2-exp-concave, and eta = 1/2 guarantees a cumulative
// loss at most the best expert's plus 2 ln K (Prop. 3.1 there). That
// constant cannot separate experts whose cumulative losses differ by less
// than about 2, which at MSE 0.002 over 2000 rounds is a 50% gap, so the
// mix uses eta_t = max(1/2, 1/(2 s2_t)) with s2_t the best expert's
// running MSE: Bayesian model averaging under a Gaussian likelihood with
// that noise variance, which concentrates on the best width as evidence
// accrues (the guarantee above is then no longer a theorem; the test
// checks it empirically). Classification uses the hinge loss clipped to
// [0, 2], halved, and eta = sqrt(8 ln K / T)/2 (Theorem 2.2 there).
type WidthMix struct {
	experts []Learner
	widths  []float64
	lambdas []float64 // the experts' ridges, when the mix is also over lambda
	ard     []bool    // relevance experts (their width is a factor of the fitted length scales)
	loss    []float64
	eta     float64
	task    Task
	t       int // rounds learned
	f, p    []float64
	// active marks the experts still run; a pruned expert is nil in
	// experts and has weight 0 (see PruneNats).
	active []bool
	pruned int
	prune  float64 // PruneNats; +Inf in tests that compare with no pruning
	// recent is each expert's exponential moving average of its loss
	// (weight recentRate per round): an expert that does better than the
	// leader lately is catching up and is not dropped.
	recent []float64
	n      int // stream length, for the earliest pruning round
}

// PruneNats is the log-weight gap below the leader at which WidthMix stops
// running an expert (from round max(50, n/4) on, and not while the
// expert's recent loss is below the leader's: see recentRate). Its weight
// is then below exp(-PruneNats) = 1e-13 of the leader's and its
// predictions no longer move the mix's by more than that fraction. The
// decision uses only past losses (it is part of the prequential pass), and
// it makes the mix cost about one expert for the last three quarters of
// the stream instead of K. A pruned expert could only have regained
// weight by beating the leader by PruneNats/eta_t in cumulative loss
// afterwards; the mix gives up that chance, so the regret bound of the
// exponentially weighted forecaster holds against the experts still run.
const PruneNats = 30

// No expert is dropped before round max(pruneAfter, n/4) of a stream of n
// rounds, nor while its recent loss (moving average, weight recentRate)
// is below the leader's. Both guard against dropping the width that wins
// late: with a dictionary budget, a narrow width leads while its
// dictionary fills (nearly every point is new to it) and falls behind
// once the budget binds; on elevators, dropping the other widths after
// 300 rounds left AOGD-ALD's mix at 0.56 of the running mean's MSE where
// the mix that keeps them switches to the median width and makes 0.22.
const (
	pruneAfter = 50
	recentRate = 1.0 / 200
)

// NewWidthMix returns the mix of experts, one per width (same order).
func NewWidthMix(experts []Learner, widths []float64, task Task, n int) (*WidthMix, error) {
	if len(experts) == 0 || len(experts) != len(widths) {
		return nil, fmt.Errorf("online: width mix needs one expert per width, got %d and %d", len(experts), len(widths))
	}
	eta := 0.5
	if task == Classification {
		eta = math.Sqrt(8*math.Log(float64(len(experts)))/float64(max(n, 1))) / 2
	}
	k := len(experts)
	active := make([]bool, k)
	for i := range active {
		active[i] = true
	}
	return &WidthMix{experts: experts, widths: widths, loss: make([]float64, k), eta: eta, task: task,
		f: make([]float64, k), p: make([]float64, k), active: active, prune: PruneNats,
		recent: make([]float64, k), n: n}, nil
}

// weights sets p to the normalized exponential weights (0 for pruned
// experts) and returns the exponent's eta_t and the leader's loss.
func (m *WidthMix) weights() (eta, lo float64) {
	lo = math.Inf(1)
	for i, l := range m.loss {
		if m.active[i] {
			lo = math.Min(lo, l)
		}
	}
	eta = m.eta
	if m.task == Regression && m.t > 0 {
		// Bayesian model averaging with a Gaussian likelihood whose noise
		// variance is the best expert's running MSE: eta_t = 1/(2 s2_t).
		// The exp-concavity value 1/2 cannot tell apart experts whose
		// cumulative losses differ by less than about 2 (a 20% MSE gap
		// over 2000 rounds at MSE 0.005); s2_t <= 1 keeps eta_t >= 1/2.
		s2 := math.Max(math.Min(lo/float64(m.t), 1), 1e-6)
		eta = math.Max(eta, 1/(2*s2))
	}
	var s float64
	for i, l := range m.loss {
		m.p[i] = 0
		if m.active[i] {
			m.p[i] = math.Exp(-eta * (l - lo))
		}
		s += m.p[i]
	}
	for i := range m.p {
		m.p[i] /= s
	}
	return eta, lo
}

// Predict returns the weighted average of the experts' predictions.
func (m *WidthMix) Predict(x []float64) float64 {
	m.weights()
	var y float64
	for i, e := range m.experts {
		if m.active[i] {
			y += m.p[i] * e.Predict(x)
		}
	}
	return y
}

// Learn charges every expert its loss at (x, y), then teaches it y.
func (m *WidthMix) Learn(x []float64, y float64) error {
	for i, e := range m.experts {
		if !m.active[i] {
			continue
		}
		f := e.Predict(x)
		var l float64
		if m.task == Classification {
			l = math.Min(Hinge.Value(f, y), 2) / 2
		} else {
			l = (f - y) * (f - y)
		}
		m.loss[i] += l
		m.recent[i] += recentRate * (l - m.recent[i])
		if err := e.Learn(x, y); err != nil {
			return err
		}
	}
	m.t++
	if m.t >= max(pruneAfter, m.n/4) && m.pruned < len(m.experts)-1 {
		eta, lo := m.weights()
		lead := 0
		for i, l := range m.loss {
			if m.active[i] && l == lo {
				lead = i
			}
		}
		for i, l := range m.loss {
			if m.active[i] && eta*(l-lo) > m.prune && m.recent[i] >= m.recent[lead] {
				if d, ok := m.experts[i].(interface{ drop() }); ok {
					d.drop()
				}
				m.active[i], m.experts[i] = false, nil
				m.pruned++
			}
		}
	}
	return nil
}

// Size returns the experts' total dictionary size / feature count (what
// the mix stores).
func (m *WidthMix) Size() int {
	var s int
	for i, e := range m.experts {
		if m.active[i] {
			s += e.Size()
		}
	}
	return s
}

// Name returns the experts' name: the table's note (Chosen) says that
// the row is a mix.
func (m *WidthMix) Name() string { return m.first().Name() }

// first returns the first expert still run.
func (m *WidthMix) first() Learner {
	for i, e := range m.experts {
		if m.active[i] {
			return e
		}
	}
	return nil // unreachable: the leader is never pruned
}

// Active returns the number of experts still run (not pruned).
func (m *WidthMix) Active() int { return len(m.experts) - m.pruned }

// Chosen reports the grid, the width with the largest current weight and
// the weights, "mix of 4 widths: width 1.2 (p 0.3:dropped 0.6:0.09 1.2:0.91
// 2.4:0.00)"; "dropped" marks the experts pruned during the pass.
func (m *WidthMix) Chosen() string {
	m.weights()
	best := 0
	var b strings.Builder
	for i, p := range m.p {
		if p > m.p[best] {
			best = i
		}
		if m.isARD(i) {
			fmt.Fprintf(&b, " ard*%s", strconv.FormatFloat(m.widths[i], 'g', 3, 64))
		} else {
			fmt.Fprintf(&b, " %s", strconv.FormatFloat(m.widths[i], 'g', 3, 64))
		}
		if len(m.lambdas) > 0 {
			fmt.Fprintf(&b, "/%g", m.lambdas[i])
		}
		if !m.active[i] {
			b.WriteString(":dropped")
			continue
		}
		fmt.Fprintf(&b, ":%.2f", p)
	}
	what, lead := "widths", strconv.FormatFloat(m.widths[best], 'g', 3, 64)
	if m.ard != nil {
		what = "isotropic and relevance (ard*f: f times the fitted length scales) widths"
		if m.isARD(best) {
			lead = "ard*" + lead
		}
	}
	if len(m.lambdas) > 0 {
		return fmt.Sprintf("mix of %d %s x lambdas: width %s, lambda %g (p%s)", len(m.experts), what, lead, m.lambdas[best], b.String())
	}
	return fmt.Sprintf("mix of %d %s: width %s (p%s)", len(m.experts), what, lead, b.String())
}

// isARD reports whether expert i is a relevance expert.
func (m *WidthMix) isARD(i int) bool { return m.ard != nil && m.ard[i] }

// WidthGrid returns the grid w * 2^k, k = -2..1 (4 widths around w, the
// median distance), that bkb regress mixes with --width-mix.
func WidthGrid(w float64) []float64 { return []float64{w / 4, w / 2, w, 2 * w} }
