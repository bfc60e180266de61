package study

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/bkb-go/bkb/engine"
	"github.com/bkb-go/bkb/internal/snapenc"
	"github.com/bkb-go/bkb/storage"
)

// recordDigest chains the SHA-256 of the fields of r that the engine
// reads onto prev.
func recordDigest(prev [32]byte, r storage.Record) [32]byte {
	// On the stack for the records of up to about 20 parameters: a
	// command hashes every record of the study.
	var buf [256]byte
	b := buf[:0]
	b = append(b, prev[:]...)
	b = append(b, r.Kind...)
	b = binary.LittleEndian.AppendUint64(b, uint64(int64(r.Trial)))
	b = binary.LittleEndian.AppendUint64(b, uint64(int64(r.Arm)))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(r.X)))
	for _, x := range r.X {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	if r.Y != nil {
		b = append(b, 1)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(*r.Y))
	} else {
		b = append(b, 0)
	}
	b = append(b, r.Error...)
	// Values and Constraints only where present, so that the digests of
	// records without them are those earlier builds computed.
	for _, part := range [][]float64{r.Values, r.Constraints} {
		if r.Values == nil && r.Constraints == nil {
			break
		}
		if part == nil {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		for _, v := range part {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	if r.Step != 0 {
		// Reports and prunes only: older records hash as before.
		b = binary.LittleEndian.AppendUint64(b, uint64(int64(r.Step)))
	}
	return sha256.Sum256(b)
}

// notify passes a note to Options.Notify.
func (s *Study) notify(format string, args ...any) {
	if s.opts.Notify != nil {
		s.opts.Notify(fmt.Sprintf(format, args...))
	}
}

// readSnapshot is a snapshot as read for a restore: its records and
// digest, its data, and the engine decoded from the data.
type readSnapshot struct {
	snap    storage.Snapshot // without Data
	data    storage.SnapshotData
	err     error          // of opening it (ErrNoSnapshot: there is none)
	eng     *engine.Engine // nil once used, or when decodeErr is set
	decoded error          // of decoding it
}

// readEngine opens the study's snapshot and decodes its engine, reading
// the data in pieces (straight into the engine's tables where the
// storage keeps snapshots in pieces, so that the data is never held
// whole). A piece that a save removed meanwhile, or a damaged one, is
// read from the snapshot opened again, twice at most. The engine is not
// decoded when the snapshot cannot match the study's records.
func (s *Study) readEngine(ctx context.Context) readSnapshot {
	var r readSnapshot
	for range 3 {
		r = readSnapshot{}
		r.snap, r.data, r.err = s.openSnapshot(ctx)
		if r.err != nil {
			return r
		}
		if n := r.snap.Records; n >= 1 && n <= len(s.records) && r.snap.Digest != s.digests[n-1] {
			return r // restore says why
		}
		r.eng, r.decoded = s.decodeSnapshot(r.data)
		if !errors.Is(r.decoded, storage.ErrSnapshotPiece) {
			break
		}
	}
	return r
}

// openSnapshot opens the study's snapshot (ErrNoSnapshot when the
// storage keeps none or the study cannot use one).
func (s *Study) openSnapshot(ctx context.Context) (storage.Snapshot, storage.SnapshotData, error) {
	if !s.cfg.GrowsCandidates() {
		return storage.Snapshot{}, nil, storage.ErrNoSnapshot
	}
	if ss, ok := storage.As[storage.SnapshotStreams](s.st); ok {
		return ss.OpenSnapshot(ctx, s.name)
	}
	sn, ok := storage.As[storage.Snapshots](s.st)
	if !ok {
		return storage.Snapshot{}, nil, storage.ErrNoSnapshot
	}
	snap, err := sn.LoadSnapshot(ctx, s.name, true)
	data := storage.BytesData(snap.Data)
	snap.Data = nil
	return snap, data, err
}

// decodeSnapshot decodes an engine from a snapshot's data.
func (s *Study) decodeSnapshot(d storage.SnapshotData) (*engine.Engine, error) {
	if b, ok := d.(storage.BytesData); ok {
		// Held whole: the buffer is encoded into next (spare).
		eng, err := engine.Decode(&s.stored, snapenc.NewReader(b))
		if err == nil {
			s.spare = b[:0]
		}
		return eng, err
	}
	return engine.Decode(&s.stored, snapenc.NewPiecesReader(d.Pieces(), d.Size()))
}

// restore returns the engine of the study's newest snapshot and the
// number of records it covers, or nil and 0 when there is no usable
// snapshot (with a note saying why, unless there is none at all).
func (s *Study) restore(ctx context.Context) (*engine.Engine, int) {
	var r readSnapshot
	if s.preloadDone {
		r = s.preloaded
		s.preloaded.eng = nil // an engine is used once (a retried Update decodes the data again)
	} else {
		r = s.readEngine(ctx)
	}
	if errors.Is(r.err, storage.ErrNoSnapshot) {
		return nil, 0
	}
	fallback := func(why string, args ...any) (*engine.Engine, int) {
		s.notify("study %s: snapshot not used (%s): replaying its %d records", s.name, fmt.Sprintf(why, args...), len(s.records))
		return nil, 0
	}
	snap := r.snap
	switch {
	case r.err != nil:
		return fallback("%v", r.err)
	case snap.Records < 1 || snap.Records > len(s.records):
		return fallback("it covers %d records, the study has %d", snap.Records, len(s.records))
	case snap.Digest != s.digests[snap.Records-1]:
		return fallback("its records differ from the stored ones")
	case r.decoded != nil:
		return fallback("%v", r.decoded)
	case r.eng == nil:
		// Used by an Update that is retried: decode the data again.
		eng, err := s.decodeSnapshot(r.data)
		if err != nil {
			return fallback("%v", err)
		}
		r.eng = eng
	}
	s.snapPolicy = r.eng.PolicySeconds()
	s.snapBytes = int(r.data.Size())
	s.snapRecords = snap.Records
	return r.eng, snap.Records
}

// saveSnapshot saves the engine's state, covering the records applied so
// far, when one is due (snapshotDue). A failure is a note, not an error:
// the study is stored in its records; a snapshot only spares a replay.
func (s *Study) saveSnapshot(ctx context.Context) {
	sn, ok := s.savable()
	if !ok || !s.snapshotDue() {
		return
	}
	s.writeSnapshot(ctx, sn)
}

// SnapshotBytes and MaxReplaySeconds bound what a long-lived process
// writes and what a kill costs (snapshotDue).
const (
	// SnapshotBytes: a long-lived process saves a snapshot only while the
	// bytes of all the snapshots it saved, this one included, stay within
	// SnapshotBytes times this one's size. Each save then adds at least
	// 1/(SnapshotBytes-1) to what the process wrote, so the saves are
	// spaced geometrically in size, and building a study writes at most
	// SnapshotBytes times its last snapshot, plus the checkpoint, whatever
	// the number of asks. A snapshot's size grows with the study (the
	// observed points' rows, t x m numbers), so the saves go on.
	SnapshotBytes = 8
	// MaxReplaySeconds: a long-lived process also saves once this much
	// policy time has passed since its newest snapshot, so that what a
	// kill costs (a replay of the policy since that snapshot) stays
	// bounded when the size grows slowly.
	MaxReplaySeconds = 120
)

// savable returns the storage's snapshots when the study has an engine
// whose state a snapshot can hold and records for it to cover.
func (s *Study) savable() (storage.Snapshots, bool) {
	sn, ok := storage.As[storage.Snapshots](s.st)
	return sn, ok && s.eng != nil && s.eng.Snapshotable() && len(s.records) > 0
}

// snapshotDue says whether a save is due after an ask. Every rule first
// needs the policy time since the newest snapshot to be SnapshotEvery
// times what a save costs, so that saves never take more than a fifth of
// the policy's time. A process that makes one ask (SnapshotEveryAsk), or
// has no snapshot yet, then saves. A long-lived one saves while its bytes
// written stay within SnapshotBytes times the snapshot (its size estimated
// by the last one's), or once MaxReplaySeconds of policy time have passed
// since its newest snapshot; Checkpoint saves the rest before it exits.
func (s *Study) snapshotDue() bool {
	since := s.eng.PolicySeconds() - s.snapPolicy
	if since < s.saveEvery*max(s.saveCost, engine.FirstSaveCost) {
		return false
	}
	if s.opts.SnapshotEveryAsk || s.snapRecords == 0 || since >= MaxReplaySeconds {
		return true
	}
	return s.written+s.snapBytes <= SnapshotBytes*s.snapBytes
}

// Checkpoint saves a snapshot of the study's engine covering every record
// this process applied, unless its newest snapshot does already: a
// long-lived process calls it before it exits (Run does), so that the next
// process restores instead of replaying the asks since the last due save.
// It does nothing for a study whose policy keeps no snapshots, or on a
// storage without them. Unlike the saves of Ask, a failure is returned.
func (s *Study) Checkpoint(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn, ok := s.savable()
	if !ok || s.snapRecords == len(s.records) {
		// Without an engine there is nothing to save; with one, it has
		// applied every record the study committed (commit).
		return nil
	}
	return s.writeSnapshot(ctx, sn)
}

// writeSnapshot saves the engine's state covering the records applied so
// far.
func (s *Study) writeSnapshot(ctx context.Context, sn storage.Snapshots) error {
	start := time.Now()
	k := len(s.records)
	meta, err := json.Marshal(s.eng.Meta(k))
	head := storage.Snapshot{Records: k, Digest: s.digests[k-1], Meta: meta}
	if ss, ok := storage.As[storage.SnapshotStreams](s.st); ok && err == nil {
		// In blocks, cut into chunks as they come: the data is never
		// held whole.
		var n int64
		err = ss.WriteSnapshot(ctx, s.name, head, func(w io.Writer) error {
			ew := snapenc.NewStreamWriter(w)
			if err := s.eng.Encode(ew); err != nil {
				return err
			}
			var err error
			n, err = ew.Flush()
			return err
		})
		if n > 0 {
			s.snapBytes = int(n)
		}
	} else if err == nil {
		w := snapenc.NewWriter(s.spare)
		if s.preloadDone {
			// The spare may be the preloaded snapshot's buffer: no
			// restore of this Ask may decode it once it is overwritten.
			s.preloaded = readSnapshot{err: errors.New("snapshot buffer reused")}
		}
		s.spare = nil
		w.Grow(s.snapBytes + s.snapBytes/32 + 1<<12)
		if err = s.eng.Encode(w); err == nil {
			head.Data = w.Bytes()
			err = sn.SaveSnapshot(ctx, s.name, head)
		}
		s.snapBytes = len(w.Bytes())
		s.spare = w.Bytes()[:0] // SaveSnapshot does not retain it
	}
	s.saveCost = time.Since(start).Seconds()
	s.snapPolicy = s.eng.PolicySeconds()
	if errors.Is(err, storage.ErrLocked) {
		// Another process of the study is saving its own snapshot: this
		// one is due again at the next ask.
		return nil
	}
	if err != nil {
		s.notify("study %s: snapshot not saved: %v", s.name, err)
		return err
	}
	s.snapRecords = k
	s.written += s.snapBytes
	return nil
}

// snapshotInfo returns Info from the newest snapshot's readable part, if
// it matches the records, without decoding or replaying anything.
func (s *Study) snapshotInfo() Info {
	none := Info{Ignored: s.ignored}
	if arms, err := s.cfg.BuildArms(); err == nil {
		none.Arms, _ = arms.Dims()
	}
	sn, ok := storage.As[storage.Snapshots](s.st)
	if !ok || len(s.records) == 0 {
		return none
	}
	snap, err := sn.LoadSnapshot(context.Background(), s.name, false)
	if err != nil || snap.Records < 1 || snap.Records > len(s.records) || snap.Digest != s.digests[snap.Records-1] {
		return none
	}
	var m SnapshotMeta
	if json.Unmarshal(snap.Meta, &m) != nil || m.Layout != engine.SnapshotLayout {
		return none
	}
	return Info{Arms: m.Arms, LengthScale: m.LengthScale, Fits: m.Fits, Stats: m.Stats, Diverged: m.Diverged, Ignored: s.ignored,
		AsOf: m.Records}
}

// preload reads the snapshot for the restores of an Ask before the
// storage's lock is taken (within Update a PostgreSQL storage holds a
// connection of its pool, and a read through another could wait forever
// on a pool of one); release drops it when the Ask is done.
func (s *Study) preload(ctx context.Context) (release func()) {
	release = func() { s.preloaded, s.preloadDone = readSnapshot{}, false }
	if s.eng != nil {
		return release
	}
	s.preloaded = s.readEngine(ctx)
	s.preloadDone = true
	return release
}
