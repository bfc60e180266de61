package bandit

import "fmt"

// MarkPending records arm as pending, as if Ask had returned it: a UCB
// policy conditions its variances on it and never asks for it while it is
// pending. A study uses it for points it hands out itself (enqueued
// points, trials re-asked after their worker stopped) and for failed
// evaluations, whose arm stays pending. Marking a pending arm again does
// nothing.
func (p *GP) MarkPending(arm int) error {
	if arm < 0 || arm >= p.arms {
		return errArmRange(arm, p.arms)
	}
	for _, a := range p.pending {
		if a == arm {
			return nil
		}
	}
	if p.lz != nil {
		// A lazy policy keeps its pending arms in the working set (their
		// rows condition the variances); an eliminated arm marked pending
		// rejoins the arm set, as when it is told.
		if err := p.lz.join(arm); err != nil {
			return err
		}
	}
	p.pending = append(p.pending, arm)
	return nil
}

// MarkPending does nothing for random search, which keeps no state.
func (r *Random) MarkPending(arm int) error {
	if arm < 0 || arm >= r.arms {
		return errArmRange(arm, r.arms)
	}
	return nil
}

func errArmRange(arm, n int) error {
	return fmt.Errorf("bandit: arm %d out of range [0,%d)", arm, n)
}
