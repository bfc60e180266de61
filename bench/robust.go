package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/bkb-go/bkb/objectives"
)

// The held-out suite of docs/robust.md: standard test functions that no
// default was chosen on (objectives/heldout.go), split into a tuning half,
// on which the output warp's constants were checked, and a held-out half,
// on which the figures are reported. Budgets follow the problem's
// dimension: 100 and 300 trials for d <= 4, 200 and 500 above.
var (
	RobustTune = []string{"goldsteinprice:100/300", "threehumpcamel:100/300", "matyas:100/300",
		"colville:100/300", "zakharov:4:100/300", "rastrigin:3:100/300"}
	RobustHeldOut = []string{"beale:100/300", "booth:100/300", "mccormick:100/300",
		"dixonprice:4:100/300", "powell:100/300", "sumsquares:4:100/300", "trid:4:100/300"}
)

// RobustSuite returns the problems of a half of the suite, "tune" or
// "heldout".
func RobustSuite(half string) ([]string, error) {
	switch half {
	case "tune":
		return slices.Clone(RobustTune), nil
	case "heldout", "held-out":
		return slices.Clone(RobustHeldOut), nil
	}
	return nil, fmt.Errorf("bench: suite %q (want tune or heldout)", half)
}

// WideRatio is the ratio of a function's range over its box to the median
// of f - min over the box (16,384 Sobol points, seed 1): large when a few
// huge values dominate the values' spread. WideThreshold is the ratio from
// which the suite counts a function's values as spanning a wide range.
func WideRatio(f *objectives.Function) float64 {
	pts, err := objectives.Sobol(f.Domain(), 16384, 1)
	if err != nil {
		return math.NaN()
	}
	n, _ := pts.Dims()
	v := make([]float64, n)
	for i := range v {
		v[i] = f.Value(pts.RawRowView(i)) - f.MinValue
	}
	return (slices.Max(v)) / Median(v)
}

// WideThreshold: see WideRatio.
const WideThreshold = 20

// Resolution is the least simple regret that float64 coordinates can
// tell from 0: Range(f) (16 eps)^2. Near a minimum f - min is about
// Range(f) (dx/w)^2 for a step dx on a box of width w, and a point known
// to 16 ulps of its coordinates (dx/w about 16 eps) leaves a gap of that
// order, so two runs at 1e-28 and 1e-30 on a function of range 1e3 have
// both found the minimum to the precision of their arguments.
func Resolution(f *objectives.Function) float64 {
	const e = 16 * 0x1p-52
	return Range(f) * e * e
}

// peerRun is one line of a peer driver's output
// (bench/peers/optuna_suite.py).
type peerRun struct {
	Peer        string    `json:"peer"`
	Problem     string    `json:"problem"`
	Seed        uint64    `json:"seed"`
	Checkpoints []int     `json:"checkpoints"`
	Simple      []float64 `json:"simple"`
	Cum         []float64 `json:"cum"`
	CPUMS       float64   `json:"cpu_ms_per_trial"`
}

// ReadPeerRuns reads the JSON lines a peer driver wrote, one run per line,
// as RegretRuns (Variant the peer's name, Problem "name:dim").
func ReadPeerRuns(r io.Reader) ([]RegretRun, error) {
	var out []RegretRun
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		var p peerRun
		if err := json.Unmarshal([]byte(s), &p); err != nil {
			return nil, fmt.Errorf("bench: peer runs line %d: %v", line, err)
		}
		if p.Peer == "" || p.Problem == "" || len(p.Checkpoints) == 0 || len(p.Simple) != len(p.Checkpoints) || len(p.Cum) != len(p.Checkpoints) {
			return nil, fmt.Errorf("bench: peer runs line %d: want peer, problem, and as many simple and cum values as checkpoints", line)
		}
		out = append(out, RegretRun{Problem: p.Problem, Variant: p.Peer, Seed: p.Seed, Checkpoints: p.Checkpoints,
			Simple: p.Simple, Cum: p.Cum, CPUMS: p.CPUMS})
	}
	return out, sc.Err()
}

