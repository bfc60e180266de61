// Command peerbkb runs this project's BKB on an arm-set CSV with the
// settings of the authors' batch-bkb peer script
// (/work/shared/peers/batch_bkb_peer.py), so that the two can be run side
// by side, alternating, single-threaded (GOMAXPROCS=1), and compared:
// same arms, same RBF kernel, lambda = noise^2, qbar, and the batch-bkb
// beta (acquisition.BatchBKB with F = fnorm, Delta = delta, Xi = noise);
// two random arms are told first and not counted in T, as the peer does.
// It prints one JSON object with the same fields as the peer's.
//
// Usage: peerbkb -arms arms.csv -T 500 -seed 1 [-incremental] [-lazy] [-lengthscale 0.2] [-noise 0.1] [-qbar 2]
package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/acquisition"
	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/internal/cputime"
	"github.com/bkb-go/bkb/kernel"
)

func main() {
	path := flag.String("arms", "", "arm-set CSV: features, then the noise-free reward")
	T := flag.Int("T", 500, "steps")
	seed := flag.Uint64("seed", 1, "seed")
	inc := flag.Bool("incremental", false, "incremental (coupled-threshold) resampling instead of a fresh draw")
	lazy := flag.Bool("lazy", false, "lazy UCB: read only the arms whose UCB bound reaches the best (bandit.Options.Lazy)")
	after := flag.Bool("leverage-after", false, "inclusion probabilities from the variances after the newest observation")
	ls := flag.Float64("lengthscale", 0.2, "RBF length scale")
	noise := flag.Float64("noise", 0.1, "noise standard deviation (lambda = noise^2)")
	qbar := flag.Float64("qbar", 2, "oversampling qbar")
	fnorm := flag.Float64("fnorm", 1, "F of the batch-bkb beta")
	delta := flag.Float64("delta", 0.5, "delta of the batch-bkb beta")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.Parse()
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			fmt.Fprintln(os.Stderr, "peerbkb:", err)
			os.Exit(1)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if err := run(*path, *T, *seed, *inc, *lazy, *after, *ls, *noise, *qbar, *fnorm, *delta); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "peerbkb:", err)
		os.Exit(1)
	}
}

func cpuSeconds() float64 {
	d, _ := cputime.Process()
	return d.Seconds()
}

func run(path string, T int, seed uint64, inc, lazy, after bool, ls, noise, qbar, fnorm, delta float64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		return err
	}
	if len(recs) == 0 || len(recs[0]) < 2 {
		return fmt.Errorf("%s: no arms (want features then a reward per line)", path)
	}
	a, d := len(recs), len(recs[0])-1
	arms := mat.NewDense(a, d, nil)
	score := make([]float64, a)
	best := math.Inf(-1)
	for i, r := range recs {
		for j := 0; j <= d; j++ {
			v, err := strconv.ParseFloat(r[j], 64)
			if err != nil {
				return fmt.Errorf("line %d: %w", i+1, err)
			}
			if j < d {
				arms.Set(i, j, v)
			} else {
				score[i] = v
			}
		}
		best = math.Max(best, score[i])
	}
	lambda := noise * noise
	p, err := bandit.NewBKB(arms, bandit.Options{Kernel: kernel.RBF{LengthScale: ls}, Lambda: lambda,
		Beta: acquisition.BatchBKB{F: fnorm, Delta: delta, Xi: noise}, Qbar: qbar, Incremental: inc, Seed: seed, PaperScale: true, Lazy: lazy})
	if err != nil {
		return err
	}
	g := p.Posterior().(*gp.DTC)
	g.SetLeverageAfterObservation(after)
	rng := rand.New(rand.NewPCG(seed, 99))
	t0, c0 := time.Now(), cpuSeconds()
	for _, i := range rng.Perm(a)[:2] {
		if err := p.Tell(i, score[i]+noise*rng.NormFloat64()); err != nil {
			return err
		}
	}
	var cum, simple float64 = 0, math.Inf(1)
	var curve []float64
	for t := 1; t <= T; t++ {
		i, err := p.Ask()
		if err != nil {
			return err
		}
		if err := p.Tell(i, score[i]+noise*rng.NormFloat64()); err != nil {
			return err
		}
		cum += best - score[i]
		simple = math.Min(simple, best-score[i])
		if t%50 == 0 {
			curve = append(curve, math.Round(cum*1e6)/1e6)
		}
	}
	el, cpu := time.Since(t0).Seconds(), cpuSeconds()-c0
	st := p.Stats()
	mode := "fresh"
	if inc {
		mode = "incremental"
	}
	if lazy {
		mode += "-lazy"
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"peer": "bkb-go", "policy": "BKB-" + mode, "A": a, "T": T, "seed": seed,
		"cum_regret": cum, "simple_regret": simple, "dict_size": st.DictionarySize, "changes": st.DictionaryChanges,
		"seconds": el, "cpu_seconds": cpu, "ms_per_step": el * 1000 / float64(T), "curve_every_50": curve,
		"variance_clamps": st.VarianceClamps, "rows_read_per_step": float64(st.RowsRead) / float64(T+2), "numerics": g.Numerics(),
	})
}
