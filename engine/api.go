package engine

import (
	"github.com/bkb-go/bkb/bandit"
)

// The engine's face to package study: the Study keeps the records and
// the storage, the Engine the model, and they meet here.

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

// SetSeconds sets how the engine reads a completed trial's evaluation
// seconds, as its tell record holds them (Config.CostAware).
func (e *Engine) SetSeconds(f func(trial int) float64) { e.secondsOf = f }

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
