package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/candidates"
	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/gp/hyper"
	"github.com/bkb-go/bkb/internal/snapenc"
)

// Snapshots of the engine: the whole state after the first k records,
// stored beside the records (storage.Snapshots), so that Ask after a
// resume, a late worker and `bkb ask` decode it and apply only the
// records after it instead of replaying the policy from trial 0. The
// state is saved to the bit (posterior factors, random streams, trust
// region, candidate pool), so the points asked after a restore are those
// of the uninterrupted run. A snapshot names the records it covers by
// their count and a chained SHA-256 of them (recordDigest); one that does
// not match the stored records, was written by another layout or does not
// decode is not used: the study replays its records, as before snapshots.

// snapshotLayout is the version of the engine's encoding below.
const snapshotLayout = 1

// SnapshotMeta is the readable part of a snapshot: what `bkb status`
// shows of the model without decoding (or replaying) it.
type SnapshotMeta struct {
	Layout      int          `json:"layout"`
	Records     int          `json:"records"`
	Arms        int          `json:"arms"`
	LengthScale float64      `json:"length_scale"`
	Fits        []FitResult  `json:"fits,omitempty"`
	Stats       bandit.Stats `json:"stats"`
	Diverged    int          `json:"diverged,omitempty"`
	Ignored     int          `json:"ignored,omitempty"`
}

// Snapshotable reports whether the engine's state can be encoded: a
// study whose candidates grow, with BKB's posterior or no model (random
// search). The exact posteriors (O(t^2) state), Ada-BKB and the fixed
// arm sets' policies are replayed instead.
func (e *Engine) Snapshotable() bool {
	r := e.ref
	return r != nil && !e.cfg.Tradeoffs() && e.policy == nil && r.exact == nil && r.ada == nil && (r.dtc != nil || r.cfg.Policy == "random" ||
		len(e.succ) < e.cfg.Init)
}

// Meta returns the snapshot's readable part.
func (e *Engine) Meta(records int) SnapshotMeta {
	return SnapshotMeta{Layout: snapshotLayout, Records: records, Arms: e.n, LengthScale: e.lengthScale,
		Fits: slices.Clone(e.fits), Stats: e.Stats(), Diverged: e.diverged, Ignored: e.ignored}
}

// Encode appends the engine's state to w (snapshotable engines only).
func (e *Engine) Encode(w *snapenc.Writer) error {
	w.Int(snapshotLayout)
	w.Int(e.n)
	w.Floats(e.vals[:e.n*e.p])
	ds, err := e.designSrc.MarshalBinary()
	if err != nil {
		return err
	}
	w.Blob(ds)
	w.Ints(sortedKeys(e.designSeen))
	w.Float(e.lengthScale)
	w.Float(e.shift)
	w.Float(e.scale)
	w.Int(len(e.succ))
	for _, o := range e.succ {
		w.Int(o.trial)
		w.Int(o.arm)
		w.Float(o.value)
	}
	encodeIntMap(w, e.pending)
	encodeIntMap(w, e.waiting)
	w.Ints(e.failed)
	w.Float(e.policySeconds)
	fits, err := json.Marshal(e.fits)
	if err != nil {
		return err
	}
	w.Blob(fits)
	w.Int(e.diverged)
	w.Int(e.ignored)
	w.Float(e.fitSeconds)
	if e.cfg.warps() {
		w.Floats(e.ref.warp.encodeFloats())
	}
	return e.ref.encode(w)
}

func (r *refiner) encode(w *snapenc.Writer) error {
	encodeParams(w, r.hp)
	w.Float(r.ls)
	w.Int(r.lastFit)
	w.Int(r.lastFull)
	w.Float(r.shift)
	w.Float(r.scale)
	w.Float(r.threshold)
	w.Float(r.lambda)
	w.Int(r.nObs)
	w.Bool(r.dtc != nil)
	if r.dtc != nil {
		rs, err := r.rsSrc.MarshalBinary()
		if err != nil {
			return err
		}
		w.Blob(rs)
		r.dtc.EncodeState(w)
		rows := slices.Sorted(maps.Keys(r.rowPoint))
		w.Int(len(rows))
		for _, row := range rows {
			w.Int(row)
			w.Floats(r.rowPoint[row])
		}
	}
	reg := r.region
	w.Floats([]float64{reg.Radius, reg.Init, reg.Min, reg.Max})
	w.Ints([]int{reg.SuccessTol, reg.FailureTol, reg.Successes, reg.Failures, reg.Restarts})
	w.Float(r.best)
	w.Bool(r.local != nil)
	w.Floats(r.local)
	w.Float(r.localBest)
	w.Bool(r.restartDue)
	encodePoints(w, r.centers)
	w.Ints(sortedKeys(r.phaseStale))
	w.Ints(sortedKeys(r.failStale))
	encodePoints(w, r.pool)
	w.Int(r.asks)
	w.Float(r.fitSecs)
	w.Float(r.growSec)
	w.Float(r.gain)
	w.Int(r.resparsified)
	if r.cfg.rules().LateLocal {
		w.Bool(r.lateInc != nil)
		w.Floats(r.lateInc)
		w.Floats(r.lateHalf)
		w.Int(r.lateBuilt)
		w.Int(r.lateSeen)
	}
	return nil
}

