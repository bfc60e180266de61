package engine

import (
	"errors"
	"slices"
)

// testStudy drives an Engine as package study does, without storage:
// an ask is the engine's suggestion registered as pending (the stored ask
// record the study commits is not applied again), a tell an applied tell
// event. The engine's tests read its state between asks.
type testStudy struct {
	cfg  Config
	eng  *Engine
	next int
	arms map[int]int
	xs   map[int][]float64
}

// testTrial is a trial the testStudy handed out.
type testTrial struct {
	Number, Arm int
	X           []float64
	Params      Params
}

var errTestComplete = errors.New("study is complete")

func newTestStudy(cfg Config) (*testStudy, error) {
	if err := cfg.Normalize(); err != nil {
		return nil, err
	}
	s := &testStudy{cfg: cfg, arms: map[int]int{}, xs: map[int][]float64{}}
	e, err := New(&s.cfg)
	if err != nil {
		return nil, err
	}
	s.eng = e
	return s, nil
}

func (s *testStudy) Ask() (*testTrial, error) {
	if s.cfg.Budget > 0 && s.next >= s.cfg.Budget {
		return nil, errTestComplete
	}
	arm, err := s.eng.Suggest()
	if err != nil {
		return nil, err
	}
	t := s.next
	s.next++
	s.eng.SetPending(t, arm)
	x := slices.Clone(s.eng.Point(arm))
	s.arms[t], s.xs[t] = arm, x
	return &testTrial{Number: t, Arm: arm, X: x, Params: s.cfg.Space.ParamsOf(x)}, nil
}

func (s *testStudy) TellOutcome(trial int, v float64, values, cons []float64) error {
	if len(values) > 0 {
		v = values[0]
	}
	return s.eng.Apply(Event{Kind: KindTell, Trial: trial, Arm: s.arms[trial], X: s.xs[trial], Y: &v, Values: values, Constraints: cons})
}

func (s *testStudy) Tell(trial int, v float64) error { return s.TellOutcome(trial, v, nil, nil) }

// Optimize asks and tells f's values n times (0: until the budget).
func (s *testStudy) Optimize(f func(*testTrial) (float64, error), n int) error {
	for i := 0; n == 0 || i < n; i++ {
		tr, err := s.Ask()
		if errors.Is(err, errTestComplete) {
			return nil
		}
		if err != nil {
			return err
		}
		v, err := f(tr)
		if err != nil {
			return err
		}
		if err := s.Tell(tr.Number, v); err != nil {
			return err
		}
	}
	return nil
}
