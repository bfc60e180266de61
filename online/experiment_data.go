package online

import (
	"compress/gzip"
	"fmt"
	"strconv"
	"strings"

	"github.com/bkb-go/bkb/kernel"
	"github.com/bkb-go/bkb/objectives"
)

// openDataset loads a path returned by ResolveData.
func openDataset(path string) (*Dataset, error) {
	name, ok := strings.CutPrefix(path, EmbeddedPrefix)
	if !ok {
		return LoadCSV(path)
	}
	f, err := embedded.Open("data/" + name)
	if err != nil {
		return nil, fmt.Errorf("online: %w", err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("online: %s: %w", path, err)
	}
	defer gz.Close()
	ds, err := ReadCSV(gz, strings.TrimSuffix(name, ".csv.gz"))
	if err != nil {
		return nil, fmt.Errorf("online: %s: %w", path, err)
	}
	return ds, nil
}

func (e *Experiment) loadDataset(def *DatasetDefaults, paper bool) (*Dataset, error) {
	path, err := ResolveData(e.data(), e.DataDir)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(path, EmbeddedPrefix) {
		e.notef("dataset %s: the copy built into bkb (../shared/data not found)", e.data())
	}
	ds, err := openDataset(path)
	if err != nil {
		return nil, &DataError{err}
	}
	if ds.Header != nil {
		e.notef("dataset %s: first line taken as a header (%d columns)", ds.Name, len(ds.Header))
	}
	switch e.Task {
	case "", "auto":
		if ds.Task == Classification && ds.Labels != [2]float64{-1, 1} {
			e.notef("task: binary classification (targets take two values; %g -> -1, %g -> +1; --task regression to override)", ds.Labels[0], ds.Labels[1])
		}
	default:
		t, err := ParseTask(e.Task)
		if err != nil {
			return nil, err
		}
		if err := ds.SetTask(t); err != nil {
			return nil, &DataError{err}
		}
	}
	if !paper && ds.Task == Classification {
		*def = GenericDefaults(Classification)
	}
	switch e.TargetTransform {
	case "", "auto":
		if def.ExpTargets && ds.Task == Regression {
			ds.ExpTargets()
			e.notef("targets: exp(y - max y) (the stored targets are log Goal; --target-transform none to keep them)")
		}
	case "exp":
		ds.ExpTargets()
	case "none":
	}
	e.checkDegenerate(ds)
	e.scale(ds, def)
	return ds, nil
}

// checkDegenerate warns about inputs on which the online metrics say little.
func (e *Experiment) checkDegenerate(ds *Dataset) {
	n := ds.N
	if e.N > 0 && e.N < n && e.Stream == "" {
		n = e.N
	}
	switch {
	case n == 1:
		e.warnf("the stream has a single row: every learner's score is its prediction before seeing any target")
	case n < 25:
		e.warnf("the stream has only %d rows: online scores are dominated by the first rounds", n)
	}
	if ds.Task == Regression {
		constant := true
		for _, y := range ds.Y[1:] {
			if y != ds.Y[0] {
				constant = false
				break
			}
		}
		if constant {
			e.warnf("the target is constant (%g): it is scaled to the middle of the target range and every MSE measures only how fast a learner finds that constant", ds.Y[0])
		}
	} else {
		var pos int
		for _, y := range ds.Y {
			if y > 0 {
				pos++
			}
		}
		if pos == 0 || pos == ds.N {
			e.warnf("every label is the same: the mistake rate is 0 for the constant predictor")
		}
	}
}

func (e *Experiment) scale(ds *Dataset, def *DatasetDefaults) {
	var fr *Range
	if !e.RawFeatures {
		fr = &FeatureRange
	}
	tr := def.Targets
	switch e.Profile {
	case Profile000:
		tr = SymmetricRange
	case Profile002:
		tr = UnitRange
	}
	if ds.Task != Regression || tr == (Range{}) {
		ds.Scale(fr, nil)
		return
	}
	if !def.Robust {
		ds.Scale(fr, &tr)
		e.notef("targets: min-max to [%g, %g] (the paper's preprocessing)", tr.Lo, tr.Hi)
		return
	}
	ds.Scale(fr, nil)
	sc := ds.ScaleTargetsRobust(tr)
	if sc.Clipped > 0 {
		e.warnf("%d target(s) outside the outlier fences [%.4g, %.4g] (quartiles -/+ %g IQR) clipped to [%.4g, %.4g] before scaling; MSE is on the clipped targets",
			sc.Clipped, sc.FenceLo, sc.FenceHi, OutlierFence, sc.Lo, sc.Hi)
	}
	e.notef("targets: [%.4g, %.4g] to [%g, %g]", sc.Lo, sc.Hi, tr.Lo, tr.Hi)
}

func (e *Experiment) synthetic(def *DatasetDefaults) (*Dataset, error) {
	name := strings.TrimPrefix(e.Stream, "synthetic:")
	n := e.N
	if n <= 0 {
		n = 2000
	}
	var ds *Dataset
	spec, ok, err := ParseSyntheticSpec(name)
	if err != nil {
		return nil, err
	}
	if ok {
		ds, err = spec.Generate(n, e.Noise, e.Seed)
	} else {
		var f *objectives.Function
		if f, err = objectives.Lookup(name); err != nil {
			return nil, err
		}
		ds, err = SyntheticDataset(f, n, e.Noise, e.Seed)
	}
	if err != nil {
		return nil, err
	}
	e.checkDegenerate(ds)
	e.scale(ds, def)
	return ds, nil
}

// stream returns order seed's stream, or a template adversary for sim000.
func (e *Experiment) stream(ds *Dataset, seed uint64, spec string, width float64, prof Profile) (Stream, *Adversary, error) {
	switch {
	case e.Stream == "sim000":
		n := e.N
		if n <= 0 {
			n = 80
		}
		lambda := 1.0
		if p, err := parseSpec(spec); err == nil {
			if v, ok := p.kv["lambda"]; ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					lambda = f
				}
			}
		}
		cfg := AdversaryConfig{Dim: 5, N: n, Kernel: kernel.RBF{LengthScale: width}, Lambda: lambda, Seed: seed}
		// The adversary needs the learner; Run rebuilds it with the learner.
		return &sizedStream{n: n, d: 5}, &Adversary{cfg: cfg}, nil
	case strings.HasPrefix(e.Stream, "blocks003"):
		b, r := blockParams(e.Stream)
		s, err := NewBlockStream(ds, b, r, seed)
		return s, nil, err
	}
	s := NewDatasetStream(ds, seed)
	if e.N > 0 && e.N < ds.N && !strings.HasPrefix(e.Stream, "synthetic:") {
		s.order = s.order[:e.N]
	}
	return s, nil, nil
}

// sizedStream only carries the length and dimension of a stream built later.
type sizedStream struct{ n, d int }

func (s *sizedStream) Next() ([]float64, float64, bool) { return nil, 0, false }

func (s *sizedStream) Len() int { return s.n }

func (s *sizedStream) Dim() int { return s.d }

func (s *sizedStream) Task() Task { return Regression }
