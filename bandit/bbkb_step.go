package bandit

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/bkb-go/bkb/acquisition"
)

// Ask returns the next arm of the current batch, opening a new batch when
// none is in progress. It returns ErrBatchFull when the batch is closed
// and some of its arms are not told yet. The first arm of all is uniform
// at random (Calandriello et al., COLT 2019, Alg. 1).
func (p *BBKB) Ask() (int, error) {
	if p.closed {
		return -1, ErrBatchFull
	}
	var arm int
	switch {
	case len(p.batch) == 0 && p.lz != nil:
		if err := p.lazyStartBatch(); err != nil {
			return -1, err
		}
		p.skipToldAtStart()
		var err error
		if p.dtc.Len() == 0 {
			arm = p.rng.IntN(p.n)
			err = p.lazyVisit(arm)
		} else {
			arm, err = p.lazySelect()
			if arm < 0 && err == nil {
				err = errors.New("bandit: every UCB is NaN, or every arm is eliminated")
			}
		}
		if err != nil {
			return -1, err
		}
	case len(p.batch) == 0:
		p.startBatch()
		p.skipToldAtStart()
		if p.dtc.Len() == 0 {
			arm = p.rng.IntN(p.n)
		} else {
			arm = acquisition.Argmax(p.ucb)
			if arm < 0 {
				return -1, errors.New("bandit: every UCB is NaN")
			}
		}
	default:
		if p.lz != nil {
			var err error
			if arm, err = p.lazySelect(); err != nil {
				return -1, err
			}
		} else {
			arm = p.selectArm()
		}
		if arm < 0 {
			// Every arm is in the batch already: close it, and if nothing
			// is left to wait for, update and open the next one.
			p.closed = true
			if p.nUntld > 0 {
				return -1, ErrBatchFull
			}
			if err := p.update(); err != nil {
				return -1, err
			}
			return p.Ask()
		}
	}
	p.batch = append(p.batch, arm)
	p.untold[arm]++
	p.nUntld++
	p.ratioBefore = p.ratio
	p.ratio += p.var0[arm]
	if (p.ratio > p.opt.Ratio && len(p.batch) >= p.opt.MinBatch) || (p.opt.MaxBatch > 0 && len(p.batch) >= p.opt.MaxBatch) {
		p.closed = true
	} else if err := p.afterChoice(arm); err != nil {
		return -1, err
	} else if p.fresh {
		// A fresh batch holds an arm once (Options.Distinct's rule): it
		// is told, or pending, before the batch ends.
		p.ucb[arm] = math.Inf(-1)
	}
	return arm, nil
}

// Tell records reward y at arm. A told arm of the batch waits for the
// batch update, which happens when the batch is closed and all its arms
// are told.
func (p *BBKB) Tell(arm int, y float64) error {
	if err := checkReward(arm, p.n, y); err != nil {
		return err
	}
	switch {
	case p.untold[arm] > 0:
		p.untold[arm]--
		p.nUntld--
		p.told = append(p.told, toldObs{arm, y})
		if p.closed && p.nUntld == 0 {
			return p.update()
		}
		return nil
	case len(p.batch) > 0:
		if p.lz != nil && p.ver[arm] < 0 {
			// Its batch-start variance enters logdet at the update.
			if err := p.lazyVisit(arm); err != nil {
				return err
			}
		}
		p.extra = append(p.extra, toldObs{arm, y})
		return nil
	case p.lz != nil:
		if err := p.lz.lz.join(arm); err != nil {
			return err
		}
		p.logdet += math.Log1p(p.dtc.Variances()[p.lz.lz.win[arm]])
		return p.lazyObserve([]toldObs{{arm, y}})
	default:
		p.logdet += math.Log1p(p.dtc.Variances()[arm])
		if err := p.observe(arm, y); err != nil {
			return err
		}
		return p.resample()
	}
}

