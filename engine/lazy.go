package engine

import (
	"fmt"
	"slices"
	"strings"
)

// lazyPolicies are the policies that can read only the arms that can win
// (Config.Lazy): UCB on a fixed arm set.
var lazyPolicies = []string{"bkb", "gp-ucb", "bbkb"}

// normalizeLazy checks Lazy and Eliminate: they need a UCB policy that
// scores a fixed arm set (bandit.Options.Lazy); growing candidates score
// points the refiner makes, not a finite set.
func (c *Config) normalizeLazy() error {
	if !c.Lazy && !c.Eliminate {
		return nil
	}
	if c.Eliminate && !c.Lazy {
		return fmt.Errorf("study: eliminate needs lazy")
	}
	if !slices.Contains(lazyPolicies, c.Policy) {
		return fmt.Errorf("study: lazy needs a UCB policy on a fixed arm set (%s), not policy %s", strings.Join(lazyPolicies[:len(lazyPolicies)-1], ", ")+" or "+lazyPolicies[len(lazyPolicies)-1], c.Policy)
	}
	if c.grows() {
		return fmt.Errorf("study: lazy scores a fixed arm set: use candidates %s (candidates %s makes new points)", CandidatesFixed, CandidatesGrow)
	}
	return nil
}
