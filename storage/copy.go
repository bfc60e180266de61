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
// empty study, which the caller may delete.
func Copy(ctx context.Context, dst, src Storage, name string) error {
	h, err := src.Study(ctx, name)
	if err != nil {
		return fmt.Errorf("storage: copy study %q: %w", name, err)
	}
	recs, err := src.Records(ctx, name, 0)
	if err != nil {
		return fmt.Errorf("storage: copy study %q: %w", name, err)
	}
	if _, err := Summarize(recs); err != nil {
		return fmt.Errorf("storage: copy study %q: the source's records: %w", name, err)
	}
	if _, err := dst.CreateStudy(ctx, name, h.Config); err != nil {
		return fmt.Errorf("storage: copy study %q: %w", name, err)
	}
	if len(recs) == 0 {
		return nil
	}
	_, err = dst.Update(ctx, name, 0, func(v View) ([]Record, error) {
		if len(v.New) != 0 {
			return nil, fmt.Errorf("the new study has %d records already (another process wrote to it)", len(v.New))
		}
		return recs, nil
	})
	if err != nil {
		return fmt.Errorf("storage: copy study %q: %w", name, err)
	}
	return nil
}
