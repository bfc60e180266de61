// Package pruner decides whether a trial should stop early, from the
// intermediate values (a learning curve) that it and the other trials of
// its study have reported: the median rule (Optuna's MedianPruner),
// asynchronous successive halving (ASHA; Li et al. 2020) and Hyperband
// (Li et al. 2018), each with Optuna 3.1's semantics; and two rules of
// its own that read the complete trials' curves: CurveBound, and
// CurveExtrapolation, which extrapolates each learning curve by a
// least-squares exponential decay calibrated on those curves.
//
// A decision is a pure function of the curves it is shown. The study
// layer shows it the curves as stored, up to and including the report
// being decided, so that every worker that replays the same records
// reaches the same decision. Values are minimized: the study negates them
// for a maximized objective (the median and the rung ranks are symmetric
// under negation, so decisions match Optuna's for either direction).
package pruner

import (
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Curve is what one trial has reported.
type Curve struct {
	// Trial is the trial's number.
	Trial int
	// Steps and Values are the reports, in the order they were stored;
	// Steps holds no step twice. Seq holds each report's position in the
	// study's sequence of events (increasing); it may be nil when no
	// pruner in use needs it (Hyperband without MaxResource does).
	Steps  []int
	Values []float64
	Seq    []int
	// Complete is true for a trial that ended with a final value (not
	// pending, failed or pruned).
	Complete bool
	// CompletedAt is the position of the trial's completion in the
	// study's sequence of events; unused when !Complete.
	CompletedAt int
}

// LastStep returns the largest reported step, -1 when there is none.
func (c Curve) LastStep() int {
	if len(c.Steps) == 0 {
		return -1
	}
	return slices.Max(c.Steps)
}

// ValueAt returns the value reported at step.
func (c Curve) ValueAt(step int) (float64, bool) {
	for i, s := range c.Steps {
		if s == step {
			return c.Values[i], true
		}
	}
	return 0, false
}

// Study is what a decision reads: the study's name (Hyperband assigns
// trials to brackets by a hash of the name and trial number, as Optuna
// does) and every trial's curve except the one being decided.
type Study struct {
	Name   string
	Trials []Curve
}

// Finals returns the final values of the complete trials that reported
// (each one's value at its last step), in trial order, and the largest of
// their last steps (-1 when there are none).
func (s Study) Finals() (finals []float64, lastStep int) {
	lastStep = -1
	for _, t := range s.Trials {
		if t.Complete && len(t.Steps) > 0 {
			ls := t.LastStep()
			v, _ := t.ValueAt(ls)
			finals = append(finals, v)
			lastStep = max(lastStep, ls)
		}
	}
	return finals, lastStep
}

// Pruner decides whether a trial stops.
type Pruner interface {
	// Prune reports whether the trial whose curve is cur should stop
	// after its newest report (the last element of cur.Steps).
	Prune(s Study, cur Curve) bool
}

// Kinds of pruner, for Config.Kind.
const (
	None      = "none"
	Median    = "median"
	ASHA      = "asha"
	Hyperband = "hyperband"
	Bound     = "bound"
	// Extrapolation is CurveExtrapolation: each curve extrapolated to the
	// final step by a least-squares fit, calibrated on the complete trials.
	Extrapolation = "curve"
)

// Config chooses a pruner and its settings; zero fields take Optuna 3.1's
// defaults in Normalize.
type Config struct {
	// Kind is None (or ""), Median, ASHA, Hyperband, Bound or Extrapolation.
	Kind string `json:"kind,omitempty"`
	// StartupTrials (median, bound, curve): no pruning before this many
	// trials are complete (default 5).
	StartupTrials int `json:"startup_trials,omitempty"`
	// WarmupSteps (median, curve): no pruning at steps below it (default
	// 0 for median, 3 for curve).
	WarmupSteps int `json:"warmup_steps,omitempty"`
	// IntervalSteps (median): steps between checks, counted from
	// WarmupSteps (default 1).
	IntervalSteps int `json:"interval_steps,omitempty"`
	// MinResource (ASHA, Hyperband): the step of the first rung
	// (default 1).
	MinResource int `json:"min_resource,omitempty"`
	// ReductionFactor (ASHA, Hyperband): one trial in ReductionFactor is
	// promoted at each rung (default 4 for ASHA, 3 for Hyperband).
	ReductionFactor int `json:"reduction_factor,omitempty"`
	// MinEarlyStoppingRate (ASHA): the first rung is at step
	// MinResource*ReductionFactor^MinEarlyStoppingRate (default 0).
	MinEarlyStoppingRate int `json:"min_early_stopping_rate,omitempty"`
	// MaxResource (Hyperband): the number of steps of a full trial; 0
	// takes the last step + 1 of the first complete trial, and nothing is
	// pruned before one is complete.
	MaxResource int `json:"max_resource,omitempty"`
	// Rank (curve): a trial is compared with the Rank-th best final value
	// of the complete trials (default 1: the best).
	Rank int `json:"rank,omitempty"`
	// Tell says what the study's model is told about a pruned trial:
	// TellLast (its last reported value; the default), TellNothing or
	// TellForecast.
	Tell string `json:"tell,omitempty"`
}

// What the model is told about a pruned trial (Config.Tell).
const (
	TellNothing = "nothing"
	TellLast    = "last"
	// TellForecast tells the model the trial's curve extrapolated to the
	// complete trials' last step (Forecast), kept between the best final
	// value so far and the largest value the trial reported; the last
	// value when the trial has too few reports to extrapolate.
	TellForecast = "forecast"
)

// IsZero reports whether c chooses no pruner.
func (c Config) IsZero() bool { return c.Kind == "" || c.Kind == None }

// Normalize fills the defaults of c's kind and checks the settings.
func (c *Config) Normalize() error {
	c.Kind = strings.ToLower(strings.TrimSpace(c.Kind))
	switch c.Tell {
	case "", TellNothing, TellLast, TellForecast:
	default:
		return fmt.Errorf("pruner: tell %q (want nothing, last or forecast)", c.Tell)
	}
	bad := func(name string, v int, min int) error {
		if v < min {
			return fmt.Errorf("pruner %s: %s = %d (want >= %d)", c.Kind, name, v, min)
		}
		return nil
	}
	switch c.Kind {
	case "", None:
		*c = Config{}
		return nil
	}
	if c.Tell == "" {
		c.Tell = TellLast
	}
	switch c.Kind {
	case Bound:
		if c.StartupTrials == 0 {
			c.StartupTrials = 5
		}
		return bad("startup_trials", c.StartupTrials, 0)
	case Extrapolation:
		if c.StartupTrials == 0 {
			c.StartupTrials = 5
		}
		if c.WarmupSteps == 0 {
			c.WarmupSteps = 3
		}
		if c.Rank == 0 {
			c.Rank = 1
		}
		return errors.Join(bad("startup_trials", c.StartupTrials, 0), bad("warmup_steps", c.WarmupSteps, 0),
			bad("rank", c.Rank, 1))
	case Median:
		if c.StartupTrials == 0 {
			c.StartupTrials = 5
		}
		if c.IntervalSteps == 0 {
			c.IntervalSteps = 1
		}
		return errors.Join(bad("startup_trials", c.StartupTrials, 0), bad("warmup_steps", c.WarmupSteps, 0),
			bad("interval_steps", c.IntervalSteps, 1))
	case ASHA, Hyperband:
		if c.MinResource == 0 {
			c.MinResource = 1
		}
		if c.ReductionFactor == 0 {
			c.ReductionFactor = 4
			if c.Kind == Hyperband {
				c.ReductionFactor = 3
			}
		}
		err := errors.Join(bad("min_resource", c.MinResource, 1), bad("reduction_factor", c.ReductionFactor, 2),
			bad("min_early_stopping_rate", c.MinEarlyStoppingRate, 0), bad("max_resource", c.MaxResource, 0))
		if err == nil && c.Kind == Hyperband && c.MaxResource > 0 && c.MaxResource < c.MinResource {
			err = fmt.Errorf("pruner hyperband: max_resource %d is below min_resource %d", c.MaxResource, c.MinResource)
		}
		return err
	}
	return fmt.Errorf("unknown pruner %q (want none, median, asha, hyperband, bound or curve)", c.Kind)
}

// New returns the pruner c chooses (nil for none); c must be normalized.
func (c Config) New() Pruner {
	switch c.Kind {
	case Median:
		return MedianPruner{StartupTrials: c.StartupTrials, WarmupSteps: c.WarmupSteps, IntervalSteps: c.IntervalSteps}
	case ASHA:
		return SuccessiveHalving{MinResource: c.MinResource, ReductionFactor: c.ReductionFactor, MinEarlyStoppingRate: c.MinEarlyStoppingRate}
	case Hyperband:
		return HyperbandPruner{MinResource: c.MinResource, MaxResource: c.MaxResource, ReductionFactor: c.ReductionFactor}
	case Bound:
		return CurveBound{StartupTrials: c.StartupTrials}
	case Extrapolation:
		return CurveExtrapolation{StartupTrials: c.StartupTrials, WarmupSteps: c.WarmupSteps, Rank: c.Rank}
	}
	return nil
}

// String describes c in the form ParseFlag reads.
func (c Config) String() string {
	s := None
	switch c.Kind {
	case Median:
		s = fmt.Sprintf("median:startup=%d,warmup=%d,interval=%d", c.StartupTrials, c.WarmupSteps, c.IntervalSteps)
	case ASHA:
		s = fmt.Sprintf("asha:min=%d,eta=%d,rate=%d", c.MinResource, c.ReductionFactor, c.MinEarlyStoppingRate)
	case Hyperband:
		s = fmt.Sprintf("hyperband:min=%d,max=%d,eta=%d", c.MinResource, c.MaxResource, c.ReductionFactor)
	case Bound:
		s = fmt.Sprintf("bound:startup=%d", c.StartupTrials)
	case Extrapolation:
		s = fmt.Sprintf("curve:startup=%d,warmup=%d,rank=%d", c.StartupTrials, c.WarmupSteps, c.Rank)
	}
	if c.Tell != "" && s != None {
		s += ",tell=" + c.Tell
	}
	return s
}

// ParseFlag reads a pruner from a command-line value: a kind, optionally
// followed by ":" and comma-separated settings, e.g. "median",
// "median:startup=5,warmup=10,interval=2", "asha:min=1,eta=3,rate=0",
// "hyperband:min=1,max=81,eta=3", "curve:startup=5,warmup=3,rank=1". The result is normalized.
func ParseFlag(s string) (Config, error) {
	kind, rest, _ := strings.Cut(s, ":")
	c := Config{Kind: kind}
	if rest != "" {
		for _, kv := range strings.Split(rest, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if strings.TrimSpace(k) == "tell" {
				c.Tell = strings.TrimSpace(v)
				continue
			}
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if !ok || err != nil {
				return Config{}, fmt.Errorf("pruner %q: setting %q is not name=integer", s, kv)
			}
			var dst *int
			switch strings.TrimSpace(k) {
			case "startup", "startup_trials":
				dst = &c.StartupTrials
			case "warmup", "warmup_steps":
				dst = &c.WarmupSteps
			case "interval", "interval_steps":
				dst = &c.IntervalSteps
			case "min", "min_resource":
				dst = &c.MinResource
			case "max", "max_resource":
				dst = &c.MaxResource
			case "eta", "reduction_factor":
				dst = &c.ReductionFactor
			case "rate", "min_early_stopping_rate":
				dst = &c.MinEarlyStoppingRate
			case "rank":
				dst = &c.Rank
			default:
				return Config{}, fmt.Errorf("pruner %q: unknown setting %q (want startup, warmup, interval, min, max, eta, rate, rank or tell)", s, k)
			}
			if n < 0 {
				return Config{}, fmt.Errorf("pruner %q: %s must not be negative", s, k)
			}
			*dst = n
		}
	}
	if err := c.Normalize(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// MedianPruner stops a trial whose best value so far is worse than the
// median of the complete trials' values at the same step (Optuna's
// MedianPruner: a PercentilePruner at 50 with n_min_trials 1).
type MedianPruner struct {
	StartupTrials int // no pruning before this many trials are complete
	WarmupSteps   int // no pruning at steps below this
	IntervalSteps int // check at the first report of each interval from WarmupSteps
}

// Prune implements Pruner.
func (p MedianPruner) Prune(s Study, cur Curve) bool {
	complete := 0
	for _, t := range s.Trials {
		if t.Complete {
			complete++
		}
	}
	if complete == 0 || complete < p.StartupTrials || len(cur.Steps) == 0 {
		return false
	}
	step := cur.LastStep()
	if step < p.WarmupSteps {
		return false
	}
	interval := max(p.IntervalSteps, 1)
	nearest := (step-p.WarmupSteps)/interval*interval + p.WarmupSteps
	secondLast := -1
	for _, st := range cur.Steps {
		if st > secondLast && st != step {
			secondLast = st
		}
	}
	if secondLast >= nearest {
		return false // not the first report in this interval
	}
	best := slices.Min(cur.Values)
	var at []float64
	for _, t := range s.Trials {
		if v, ok := t.ValueAt(step); t.Complete && ok {
			at = append(at, v)
		}
	}
	if len(at) == 0 {
		return false
	}
	return best > Percentile(at, 50)
}

// Percentile returns the q-th percentile (0 to 100) of v by linear
// interpolation between closest ranks (numpy's default); v is reordered.
func Percentile(v []float64, q float64) float64 {
	slices.Sort(v)
	pos := q / 100 * float64(len(v)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(v)-1)
	return v[lo] + (pos-float64(lo))*(v[hi]-v[lo])
}

// SuccessiveHalving is asynchronous successive halving (ASHA; Li et al.
// 2020, with Optuna's SuccessiveHalvingPruner semantics): rung r is at step
// MinResource*ReductionFactor^(MinEarlyStoppingRate+r); a trial reaching a
// rung continues only if its value there is among the best
// 1/ReductionFactor of the values every trial had on reaching that rung
// (the best one while fewer than ReductionFactor trials have).
type SuccessiveHalving struct {
	MinResource          int
	ReductionFactor      int
	MinEarlyStoppingRate int
}

// rungStep is the step of rung r.
func (p SuccessiveHalving) rungStep(r int) int {
	s := p.MinResource
	for range p.MinEarlyStoppingRate + r {
		s *= p.ReductionFactor
		if s > math.MaxInt32 {
			return math.MaxInt32
		}
	}
	return s
}

// rungValue is a trial's value at rung r: the value of its first report
// at a step at or beyond the rung's step, in report order (Optuna records
// it as the trial crosses the rung).
func (p SuccessiveHalving) rungValue(c Curve, r int) (float64, bool) {
	rs := p.rungStep(r)
	for i, s := range c.Steps {
		if s >= rs {
			return c.Values[i], true
		}
	}
	return 0, false
}

// Prune implements Pruner.
func (p SuccessiveHalving) Prune(s Study, cur Curve) bool {
	n := len(cur.Steps)
	if n == 0 {
		return false
	}
	step, value := cur.Steps[n-1], cur.Values[n-1]
	prev := Curve{Steps: cur.Steps[:n-1], Values: cur.Values[:n-1]}
	for r := 0; p.rungStep(r) <= step; r++ {
		if _, passed := p.rungValue(prev, r); passed {
			continue // crossed (and passed) at an earlier report
		}
		competing := []float64{value}
		for _, t := range s.Trials {
			if v, ok := p.rungValue(t, r); ok {
				competing = append(competing, v)
			}
		}
		idx := max(len(competing)/p.ReductionFactor-1, 0)
		slices.Sort(competing)
		if value > competing[idx] {
			return true
		}
	}
	return false
}

// HyperbandPruner runs several ASHA brackets with different early-stopping
// rates (Hyperband; Li et al. 2018, with Optuna's HyperbandPruner
// semantics): a trial joins the bracket a hash of the study's name and its
// number picks, with bracket s receiving trials in proportion to
// ceil(n·eta^(n-1-s)/(n-s)), and competes only with its bracket's trials.
type HyperbandPruner struct {
	MinResource     int
	MaxResource     int // 0: the last step + 1 of the first complete trial
	ReductionFactor int
}

// auto returns the maximum resource Optuna's "auto" setting finds, and
// s and cur without the reports made before it was found; false before
// it can be found.
func (p HyperbandPruner) auto(s Study, cur Curve) (int, Study, Curve, bool) {
	first := -1
	for _, t := range s.Trials {
		if t.Complete && (first < 0 || t.CompletedAt < first) {
			first = t.CompletedAt
		}
	}
	if first < 0 {
		return 0, s, cur, false
	}
	// The first report after that completion sets the brackets up.
	init := -1
	for _, c := range append([]Curve{cur}, s.Trials...) {
		for _, q := range c.Seq {
			if q > first && (init < 0 || q < init) {
				init = q
			}
		}
	}
	maxRes := 0
	for _, t := range s.Trials {
		if t.Complete && t.CompletedAt < init && len(t.Steps) > 0 {
			maxRes = max(maxRes, t.LastStep()+1)
		}
	}
	if maxRes == 0 {
		return 0, s, cur, false
	}
	since := func(c Curve) Curve {
		out := c
		out.Steps, out.Values, out.Seq = nil, nil, nil
		for i, q := range c.Seq {
			if q >= init {
				out.Steps = append(out.Steps, c.Steps[i])
				out.Values = append(out.Values, c.Values[i])
				out.Seq = append(out.Seq, q)
			}
		}
		return out
	}
	trimmed := Study{Name: s.Name, Trials: make([]Curve, len(s.Trials))}
	for i, t := range s.Trials {
		trimmed.Trials[i] = since(t)
	}
	return maxRes, trimmed, since(cur), true
}

// Brackets returns the trial allocation budget of each bracket for a
// given maximum resource.
func (p HyperbandPruner) Brackets(maxResource int) []int {
	n := int(math.Floor(math.Log(float64(maxResource)/float64(p.MinResource))/math.Log(float64(p.ReductionFactor)))) + 1
	n = max(n, 1)
	out := make([]int, n)
	for id := range out {
		sr := n - 1 - id
		out[id] = int(math.Ceil(float64(n) * math.Pow(float64(p.ReductionFactor), float64(sr)) / float64(sr+1)))
	}
	return out
}

// Bracket returns the bracket of trial in study name, given the
// allocation budgets (crc32 of "name_trial", as Optuna computes it).
func Bracket(name string, trial int, budgets []int) int {
	total := 0
	for _, b := range budgets {
		total += b
	}
	n := int(crc32.ChecksumIEEE([]byte(name+"_"+strconv.Itoa(trial))) % uint32(total))
	for id, b := range budgets {
		n -= b
		if n < 0 {
			return id
		}
	}
	return len(budgets) - 1
}

// Prune implements Pruner.
func (p HyperbandPruner) Prune(s Study, cur Curve) bool {
	maxRes := p.MaxResource
	if maxRes == 0 {
		// Optuna sets the brackets up at the first decision after a
		// trial completed, from the complete trials' last steps; rungs
		// crossed before then were never recorded.
		var ok bool
		if maxRes, s, cur, ok = p.auto(s, cur); !ok {
			return false
		}
	}
	budgets := p.Brackets(maxRes)
	b := Bracket(s.Name, cur.Trial, budgets)
	var mates []Curve
	for _, t := range s.Trials {
		if Bracket(s.Name, t.Trial, budgets) == b {
			mates = append(mates, t)
		}
	}
	sh := SuccessiveHalving{MinResource: p.MinResource, ReductionFactor: p.ReductionFactor, MinEarlyStoppingRate: b}
	return sh.Prune(Study{Name: s.Name, Trials: mates}, cur)
}

// CurveBound stops a trial that cannot, by the study's own curves, beat
// the best final value so far: its value at its newest step minus the
// largest improvement any complete trial made from that step to its end
// (an optimistic forecast of its final value) is still worse than the
// best final value of a complete trial. It is this package's own rule, not
// Optuna's: a trial is stopped only when even the best-improving curve seen
// would not rescue it, so it keeps a slow starter that another trial's
// curve says may still win. It does not prune at or after the complete
// trials' last step (nothing is saved there) nor at a step no complete
// trial reported.
type CurveBound struct {
	StartupTrials int // no pruning before this many trials are complete
}

// Prune implements Pruner.
func (p CurveBound) Prune(s Study, cur Curve) bool {
	n := len(cur.Steps)
	if n == 0 {
		return false
	}
	step, value := cur.Steps[n-1], cur.Values[n-1]
	complete, seen := 0, 0
	best, gain := math.Inf(1), math.Inf(-1)
	for _, t := range s.Trials {
		if !t.Complete || len(t.Steps) == 0 {
			continue
		}
		complete++
		last := t.LastStep()
		final, _ := t.ValueAt(last)
		best = math.Min(best, final)
		if v, ok := t.ValueAt(step); ok && step < last {
			gain = math.Max(gain, v-final)
			seen++
		}
	}
	if complete == 0 || complete < p.StartupTrials || seen == 0 {
		return false
	}
	return value-math.Max(gain, 0) > best
}
