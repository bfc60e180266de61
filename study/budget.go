package study

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/bkb-go/bkb/storage"
)

// BudgetAttr is the study attribute (storage.Attributes, trial -1) that
// holds the budget a study was extended to after its creation. The stored
// configuration keeps the creation budget, which the engine's rules read
// (a replay depends only on what was stored when each trial was asked);
// the extended budget is the one in force for every door: Load, the
// command line's status and studies, the server.
const BudgetAttr = "bkb.budget"

// StoredBudget returns the budget the study name was extended to (see
// Extend), 0 when it was not extended or st keeps no attributes.
func StoredBudget(ctx context.Context, st storage.Storage, name string) (int, error) {
	at, ok := storage.As[storage.Attributes](st)
	if !ok {
		return 0, nil
	}
	attrs, err := at.Attrs(ctx, name)
	if err != nil {
		return 0, err
	}
	for _, a := range attrs {
		if a.Trial == -1 && a.Key == BudgetAttr {
			var b int
			if json.Unmarshal(a.Value, &b) == nil && b > 0 {
				return b, nil
			}
		}
	}
	return 0, nil
}

// ErrNoAttributes is returned by Extend on a storage that keeps no
// attributes, where an extended budget is kept.
var ErrNoAttributes = errors.New("this storage keeps no attributes, where an extended budget is kept")

// Extend raises the study's budget to budget, durably: every process
// that loads the study afterwards (a worker, a resumed run, the server,
// bkb status) has that budget. It must be at least the number of trials
// the study has.
func (s *Study) Extend(ctx context.Context, budget int) error {
	s.mu.Lock()
	n := s.nextTrial()
	s.mu.Unlock()
	if budget < max(n, 1) {
		return fmt.Errorf("study %s: budget %d: want at least the %d trials the study has (and at least 1)", s.name, budget, n)
	}
	at, ok := storage.As[storage.Attributes](s.st)
	if !ok {
		return fmt.Errorf("study %s: %w", s.name, ErrNoAttributes)
	}
	v, _ := json.Marshal(budget)
	if err := at.SetAttr(ctx, s.name, storage.Attr{Trial: -1, Key: BudgetAttr, Value: v}); err != nil {
		return err
	}
	s.mu.Lock()
	s.cfg.Budget = budget
	s.mu.Unlock()
	return nil
}