// EndBatch closes the current batch to new arms: the next Ask returns
// ErrBatchFull until its arms are told. If they all are already, the
// posterior is updated now. It does nothing between batches.
func (p *BBKB) EndBatch() error {
	if len(p.batch) == 0 {
		return nil
	}
	p.closed = true
	if p.nUntld == 0 {
		return p.update()
	}
	return nil
}

// update adds the batch's observations, accumulates logdet with the
// stale variances (the authors' "old variance estimate as overestimate")
// and resparsifies once.
func (p *BBKB) update() error {
	for _, a := range p.batch {
		p.logdet += math.Log1p(p.var0[a])
	}
	for _, o := range p.extra {
		p.logdet += math.Log1p(p.var0[o.arm])
	}
	if p.lz != nil {
		obs := append(append([]toldObs(nil), p.told...), p.extra...)
		if err := p.lazyObserve(obs); err != nil {
			return err
		}
	} else {
		for _, list := range [][]toldObs{p.told, p.extra} {
			for _, o := range list {
				if err := p.observe(o.arm, o.y); err != nil {
					return err
				}
			}
		}
	}
	p.stats.Batches++
	p.stats.Arms += len(p.batch)
	p.stats.MaxBatchSize = max(p.stats.MaxBatchSize, len(p.batch))
	p.stats.MaxRatio = max(p.stats.MaxRatio, p.ratioBefore)
	p.batch, p.told, p.extra = p.batch[:0], p.told[:0], p.extra[:0]
	p.closed = false
	if p.lz != nil {
		return nil // lazyObserve resampled
	}
	return p.resample()
}

func (p *BBKB) resample() error {
	var err error
	if p.opt.Incremental {
		_, _, err = p.dtc.ResampleIncremental(p.rng, p.opt.Qbar)
	} else {
		_, _, err = p.dtc.Resample(p.rng, p.opt.Qbar)
	}
	if err != nil {
		return fmt.Errorf("bandit: BBKB resampling: %w", err)
	}
	if p.dtc.DictionaryChanges() != p.changes {
		p.built = false
	}
	return nil
}

// FantasyVariances writes the fantasized variance sigma~^2 (1/lambda
// scale) of every arm given the current batch into dst (length A),
// recomputing all of them; between batches it writes the posterior's.
func (p *BBKB) FantasyVariances(dst []float64) error {
	if len(dst) != p.n {
		return fmt.Errorf("bandit: destination has length %d, want %d", len(dst), p.n)
	}
	if len(p.batch) == 0 && p.lz == nil {
		copy(dst, p.dtc.Variances())
		return nil
	}
	if p.lz != nil && len(p.batch) == 0 {
		for i := range dst {
			_, v, err := p.lz.lazyPredict(i)
			if err != nil {
				return err
			}
			dst[i] = v
		}
		return nil
	}
	// Variances of the fantasies applied so far; a closed batch's last
	// arm is not fantasized (no further choice needs it), so apply it on a
	// copy of the state.
	k := len(p.dd)
	if err := p.ensureBasis(); err != nil {
		return err
	}
	if k < len(p.batch) {
		for _, a := range p.batch[k:] {
			if err := p.fantasize(a); err != nil {
				return err
			}
		}
	}
	var zbuf []float64
	for i := range dst {
		v := p.var0[i]
		var z []float64
		if p.lz != nil && p.ver[i] < 0 {
			// Not visited (lazy): its batch-start variance and embedding,
			// computed without joining the working set.
			var err error
			if _, v, err = p.lz.lazyPredict(i); err != nil {
				return err
			}
			if p.m > 0 {
				zbuf = slices.Grow(zbuf[:0], p.m)[:p.m]
				p.ny.Embed(zbuf, p.arms.RawRowView(i))
				z = zbuf
			}
		} else if p.m > 0 {
			z = p.embed(i)
		}
		if p.m > 0 {
			for j := 0; j < len(p.dd); j++ {
				s := dotv(z, p.g[j*p.m:(j+1)*p.m])
				v -= s * s / p.dd[j]
			}
		}
		dst[i] = math.Max(v, 0)
	}
	p.g, p.dd = p.g[:k*p.m], p.dd[:k]
	return nil
}

func dotv(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}
