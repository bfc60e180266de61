package storage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bkb-go/bkb/storage"
)

// A journal store keeps studies in one JSON-lines file: a study is created
// with its configuration (opaque to the storage), and every event is
// appended under the store's lock by Update. Summarize turns the records
// into trials.
func ExampleJournalStore() {
	dir, err := os.MkdirTemp("", "storage-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	st, err := storage.OpenJournalStore(filepath.Join(dir, "tune.jsonl"))
	if err != nil {
		panic(err)
	}
	defer st.Close()
	if _, err := st.CreateStudy(ctx, "tune", json.RawMessage(`{"note":"any JSON"}`)); err != nil {
		panic(err)
	}
	y := 0.25
	_, err = st.Update(ctx, "tune", 0, func(v storage.View) ([]storage.Record, error) {
		return []storage.Record{
			{Kind: storage.KindAsk, Trial: 0, Arm: -1, X: []float64{0.5}},
			{Kind: storage.KindTell, Trial: 0, Arm: -1, X: []float64{0.5}, Y: &y},
			{Kind: storage.KindAsk, Trial: 1, Arm: -1, X: []float64{0.9}},
		}, nil
	})
	if err != nil {
		panic(err)
	}
	recs, err := st.Records(ctx, "tune", 0)
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		fmt.Println(r.Kind, r.Trial, r.X)
	}
	// Output:
	// ask 0 [0.5]
	// tell 0 [0.5]
	// ask 1 [0.9]
}

// The same events in memory, for tests and for callers that keep their own
// records; storage.Copy moves a study between any two storages.
func ExampleCopy() {
	ctx := context.Background()
	src, dst := storage.NewMemory(), storage.NewMemory()
	if _, err := src.CreateStudy(ctx, "s", json.RawMessage(`{}`)); err != nil {
		panic(err)
	}
	_, err := src.Update(ctx, "s", 0, func(storage.View) ([]storage.Record, error) {
		return []storage.Record{{Kind: storage.KindAsk, Trial: 0, Arm: 3, X: []float64{1, 2}}}, nil
	})
	if err != nil {
		panic(err)
	}
	if err := storage.Copy(ctx, dst, src, "s"); err != nil {
		panic(err)
	}
	recs, _ := dst.Records(ctx, "s", 0)
	fmt.Println(len(recs), recs[0].Kind, recs[0].Arm)
	// Output:
	// 1 ask 3
}
