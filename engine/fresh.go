package engine

import (
	"math"
	"slices"
)

// Version 12's fresh asks (Rules.FreshAsks): an ask does not return a
// configuration that already has a completed evaluation.
//
// On a space of integers and categories the candidates snap to a finite
// set of configurations (candidates.Domain's levels and one-hot groups).
// Once a noise-free fit is sure of the observed values, the UCB at an
// observed configuration is its value, and where the model's other
// candidates score lower, as on a plateau of equal cross-validation
// errors, the maximizer is the incumbent itself: a repeat that tells the
// model nothing, so the next ask is the same. Versions up to 11 asked a
// k-NN task's incumbent in 26 of a run's last 27 trials, and repeated 42%
// of all trials on that task and 18% on a random-forest task (10 seeds,
// 60 trials; Optuna's TPE 15% and 4%). Ax deduplicates its candidates
// for the same reason, and SMAC never repeats a configuration of a
// deterministic objective. Under heavy noise a repeat averages the noise,
// and the rule stands aside. Version 13 applies the same rule to a fixed
// candidate set (Rules.FreshArms), through the policy's AskFresh
// (bandit.FreshAsker).

// freshAsks reports whether this ask leaves out observed configurations.
// The records decide where they can: once a configuration's two completed
// evaluations differ the objective is noisy and repeats are asked as
// before (a repeat averages the noise); once two are equal it is taken as
// deterministic and they are not. Before any repeat, a fit that reads the
// values as heavily noisy (a noise share above noiseShareHeavy) may ask
// one, which is the test; a deterministic objective's plateaus and jumps
// (equal cross-validation errors over a range of k) read as noise of a
// share of 0.2-0.4, so the fit alone cannot tell.
func (r *refiner) freshAsks(e *Engine) bool {
	if !r.cfg.rules().FreshAsks {
		return false
	}
	rho, fitted := r.noiseShare()
	return e.refusesRepeats(rho, fitted)
}

// freshArms reports whether an ask of a fixed candidate set leaves out
// the observed arms (version 13's FreshArms), by the records and the fit
// as freshAsks does.
func (e *Engine) freshArms() bool {
	if !e.cfg.rules().FreshArms {
		return false
	}
	var rho float64
	fitted := false
	if e.hp != nil {
		rho, fitted = noiseShareOf(e.hp.NoiseVariance, e.hp.SignalVariance)
	}
	return e.refusesRepeats(rho, fitted)
}

// refusesRepeats is the records' and the fit's verdict on repeats (see
// freshAsks): the fit's noise share rho counts only while no configuration
// has two completed evaluations.
func (e *Engine) refusesRepeats(rho float64, fitted bool) bool {
	e.observe()
	switch {
	case e.repeatsDiffer:
		return false
	case e.repeatsEqual:
		return true
	}
	return !fitted || rho <= noiseShareHeavy
}

// What dropObserved did.
const (
	dropNone = iota // the best candidate is not an observed configuration
	dropSome        // the best ones were, and are scored -Inf
	dropAll         // every finite candidate is one; cs is left as it was
)

// dropObserved scores -Inf the candidates at the head of cs (sorted by
// score, best first) whose configurations (the decoded, canonical points)
// have a completed evaluation, up to the first that has none, unless no
// finite candidate is left. Only the head: the candidates further down
// stay as they were (in the pool kept for the next ask), so that an ask
// that would not have repeated is the previous version's bit for bit.
func (r *refiner) dropObserved(e *Engine, cs []cand) int {
	x := make([]float64, e.p)
	lead := 0
	for lead < len(cs) && isFinite(cs[lead].v) && e.observedConfig(x, cs[lead].x) {
		lead++
	}
	if lead == 0 {
		return dropNone
	}
	for _, c := range cs[lead:] {
		if isFinite(c.v) && !e.observedConfig(x, c.x) {
			for i := range cs[:lead] {
				cs[i].v = math.Inf(-1)
			}
			return dropSome
		}
	}
	return dropAll
}

func isFinite(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }

// observedConfig reports whether the encoded point u decodes to a
// configuration with a completed evaluation (after observe); x is scratch
// of the space's dimension.
func (e *Engine) observedConfig(x, u []float64) bool {
	e.space.Decode(x, u)
	if e.cond != nil {
		e.cond.Canonicalize(x)
	}
	a, ok := e.byX[PointKey(x)]
	return ok && a < len(e.firstObs) && e.firstObs[a] >= 0
}

// observe brings e.firstObs, e.repeatsEqual and e.repeatsDiffer up to
// e.succ, which only grows (a snapshot's load makes a new engine): the
// index in e.succ of each observed configuration's first completed
// evaluation, and whether a later one of the same configuration was equal
// to it or differed, in every value it holds. An arm is a configuration:
// the arm set holds each point once (BuildArms, ArmOf). A slice by arm,
// not a map by point: 4 bytes an arm in a study of 100,000 trials.
func (e *Engine) observe() {
	if len(e.succ) < e.observedUpTo {
		e.firstObs, e.observedUpTo, e.repeatsEqual, e.repeatsDiffer = nil, 0, false, false
	}
	for len(e.firstObs) < e.n {
		e.firstObs = append(e.firstObs, -1)
	}
	for i := e.observedUpTo; i < len(e.succ); i++ {
		o := &e.succ[i]
		j := e.firstObs[o.arm]
		if j < 0 {
			e.firstObs[o.arm] = int32(i)
			continue
		}
		switch first := &e.succ[j]; {
		case first.value == o.value && slices.Equal(first.values, o.values) && slices.Equal(first.cons, o.cons):
			e.repeatsEqual = true
		default:
			e.repeatsDiffer = true
		}
	}
	e.observedUpTo = len(e.succ)
}
