package study

import (
	"context"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// TestImportExportedTrace: the trace CSV that bkb export writes (trial,
// status, value, best so far, ..., the parameters, error) imports as it
// is: the complete rows with their values, failed rows skipped.
func TestImportExportedTrace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Create(ctx, storage.NewMemory(), "imp", braninConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	trace := `trial,status,arm,value,best_so_far,simple_regret,seconds,x1,x2,error
0,complete,181,137.17,137.17,136.77,0.001,4.6,12.7,
1,failed,7,,137.17,136.77,0.2,1,2,plugin crashed
2,complete,-1,"5.5",5.5,5.1,0,"-1.5",3,
`
	n, err := s.ImportCSV(ctx, strings.NewReader(trace), "trace.csv")
	if err != nil || n != 2 {
		t.Fatalf("ImportCSV = %d, %v; want 2 trials", n, err)
	}
	got := s.Trials()
	if len(got) != 2 || got[0].Value != 137.17 || got[1].Value != 5.5 || got[1].X[0] != -1.5 || got[1].X[1] != 3 {
		t.Fatalf("imported %+v", got)
	}
	// Without a header naming a "value" column, extra columns are errors.
	if _, err := s.ImportCSV(ctx, strings.NewReader("x1,x2,y,z\n1,2,3,4\n"), "bad.csv"); err == nil {
		t.Error("a header with two columns besides the parameters and no \"value\": no error")
	}
}

// TestSpaceUnknownFieldNamesParameter: a misspelt field in a space file is
// an error naming the parameter and the field.
func TestSpaceUnknownFieldNamesParameter(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`{"params":[{"name":"lr","low":1,"high":2},{"name":"act","typ":"categorical","choices":["a"]}]}`, `parameter 2 ("act"): unknown field "typ"`},
		{`{"params":[{"typ":"float","name":"lr","low":1,"high":2}]}`, `parameter 1 ("lr"): unknown field "typ"`},
		{`{"param":[]}`, `unknown field "param"`},
	} {
		_, err := ReadSpace(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadSpace(%s): %v, want %q", c.in, err, c.want)
		}
	}
}
