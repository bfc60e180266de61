package storage

import (
	"context"
	"fmt"
)

// Copy copies the study name from src to dst: dst gets a new study of the
// same name and configuration (a new creation time) and every record of
// src, with its time, in one Update, so the records of dst are those of
// src, field for field (a journal copied into PostgreSQL and back is the
// same journal, but for the header's creation time). It fails if dst has
// the study already (ErrExists); if the Update fails, dst is left with an
// empty study, which the caller may delete. When both storages keep
// snapshots (Snapshots) and src has a readable one, it is copied too,
// after the records: it names the records it was made from by their
// digest, which the copy keeps, so the first ask on dst restores it
// instead of replaying the study. A snapshot that cannot be read or
// written is left behind (dst then replays its records once); Copy fails
// only for the records.
func Copy(ctx context.Context, dst, src Storage, name string) error {
	return CopyAs(ctx, dst, src, name, name)
}

// CopyAs is Copy with the study named srcName in src and dstName in dst.
func CopyAs(ctx context.Context, dst, src Storage, srcName, dstName string) error {
	h, err := src.Study(ctx, srcName)
	if err != nil {
		return fmt.Errorf("storage: copy study %q: %w", srcName, err)
	}
	recs, err := src.Records(ctx, srcName, 0)
	if err != nil {
		return fmt.Errorf("storage: copy study %q: %w", srcName, err)
	}
	if _, err := Summarize(recs); err != nil {
		return fmt.Errorf("storage: copy study %q: the source's records: %w", srcName, err)
	}
	if _, err := dst.CreateStudy(ctx, dstName, h.Config); err != nil {
		return fmt.Errorf("storage: copy study %q: %w", srcName, err)
	}
	if len(recs) == 0 {
		return nil
	}
	_, err = dst.Update(ctx, dstName, 0, func(v View) ([]Record, error) {
		if len(v.New) != 0 {
			return nil, fmt.Errorf("the new study has %d records already (another process wrote to it)", len(v.New))
		}
		return recs, nil
	})
	if err != nil {
		return fmt.Errorf("storage: copy study %q: %w", srcName, err)
	}
	CopySnapshot(ctx, dst, src, srcName, dstName)
	return nil
}

// CopySnapshot copies the snapshot of study srcName in src to study
// dstName in dst when both keep snapshots (Snapshots) and src's can be
// read, and reports whether it did. The snapshot names the records it
// was made from by their digest: it is used only where dst holds those
// records (a copy of them).
func CopySnapshot(ctx context.Context, dst, src Storage, srcName, dstName string) bool {
	from, ok1 := As[Snapshots](src)
	to, ok2 := As[Snapshots](dst)
	if !ok1 || !ok2 {
		return false
	}
	snap, err := from.LoadSnapshot(ctx, srcName, true)
	if err != nil {
		return false
	}
	return to.SaveSnapshot(ctx, dstName, snap) == nil
}