// Decode returns the engine that encode wrote, for the study's
// configuration cfg.
func Decode(cfg *Config, rd *snapenc.Reader) (*Engine, error) {
	e, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if e.ref == nil {
		return nil, fmt.Errorf("%w: the study's candidates do not grow", snapenc.ErrCorrupt)
	}
	if v := rd.Int(); v != snapshotLayout && rd.Err() == nil {
		rd.Fail("engine layout %d, this build reads %d", v, snapshotLayout)
	}
	n := rd.Int()
	vals := rd.Floats()
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if n < e.n || len(vals) != n*e.p {
		rd.Fail("%d arms of %d values (the study's set has %d)", n, len(vals), e.n)
		return nil, rd.Err()
	}
	for i := 0; i < e.n*e.p; i++ {
		if math.Float64bits(vals[i]) != math.Float64bits(e.vals[i]) {
			rd.Fail("the arm set differs from the study's")
			return nil, rd.Err()
		}
	}
	for i := e.n; i < n; i++ {
		x := vals[i*e.p : (i+1)*e.p]
		if err := e.space.Check(x); err != nil {
			rd.Fail("arm %d: %v", i, err)
			return nil, rd.Err()
		}
		e.addArm(x)
	}
	if err := e.designSrc.UnmarshalBinary(rd.Blob()); err != nil && rd.Err() == nil {
		rd.Fail("design stream: %v", err)
	}
	for _, a := range rd.Ints() {
		e.designSeen[a] = true
	}
	e.lengthScale, e.shift, e.scale = rd.Float(), rd.Float(), rd.Float()
	ns := rd.Len(24)
	e.succ = make([]observation, ns)
	for i := range e.succ {
		e.succ[i] = observation{trial: rd.Int(), arm: rd.Int(), value: rd.Float()}
	}
	e.pending = decodeIntMap(rd)
	e.waiting = decodeIntMap(rd)
	e.failed = rd.Ints()
	e.policySeconds = rd.Float()
	if fits := rd.Blob(); rd.Err() == nil {
		if err := json.Unmarshal(fits, &e.fits); err != nil {
			rd.Fail("fits: %v", err)
		}
	}
	e.diverged, e.ignored = rd.Int(), rd.Int()
	e.fitSeconds = rd.Float()
	if e.cfg.warps() {
		if w, err := decodeWarpFloats(rd.Floats()); err != nil && rd.Err() == nil {
			rd.Fail("%v", err)
		} else {
			e.ref.warp = w
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	arm := func(a int) bool { return a >= 0 && a < e.n }
	for _, o := range e.succ {
		if !arm(o.arm) {
			rd.Fail("observation of arm %d of %d", o.arm, e.n)
		}
	}
	for _, a := range slices.Concat(e.failed, slices.Collect(maps.Values(e.pending)), slices.Collect(maps.Values(e.waiting))) {
		if !arm(a) {
			rd.Fail("arm %d of %d", a, e.n)
		}
	}
	if err := e.ref.decode(e, rd); err != nil {
		return nil, err
	}
	if err := rd.Done(); err != nil {
		return nil, err
	}
	return e, nil
}

func (r *refiner) decode(e *Engine, rd *snapenc.Reader) error {
	r.hp = decodeParams(rd)
	r.ls = rd.Float()
	r.lastFit, r.lastFull = rd.Int(), rd.Int()
	r.shift, r.scale, r.threshold, r.lambda = rd.Float(), rd.Float(), rd.Float(), rd.Float()
	r.nObs = rd.Int()
	if err := rd.Err(); err != nil {
		return err
	}
	if r.nObs < 0 || r.nObs > len(e.succ) {
		rd.Fail("model of %d observations, %d completed", r.nObs, len(e.succ))
		return rd.Err()
	}
	if rd.Bool() {
		r.rsSrc = new(rand.PCG)
		if err := r.rsSrc.UnmarshalBinary(rd.Blob()); err != nil && rd.Err() == nil {
			rd.Fail("resampling stream: %v", err)
		}
		r.rs = rand.New(r.rsSrc)
		k, lambda, err := r.kernelAndNoise()
		if err != nil {
			return err
		}
		if rd.Err() == nil && math.Float64bits(lambda) != math.Float64bits(r.lambda) {
			rd.Fail("noise variance %v, the fit gives %v", r.lambda, lambda)
		}
		if err := rd.Err(); err != nil {
			return err
		}
		g, err := gp.DecodeDTC(k, rd)
		if err != nil {
			return err
		}
		if g.Dim() != r.d {
			rd.Fail("posterior of dimension %d, want %d", g.Dim(), r.d)
			return rd.Err()
		}
		r.dtc, r.kern = g, k
		r.rowPoint = map[int][]float64{}
		for range rd.Len(16) {
			row, x := rd.Int(), rd.Floats()
			if len(x) != r.d {
				rd.Fail("observed point of %d coordinates", len(x))
				break
			}
			r.rowPoint[row] = x
		}
	}
	fr, ir := rd.Floats(), rd.Ints()
	if rd.Err() == nil && (len(fr) != 4 || len(ir) != 5) {
		rd.Fail("trust region of %d and %d fields", len(fr), len(ir))
	}
	if err := rd.Err(); err != nil {
		return err
	}
	r.region = candidates.Region{Radius: fr[0], Init: fr[1], Min: fr[2], Max: fr[3],
		SuccessTol: ir[0], FailureTol: ir[1], Successes: ir[2], Failures: ir[3], Restarts: ir[4]}
	r.best = rd.Float()
	hasLocal := rd.Bool()
	r.local = rd.Floats()
	if hasLocal && len(r.local) != r.d || !hasLocal && r.local != nil {
		rd.Fail("local phase center of %d coordinates", len(r.local))
	}
	r.localBest = rd.Float()
	r.restartDue = rd.Bool()
	r.centers = decodePoints(rd, r.d)
	r.phaseStale = boolSet(rd.Ints())
	r.failStale = boolSet(rd.Ints())
	r.pool = decodePoints(rd, r.d)
	r.asks = rd.Int()
	r.fitSecs, r.growSec = rd.Float(), rd.Float()
	r.gain = rd.Float()
	r.resparsified = rd.Int()
	if r.cfg.rules().LateLocal {
		hasLate := rd.Bool()
		r.lateInc, r.lateHalf = rd.Floats(), rd.Floats()
		r.lateBuilt, r.lateSeen = rd.Int(), rd.Int()
		if rd.Err() == nil && (hasLate && (len(r.lateInc) != r.d || len(r.lateHalf) != r.d) ||
			!hasLate && (r.lateInc != nil || r.lateHalf != nil) ||
			r.lateBuilt < 0 || r.lateSeen < r.lateBuilt || r.lateSeen > len(e.succ)) {
			rd.Fail("late posterior of %d and %d coordinates, built at %d, %d observations", len(r.lateInc), len(r.lateHalf), r.lateBuilt, r.lateSeen)
		}
	}
	return rd.Err()
}

func encodeParams(w *snapenc.Writer, p *hyper.Params) {
	w.Bool(p != nil)
	if p == nil {
		return
	}
	w.Int(int(p.Family))
	w.Floats(p.LengthScales)
	w.Float(p.SignalVariance)
	w.Float(p.NoiseVariance)
}

func decodeParams(rd *snapenc.Reader) *hyper.Params {
	if !rd.Bool() {
		return nil
	}
	return &hyper.Params{Family: hyper.Family(rd.Int()), LengthScales: rd.Floats(), SignalVariance: rd.Float(), NoiseVariance: rd.Float()}
}

func encodePoints(w *snapenc.Writer, pts [][]float64) {
	w.Int(len(pts))
	for _, x := range pts {
		w.Floats(x)
	}
}

func decodePoints(rd *snapenc.Reader, d int) [][]float64 {
	n := rd.Len(8)
	if n == 0 {
		return nil
	}
	out := make([][]float64, n)
	for i := range out {
		out[i] = rd.Floats()
		if len(out[i]) != d {
			rd.Fail("a point of %d coordinates, want %d", len(out[i]), d)
			return nil
		}
	}
	return out
}

func encodeIntMap(w *snapenc.Writer, m map[int]int) {
	keys := slices.Sorted(maps.Keys(m))
	w.Int(len(keys))
	for _, k := range keys {
		w.Int(k)
		w.Int(m[k])
	}
}

func decodeIntMap(rd *snapenc.Reader) map[int]int {
	m := map[int]int{}
	for range rd.Len(16) {
		k := rd.Int()
		m[k] = rd.Int()
	}
	return m
}

func sortedKeys(m map[int]bool) []int {
	var out []int
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func boolSet(keys []int) map[int]bool {
	if keys == nil {
		return nil
	}
	m := make(map[int]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// snapshotEvery is how many times its own cost the policy time since the
// newest snapshot must be before a new one is saved: the saves cost at
// most a quarter of the policy's time, and a resume replays at most about
// four saves' worth of policy time.
const snapshotEvery = 4

// firstSaveCost is the cost assumed for a save before one was timed.
const firstSaveCost = 0.005
