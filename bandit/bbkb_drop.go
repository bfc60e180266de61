package bandit

// Drop takes one untold occurrence of arm out of the current batch: its
// evaluation failed and will never be told, so the batch must not wait for
// it. When that was the last arm the closed batch waited for, the
// posterior is updated now. Dropping an arm that is not awaited does
// nothing. (The arm's stale variance still counts in the batch's logdet,
// an over-estimate that keeps the beta valid.)
func (p *BBKB) Drop(arm int) error {
	if arm < 0 || arm >= p.n {
		return errArmRange(arm, p.n)
	}
	if p.untold[arm] == 0 {
		return nil
	}
	p.untold[arm]--
	p.nUntld--
	if p.closed && p.nUntld == 0 {
		return p.update()
	}
	return nil
}
