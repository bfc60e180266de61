package bandit

import "math"

// FreshAsker is a policy that can ask for an arm it has not been told a
// reward for. An optimizer on a finite arm set with a deterministic
// objective learns nothing from a second evaluation of an arm, and a UCB
// policy whose posterior is sure of its best arm asks that arm again and
// again: GP-UCB on 512 Sobol arms of Branin, 150 asks, repeats 123 of them.
// The bandit setting of Srinivas et al. (2010) and Calandriello et al.
// (2019) has noisy rewards, where a repeat averages the noise and is part
// of the regret bound; whether repeats can help is the caller's to decide
// (the engine reads it from its records), so the policies keep Ask as it
// was and add AskFresh.
type FreshAsker interface {
	// AskFresh is Ask with every arm that has a told reward left out,
	// unless no other arm is left to ask (every arm is told, pending or
	// excluded): then it is Ask. Where Ask's choice has no told reward,
	// AskFresh returns the same arm.
	AskFresh() (arm int, err error)
}

var (
	_ FreshAsker = (*GP)(nil)
	_ FreshAsker = (*BBKB)(nil)
	_ FreshAsker = (*Random)(nil)
)

// skipTold scores -Inf every arm with a told reward, unless no arm without
// one has a finite score (then it leaves scores as they are).
func skipTold(scores []float64, told func(arm int) bool) {
	left := false
	for a, s := range scores {
		if !told(a) && !math.IsInf(s, -1) && !math.IsNaN(s) {
			left = true
			break
		}
	}
	if !left {
		return
	}
	for a := range scores {
		if told(a) {
			scores[a] = math.Inf(-1)
		}
	}
}

// AskFresh is Ask leaving out the arms with a told reward (FreshAsker).
func (p *GP) AskFresh() (int, error) {
	p.fresh = true
	defer func() { p.fresh = false }()
	return p.Ask()
}

// told reports whether arm has a told reward.
func (p *GP) told(arm int) bool { return p.count[arm] > 0 }

// AskFresh is Ask leaving out the arms with a told reward (FreshAsker).
// A batch leaves them out from its start: a batch opened by Ask keeps
// them until it ends.
func (p *BBKB) AskFresh() (int, error) {
	p.fresh = true
	defer func() { p.fresh = false }()
	return p.Ask()
}

// skipToldAtStart scores -Inf, at a batch's start, the arms with a told
// reward (when AskFresh opened the batch). refresh keeps a -Inf score, so
// they stay out of the batch.
func (p *BBKB) skipToldAtStart() {
	if !p.fresh {
		return
	}
	if p.lz != nil {
		skipTold(p.ucb, func(a int) bool { return p.lz.count[a] > 0 })
		return
	}
	skipTold(p.ucb, func(a int) bool { return p.dtc.Count(a) > 0 })
}

// AskFresh is a uniformly random arm without a told reward (any arm once
// every arm has one). It draws as Ask does and draws again while the arm
// drawn has a told reward, so that it returns Ask's arm where Ask's has
// none.
func (r *Random) AskFresh() (int, error) {
	if r.nTold >= r.arms {
		return r.Ask()
	}
	for {
		if a := r.rng.IntN(r.arms); !r.told[a] {
			return a, nil
		}
	}
}
