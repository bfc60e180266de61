package engine

import "github.com/bkb-go/bkb/gp"

// Rules are what one configuration version does: each rule in which two
// versions differ is a named field, and a version is one full row of
// versionTable. The engine asks a study's rules (Config.rules), never its
// version number, so that a reader finds every rule of a version in one
// place and a new version is one new row. A released row is never edited:
// stored studies of that version must replay as written
// (TestVersionTableReleased checks the rows against testdata/versions.json;
// TestReplayGolden replays a journal recorded at each version).
type Rules struct {
	Version int `json:"version"`

	// Defaults of a new study (Normalize).

	// Refine allows and defaults version 2's fields: candidates that grow
	// where the optimum may be (refine.go), fitted ARD hyperparameters
	// (gp/hyper), 512 space-filling arms, an initial design of max(5, 2d)
	// and beta 2 on the GP scale. Without it: a fixed arm set of 1024, one
	// length scale, max(5, d+1) initial points.
	Refine bool `json:"refine"`
	// HorizonBeta makes the default exploration the budget-aware
	// "horizon:2" (DefaultBetaV3, horizonBeta).
	HorizonBeta bool `json:"horizon_beta"`
	// WarpByDefault makes Warp auto the default (a Box-Cox power fitted by
	// likelihood, warp.go) unless values are raw.
	WarpByDefault bool `json:"warp_by_default"`

	// The model.

	// NoiseFloor floors BKB's fitted noise variance at dtcNoiseFloorV4
	// (1e-5) rather than at Lambda (noise.go).
	NoiseFloor bool `json:"noise_floor"`
	// NoisyExploration scales the exploration by the fitted noise share
	// and, under heavy noise, alternates joint maximizations (noise.go,
	// refine.go).
	NoisyExploration bool `json:"noisy_exploration"`
	// LegacyCore keeps the numerics of versions up to 4 on near-dependent
	// points of a DTC posterior (gp.DTC.SetLegacyCore).
	LegacyCore bool `json:"legacy_core"`
	// DictionaryFromPosterior draws the dictionary at a refit from the
	// previous dictionary's posterior; without it every observed point
	// enters S at a refit (the exact posterior).
	DictionaryFromPosterior bool `json:"dictionary_from_posterior"`
	// DropNearDependent keeps near-dependent points out of the dictionary
	// (gp.DTC.SetDropNearDependent), so that a change of S never rebuilds
	// the posterior.
	DropNearDependent bool `json:"drop_near_dependent"`
	// Resparsify redraws the dictionary only when the variance gained
	// since the last draw is large (Calandriello et al. 2020, BBKB's
	// resparsification rule); without it, at every observation.
	Resparsify bool `json:"resparsify"`
	// DeadPivots drops every near-dependent point below rounding in the
	// exact core (gp.DTC.SetDeadPivots); without it their pivots are
	// floored.
	DeadPivots bool `json:"dead_pivots"`
	// LocalSteps takes local quadratic steps once a third of the budget
	// the study was created with is spent (localstep.go).
	LocalSteps bool `json:"local_steps"`
	// NoiseRobust takes version 4's dictionary rule and no warp while the
	// fitted noise is heavy (noise.go).
	NoiseRobust bool `json:"noise_robust"`
	// SingleObjectiveRules keeps the warp and the local steps out of
	// studies with constraints or several objectives (warp.go).
	SingleObjectiveRules bool `json:"single_objective_rules"`
	// WarpTestAtStart decides the warp on the initial design's skewness
	// and the first evaluations only (warp.go).
	WarpTestAtStart bool `json:"warp_test_at_start"`

	// Many parameters (docs/tuning.md, "20-100 parameters").

	// InitCap caps the default initial design at initCap points,
	// min(max(5, 2d), initCap): at 50-100 parameters max(5, 2d) random
	// points took most of a budget of 100-250 trials.
	InitCap bool `json:"init_cap"`
	// HighDimNoPolish: above highDim encoded coordinates the best
	// candidates are not polished by L-BFGS on the acquisition, so that
	// an ask is a trust-region candidate, which moves about 20 of the
	// incumbent's coordinates (TuRBO's perturbation, Eriksson et al.
	// 2019); a polish moves every coordinate, and at 100 parameters it
	// won nearly every ask.
	HighDimNoPolish bool `json:"high_dim_no_polish"`
	// HighDimFailureTol: above highDim encoded coordinates the trust
	// region halves after highDimFailureTol consecutive asks without an
	// improvement instead of TuRBO's max(4, d), so that it shrinks within
	// a budget of a few hundred trials.
	HighDimFailureTol bool `json:"high_dim_failure_tol"`

	// Noise (docs/long-studies.md, "The warp and the noise"; docs/tuning.md,
	// "The noisy Trid regression").

	// UnwarpSticky: once a fit made on warped values gives the noise more
	// than noiseShareHeavy of the variance, the study's values stay
	// unwarped (noisyUnwarped). Version 7's rule decides on the last fit
	// alone, and the fit on unwarped values then gives a light noise, so
	// the warp came back at the next refit: at 1% noise on Hartmann 6 the
	// warp switched at every refit from t = 183 on, each switch rebuilt
	// the posterior on another scale, and the dictionary grew to 772
	// points by t = 2,500.
	UnwarpSticky bool `json:"unwarp_sticky"`
	// NoisyLegacyCore builds the posterior with version 4's exact core
	// (LegacyCore) while version 7 draws the dictionary by version 4's
	// rule (noisyDictionary: heavy fitted noise, at most
	// noisyDictionaryMax observations). Version 5's core is what put
	// versions 5-9 behind version 4 on Trid 4-d at 10% noise
	// (docs/tuning.md).
	NoisyLegacyCore bool `json:"noisy_legacy_core"`

	// Long studies (docs/long-studies.md, "A local posterior late in a
	// run").

	// LateLocal: from lateStart observations on, the posterior is BKB's
	// on the lateNear observations nearest the incumbent, and the asks
	// are local (late.go), so that a late trial's cost stops growing with
	// t.
	LateLocal bool `json:"late_local"`

	// Discrete and mixed spaces (docs/tuning.md, "Version 12: no repeated
	// configurations").

	// FreshAsks: an ask of the growing candidates never returns a
	// configuration that has a completed evaluation, unless the fitted
	// noise is heavy (a noise share above noiseShareHeavy, where a repeat
	// averages the noise) or every candidate has one. On a space of
	// integers and categories the candidates snap to a finite set, and a
	// noise-free fit put the UCB's maximizer on an observed configuration
	// whose value a repeat cannot change: on one k-NN task a run evaluated
	// its incumbent 30 times in trials 31-60.
	FreshAsks bool `json:"fresh_asks"`
	// FreshArms: the same rule on a fixed candidate set (Candidates
	// fixed: arms files, grids, --candidates fixed), through the
	// policies' AskFresh (bandit.FreshAsker). Version 12 left the fixed
	// sets to the bandit's Ask, and on a deterministic objective a UCB
	// policy sure of its best arm asks it again: GP-UCB and BKB on 512
	// Sobol arms of Branin repeated 121-123 of 150 asks.
	FreshArms bool `json:"fresh_arms"`
}

