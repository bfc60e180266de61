package bandit

import (
	"fmt"
	"math"
	"slices"
)

// join brings arm into the working set (an arm told or marked pending);
// an eliminated arm rejoins the arm set.
func (L *lazyState) join(arm int) error {
	if L.win[arm] < 0 {
		if _, err := L.add([]int{arm}); err != nil {
			return fmt.Errorf("bandit: arm %d: %w", arm, err)
		}
	}
	if L.dead[arm] {
		// A user may tell an eliminated arm: it rejoins the arm set.
		L.dead[arm] = false
		L.eliminated--
		if !slices.Contains(L.alive, arm) {
			L.alive = append(L.alive, arm)
		}
	}
	return nil
}

func (p *GP) lazyTell(arm int, y float64) error {
	L := p.lz
	if err := L.join(arm); err != nil {
		return err
	}
	w := int(L.win[arm])
	post := L.post()
	n := len(L.warm)
	if L.dtc != nil {
		// The working set before the step, for the drift a dictionary
		// change adds.
		L.keepBefore(n)
	}
	a2, a2T, err := p.lazyObserve(arm, w, y)
	if err != nil {
		return err
	}
	if L.dtc == nil {
		L.S += a2
		return nil
	}
	// M of every stamp after the observation: the bound for the next Ask
	// if S does not change, and the starting point of the arms' bounds
	// if it does.
	L.updateStamps()
	S0, D0, E0 := L.S, L.D, L.E
	changed, err := p.lazyResample()
	if err != nil {
		return fmt.Errorf("bandit: resampling after arm %d: %w", arm, err)
	}
	if !changed {
		L.S += a2
		return nil
	}
	// A step that changes S: the posterior is no longer that of a fixed
	// kernel. Carry the exact-GP part (a2T) in S and measure on the
	// working set what it does not explain: the mean's motion beyond
	// sqrt(decrease of sigma~^2) sqrt(a2T), and any increase of sigma~.
	// (The observation's pass over the working set is fused with the
	// change's: one read of its rows.)
	L.S += a2T
	means, vars := post.Means(), post.Variances()
	var dm, ds float64
	at := math.Sqrt(a2T)
	for w := range n {
		a := L.warm[w]
		s1 := math.Sqrt(math.Max(vars[w], 0))
		s0 := L.befSD[w]
		dec := math.Sqrt(math.Max(s0*s0-s1*s1, 0))
		dm = math.Max(dm, (math.Abs(means[w]-L.before[w])-dec*at)/L.pmu[a])
		ds = math.Max(ds, (s1-s0)/L.psd[a])
	}
	L.D += lazyDriftFactor * dm
	L.E += lazyDriftFactor * ds
	L.restartStamps(S0, D0, E0)
	return nil
}

// lazyTellBatch adds the observations in order, then resamples the
// dictionary once (BKB resamples after each observation, BBKB after each
// batch). With the dictionary fixed, each observation adds its squared
// normalized innovation to the running sum S (the proven part); the
// dictionary's change is then measured on the working set alone, from
// the posterior after the observations to the one after the change.
func (p *GP) lazyTellBatch(obs []toldObs) error {
	L := p.lz
	post := L.post()
	for _, o := range obs {
		arm, y := o.arm, o.y
		if err := L.join(arm); err != nil {
			return err
		}
		w := int(L.win[arm])
		a2, _, err := p.lazyObserve(arm, w, y)
		if err != nil {
			return err
		}
		L.S += a2
	}
	if L.dtc == nil {
		return nil
	}
	// M of every stamp after the observations: the bound for the next Ask
	// if S does not change, and the starting point of the arms' bounds
	// if it does.
	L.updateStamps()
	// The working set before the change, for the drift it adds.
	n := len(L.warm)
	L.keepBefore(n)
	S0, D0, E0 := L.S, L.D, L.E
	changed, err := p.lazyResample()
	if err != nil {
		return fmt.Errorf("bandit: resampling after %d observations: %w", len(obs), err)
	}
	if !changed {
		return nil
	}
	// A step that changes S: the posterior is no longer that of a fixed
	// kernel. Measure on the working set how far the change moved a mean
	// (over sqrt(k(x,x))) and raised a standard deviation (over p(x)).
	means, vars := post.Means(), post.Variances()
	var dm, ds float64
	for w := range n {
		a := L.warm[w]
		s1 := math.Sqrt(math.Max(vars[w], 0))
		dm = math.Max(dm, math.Abs(means[w]-L.before[w])/L.pmu[a])
		ds = math.Max(ds, (s1-L.befSD[w])/L.psd[a])
	}
	L.D += lazyDriftFactor * dm
	L.E += lazyDriftFactor * ds
	L.restartStamps(S0, D0, E0)
	return nil
}

