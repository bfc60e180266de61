package postgres_test

import (
	"context"
	"fmt"
	"os"

	"github.com/bkb-go/bkb/storage/postgres"
	"github.com/bkb-go/bkb/study"
)

// A study in PostgreSQL, shared by workers on many machines: each opens
// the same database and loads the study by name. (Not run by go test: it
// needs a server; TestConformance runs the storage's suite with
// BKB_POSTGRES_URL set.)
func Example() {
	ctx := context.Background()
	st, err := postgres.Open(ctx, os.Getenv("BKB_POSTGRES_URL"), postgres.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	space, _ := study.NewSpace(study.Float("x", -2, 2))
	s, err := study.Create(ctx, st, "shared", study.Config{Space: space, Budget: 20})
	if err != nil {
		s, err = study.Load(ctx, st, "shared") // another worker created it
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	err = s.Optimize(ctx, func(_ context.Context, t *study.Trial) (float64, error) {
		x := t.Params.Float("x")
		return x * x, nil
	}, 0)
	fmt.Println(err)
}
