package study

// Release says that the evaluation of a pending trial this Study handed
// out was abandoned: its evaluator (a client of `bkb serve`, which asks
// for many clients through one Study) is gone. Once the storage reports
// the trial stale, Ask treats it as another worker's stale trial (hands it
// out again, or fails it, by Options.Stale) instead of leaving it to this
// process. A trial this Study did not hand out, or no longer pending, is
// left as it is.
func (s *Study) Release(trial int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.started, trial)
}