// SuiteSummary is the verdict of one (problem, T) row of the suite.
type SuiteSummary struct {
	Problem string
	T       int
	Wide    bool
	// Medians of the simple regret by optimizer.
	Medians map[string]float64
	// BestPeer is the peer of least median, P the two-sided Mann-Whitney
	// p-value of Ours against it.
	BestPeer string
	P        float64
	// Win: Ours has the least median of all the optimizers compared.
	Win bool
}

// WriteSuiteMarkdown writes one row per (problem, T): the median simple
// regret of every optimizer, ours against the best peer (by median) with
// the p-value, and a last line counting the rows ours wins, the rows
// where a peer is better with p < 0.01 on a wide-range function, and the
// rows where ours' median at the larger budget is worse than at the
// smaller. Peers are the variants named in peers (none: those named
// "optuna-..."); ours is the variant named ours. A regret below the
// problem's resolution (Resolution; 0 where the map has none) counts as 0.
func WriteSuiteMarkdown(w io.Writer, runs []RegretRun, ours string, peers []string, wide map[string]bool, resolution map[string]float64) ([]SuiteSummary, error) {
	isPeer := func(v string) bool {
		if len(peers) == 0 {
			return strings.HasPrefix(v, "optuna-")
		}
		return slices.Contains(peers, v)
	}
	type key struct {
		prob string
		t    int
	}
	var keys []key
	var variants []string
	at := map[key]map[string][]float64{}
	for _, r := range runs {
		if !slices.Contains(variants, r.Variant) {
			variants = append(variants, r.Variant)
		}
		for k, t := range r.Checkpoints {
			kk := key{r.Problem, t}
			if at[kk] == nil {
				at[kk] = map[string][]float64{}
				keys = append(keys, kk)
			}
			// A gap below 0 is the rounding of f near its minimum, one
			// below the resolution the float64 precision of x.
			g := r.Simple[k]
			if g < resolution[r.Problem] {
				g = 0
			}
			at[kk][r.Variant] = append(at[kk][r.Variant], math.Max(g, 0))
		}
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		if c := strings.Compare(a.prob, b.prob); c != 0 {
			return c
		}
		return a.t - b.t
	})
	fmt.Fprintf(w, "| problem | T | wide |")
	for _, v := range variants {
		fmt.Fprintf(w, " %s |", v)
	}
	fmt.Fprintf(w, " best peer | p (%s vs best peer) | %s best |\n|---|---:|---|", ours, ours)
	for range variants {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w, "---|---:|---|")
	var out []SuiteSummary
	prevMedian := map[string]float64{}
	wins, rows, bad, worse := 0, 0, 0, 0
	for _, kk := range keys {
		s := SuiteSummary{Problem: kk.prob, T: kk.t, Wide: wide[kk.prob], Medians: map[string]float64{}, P: math.NaN()}
		fmt.Fprintf(w, "| %s | %d | %v |", kk.prob, kk.t, s.Wide)
		for _, v := range variants {
			if vals := at[kk][v]; len(vals) > 0 {
				s.Medians[v] = Median(vals)
				fmt.Fprintf(w, " %.3g |", s.Medians[v])
			} else {
				fmt.Fprint(w, " |")
			}
		}
		bestPeer := math.Inf(1)
		for _, v := range variants {
			if m, ok := s.Medians[v]; ok && isPeer(v) && m < bestPeer {
				s.BestPeer, bestPeer = v, m
			}
		}
		mo, ok := s.Medians[ours]
		if ok && s.BestPeer != "" {
			if _, p, err := MannWhitney(at[kk][ours], at[kk][s.BestPeer]); err == nil {
				s.P = p
			}
			s.Win = mo <= bestPeer
			rows++
			if s.Win {
				wins++
			}
			if s.Wide && bestPeer < mo && s.P < 0.01 {
				bad++
			}
		}
		if pm, ok2 := prevMedian[kk.prob]; ok2 && ok && mo > pm {
			worse++
		}
		if ok {
			prevMedian[kk.prob] = mo
		}
		fmt.Fprintf(w, " %s | %.2g | %v |\n", s.BestPeer, s.P, s.Win)
		out = append(out, s)
	}
	_, err := fmt.Fprintf(w, "\n%s has the least median on %d of %d rows; rows where a peer is better with p < 0.01 on a wide-range function: %d; rows where its median at the larger budget is worse than at the smaller: %d.\n",
		ours, wins, rows, bad, worse)
	return out, err
}