// versionTable has one row per configuration version, the version's
// number minus one its index. Append a row for a new version (with its
// golden journal); never edit a row once released.
var versionTable = []Rules{
	{Version: 1, LegacyCore: true},
	{Version: 2, Refine: true, LegacyCore: true},
	{Version: 3, Refine: true, HorizonBeta: true, LegacyCore: true},
	{Version: 4, Refine: true, HorizonBeta: true, NoiseFloor: true, NoisyExploration: true, LegacyCore: true},
	{Version: 5, Refine: true, HorizonBeta: true, NoiseFloor: true, NoisyExploration: true,
		DictionaryFromPosterior: true, DropNearDependent: true, Resparsify: true, DeadPivots: true},
	{Version: 6, Refine: true, HorizonBeta: true, WarpByDefault: true, NoiseFloor: true, NoisyExploration: true,
		DictionaryFromPosterior: true, DropNearDependent: true, Resparsify: true, DeadPivots: true, LocalSteps: true},
	{Version: 7, Refine: true, HorizonBeta: true, WarpByDefault: true, NoiseFloor: true, NoisyExploration: true,
		DictionaryFromPosterior: true, DropNearDependent: true, Resparsify: true, DeadPivots: true, LocalSteps: true,
		NoiseRobust: true, SingleObjectiveRules: true},
	{Version: 8, Refine: true, HorizonBeta: true, WarpByDefault: true, NoiseFloor: true, NoisyExploration: true,
		DictionaryFromPosterior: true, DropNearDependent: true, Resparsify: true, LocalSteps: true,
		NoiseRobust: true, SingleObjectiveRules: true, WarpTestAtStart: true},
	{Version: 9, Refine: true, HorizonBeta: true, WarpByDefault: true, NoiseFloor: true, NoisyExploration: true,
		DictionaryFromPosterior: true, DropNearDependent: true, Resparsify: true, LocalSteps: true,
		NoiseRobust: true, SingleObjectiveRules: true, WarpTestAtStart: true,
		InitCap: true, HighDimNoPolish: true, HighDimFailureTol: true},
	{Version: 10, Refine: true, HorizonBeta: true, WarpByDefault: true, NoiseFloor: true, NoisyExploration: true,
		DictionaryFromPosterior: true, DropNearDependent: true, Resparsify: true, LocalSteps: true,
		NoiseRobust: true, SingleObjectiveRules: true, WarpTestAtStart: true,
		InitCap: true, HighDimNoPolish: true, HighDimFailureTol: true, UnwarpSticky: true, NoisyLegacyCore: true},
	{Version: 11, Refine: true, HorizonBeta: true, WarpByDefault: true, NoiseFloor: true, NoisyExploration: true,
		DictionaryFromPosterior: true, DropNearDependent: true, Resparsify: true, LocalSteps: true,
		NoiseRobust: true, SingleObjectiveRules: true, WarpTestAtStart: true,
		InitCap: true, HighDimNoPolish: true, HighDimFailureTol: true, UnwarpSticky: true, NoisyLegacyCore: true,
		LateLocal: true},
	{Version: 12, Refine: true, HorizonBeta: true, WarpByDefault: true, NoiseFloor: true, NoisyExploration: true,
		DictionaryFromPosterior: true, DropNearDependent: true, Resparsify: true, LocalSteps: true,
		NoiseRobust: true, SingleObjectiveRules: true, WarpTestAtStart: true,
		InitCap: true, HighDimNoPolish: true, HighDimFailureTol: true, UnwarpSticky: true, NoisyLegacyCore: true,
		LateLocal: true, FreshAsks: true},
	{Version: 13, Refine: true, HorizonBeta: true, WarpByDefault: true, NoiseFloor: true, NoisyExploration: true,
		DictionaryFromPosterior: true, DropNearDependent: true, Resparsify: true, LocalSteps: true,
		NoiseRobust: true, SingleObjectiveRules: true, WarpTestAtStart: true,
		InitCap: true, HighDimNoPolish: true, HighDimFailureTol: true, UnwarpSticky: true, NoisyLegacyCore: true,
		LateLocal: true, FreshAsks: true, FreshArms: true},
}

// VersionRules returns the rules of configuration version v (false for a
// version this build does not know).
func VersionRules(v int) (Rules, bool) {
	if v < 1 || v > len(versionTable) {
		return Rules{}, false
	}
	return versionTable[v-1], true
}

// rules returns the rules of the configuration's version (a normalized
// configuration's version is always in the table).
func (c *Config) rules() Rules {
	r, _ := VersionRules(c.Version)
	return r
}

// coreOptions are the numerics of BKB's DTC posterior that the
// configuration's version takes (gp.CoreOptions).
func (c *Config) coreOptions() gp.CoreOptions {
	r := c.rules()
	return gp.CoreOptions{LegacyCore: r.LegacyCore, DeadPivots: r.DeadPivots, DropNearDependent: r.DropNearDependent}
}
