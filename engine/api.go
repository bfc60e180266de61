package engine

import (
	"io"
	"strings"

	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/gp/hyper"
	"github.com/bkb-go/bkb/internal/snapenc"
)

// The engine's face to package study: the Study keeps the records and
// the storage, the Engine the model, and they meet here.

// Suggest returns the next arm and marks it pending in the policy.
func (e *Engine) Suggest() (int, error) { return e.suggest() }

// Point returns the values of arm i (one per parameter).
func (e *Engine) Point(i int) []float64 { return e.point(i) }

// ArmOf returns the arm of the point x, adding it to the candidates if it
// is new.
func (e *Engine) ArmOf(x []float64) (int, error) { return e.armOf(x) }

// SetPending registers trial as pending at arm (an ask about to be
// stored, so that applying it is a re-ask).
func (e *Engine) SetPending(trial, arm int) { e.pending[trial] = arm }

// Arms returns the candidate set's points, row-major (Dims: n x p).
func (e *Engine) Arms() (vals []float64, n, p int) { return e.vals[:e.n*e.p], e.n, e.p }

// PolicySeconds is the time spent in the policy (asks, tells, fits).
func (e *Engine) PolicySeconds() float64 { return e.policySeconds }

// SetForecast sets the forecast of a pruned trial's final value (the
// pruner's tell=forecast).
func (e *Engine) SetForecast(f func(trial int) (float64, bool)) { e.forecast = f }

// Snapshotable reports whether the engine's state can be encoded.
func (e *Engine) Snapshotable() bool { return e.snapshotable() }

// Meta returns the readable part of a snapshot covering records records.
func (e *Engine) Meta(records int) SnapshotMeta { return e.meta(records) }

// Encode writes the engine's state.
func (e *Engine) Encode(w *snapenc.Writer) error { return e.encode(w) }

// Stats returns the policy's statistics.
func (e *Engine) Stats() bandit.Stats { return e.stats() }

// WarpInfo returns the warp of the values, nil without one.
func (e *Engine) WarpInfo() *Warp { return e.warpInfo() }

// LengthScale returns the kernel's (geometric mean) length scale.
func (e *Engine) LengthScale() float64 { return e.lengthScale }

// Ignored counts the stored values beyond ±MaxAbsValue.
func (e *Engine) Ignored() int { return e.ignored }

// Fits returns the hyperparameter fits.
func (e *Engine) Fits() []FitResult { return e.fits }

// Diverged counts the asks whose arm differs from the engine's choice.
func (e *Engine) Diverged() int { return e.diverged }

// BatchSize returns the average size of the completed batches of a
// batched policy over its rebuilds; false for other policies.
func (e *Engine) BatchSize() (float64, bool) {
	b, ok := e.policy.(interface{ BatchStats() bandit.BatchStats })
	if !ok {
		return 0, false
	}
	st := b.BatchStats()
	if n := st.Batches + e.batches; n > 0 {
		return float64(st.Arms+e.batchArms) / float64(n), true
	}
	return 0, true
}

// CheckOutcome checks a trial's outcome against the configuration and
// returns the value to store.
func (c *Config) CheckOutcome(trial int, value float64, values, cons []float64) (float64, error) {
	return c.checkOutcome(trial, value, values, cons)
}

// Tradeoffs reports whether the study has constraints or several
// objectives.
func (c *Config) Tradeoffs() bool { return c.tradeoffs() }

// MultiObjective reports whether the study has several objectives.
func (c *Config) MultiObjective() bool { return c.multiObjective() }

// StoredTradeoffDefaults fills the defaults of a configuration stored
// before the several-objective acquisition existed.
func (c *Config) StoredTradeoffDefaults() { c.storedTradeoffDefaults() }

// IsOutcomeError reports whether err is an outcome that does not fit the
// study.
func IsOutcomeError(err error) bool {
	_, ok := err.(outcomeError)
	return ok
}

// Snapshot saving (the study's rule): a save is due when the policy time
// since the newest snapshot is SnapshotEvery times what a save costs (at
// least FirstSaveCost before one was measured); SnapshotLayout is the
// layout of the snapshots this build writes.
const (
	SnapshotEvery  = snapshotEvery
	FirstSaveCost  = firstSaveCost
	SnapshotLayout = snapshotLayout
)

// ReadCSV parses points, with withValue a last column of values (see
// readCSV).
func ReadCSV(r io.Reader, sp Space, name string, withValue bool) ([]CSVRow, error) {
	return readCSV(r, sp, name, withValue)
}

// TrimStudy drops the package prefix of an error message, for messages
// that add their own context.
func TrimStudy(err error) string { return strings.TrimPrefix(err.Error(), "study: ") }

// Family returns the gp/hyper family of the kernel's ARD fits (an error
// for kernels without one).
func (c *Config) Family() (hyper.Family, error) { return c.family() }

// PointKey is a map key of a point's exact values.
func PointKey(x []float64) string { return pointKey(x) }

// Active reports whether the warp transforms the values (a Box-Cox power).
func (w *Warp) Active() bool { return w.active() }

// BranchEvery is the share of branch asks in a conditional space: one in
// BranchEvery (refine.go).
const BranchEvery = branchEvery

// NoiseShareHeavy is the fitted noise share (noise over noise plus signal
// variance) above which the noise rules of version 7 apply (noise.go).
const NoiseShareHeavy = noiseShareHeavy

// NoiseShare returns the fitted noise share of the growing candidates'
// model; false before a fit or without one.
func (e *Engine) NoiseShare() (float64, bool) {
	if e.ref == nil {
		return 0, false
	}
	return e.ref.noiseShare()
}

// Sampled reports whether the growing candidates' last ask maximized a
// joint posterior sample (version 4's Thompson asks under heavy noise).
func (e *Engine) Sampled() bool { return e.ref != nil && e.ref.sample != nil }