// restartStamps restarts the bound of every arm cached under a stamp
// after a dictionary change, from the running sums S0, D0, E0 before it.
func (L *lazyState) restartStamps(S0, D0, E0 float64) {
	// The basis changed: the stamps' weights no longer apply. An arm
	// cached under a stamp had, before the change, mean at most
	// mu_c + s_c M and standard deviation at most s_c; with the drift of
	// the change (D - D0, E - E0) that bounds it now. Restart its bound
	// there, under a new stamp of the weights after the change.
	var k int32 = -1
	refs := 0
	for _, a := range L.alive {
		old := L.stamp[a]
		if old < 0 || L.win[a] >= 0 {
			continue
		}
		if k < 0 {
			k = L.newStamp()
		}
		L.mu[a] += L.sn[a] * L.stamps[old].m
		L.stS[a], L.stD[a], L.stE[a] = S0, D0, E0
		L.sn[a] = L.sd[a] // the split of the variance is lost with the basis
		L.unstamp(a)
		L.stamp[a] = k
		refs++
	}
	if k >= 0 {
		L.stamps[k].refs = refs
	}
}

// lazyObserve adds y at arm, working-set index w, and returns its squared
// normalized innovation a2 (exact posterior: r^2/(v + lambda); DTC with
// S fixed: r^2/(1 + z^T V^{-1} z)) and a2T, r^2/(1 + sigma~^2), the
// exact posterior's with sigma~ in place of sigma, for a step that
// changes S (lazyTell).
func (p *GP) lazyObserve(arm, w int, y float64) (a2, a2T float64, err error) {
	L := p.lz
	post := L.post()
	mean, v := post.Means()[w], math.Max(post.Variances()[w], 0)
	r := y - mean
	if L.dtc != nil {
		a2 = r * r / (1 + L.dtc.LearnedVariance(w))
		a2T = r * r / (1 + v)
	} else {
		a2 = r * r / (v + L.lam)
		p.sumVar += v
	}
	if err := post.ObserveCandidate(w, y); err != nil {
		return 0, 0, fmt.Errorf("bandit: arm %d: %w", arm, err)
	}
	p.count[arm]++
	L.rowsRead += int64(len(L.warm))
	return a2, a2T, nil
}

// keepBefore records the means and standard deviations of the first n
// arms of W, before a step, for the drift a dictionary change adds.
func (L *lazyState) keepBefore(n int) {
	means, vars := L.post().Means(), L.post().Variances()
	L.before = append(L.before[:0], means[:n]...)
	L.befSD = L.befSD[:0]
	for _, v := range vars[:n] {
		L.befSD = append(L.befSD, math.Sqrt(math.Max(v, 0)))
	}
}

// lazyResample resamples the dictionary (incremental or fresh, as the
// options say) and reports whether it changed.
func (p *GP) lazyResample() (changed bool, err error) {
	var added, removed int
	if p.opt.Incremental {
		added, removed, err = p.lz.dtc.ResampleIncremental(p.rng, p.opt.Qbar)
	} else {
		added, removed, err = p.lz.dtc.Resample(p.rng, p.opt.Qbar)
	}
	return added+removed > 0, err
}

func (L *lazyState) stats(s *Stats) {
	s.RowsRead, s.RowsComputed = L.rowsRead, L.rows
	s.WorkingSet = len(L.warm)
	s.ArmsEliminated, s.BoundViolations = L.eliminated, L.violations
}
