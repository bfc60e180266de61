package storage

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// sameAsEncodingJSON checks that decodeRecord gives what encoding/json
// gives for line: the same Record, or an error on both paths.
func sameAsEncodingJSON(t *testing.T, line []byte) {
	t.Helper()
	var want Record
	wantErr := json.Unmarshal(line, &want)
	got, err := decodeRecord(line)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s: error %v, encoding/json's %v", line, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %#v\nwant %#v", line, got, want)
	}
}

// randomRecord returns a record as the study layer writes them, with
// ASCII strings and numbers of every magnitude.
func randomRecord(rng *rand.Rand) Record {
	num := func() float64 {
		switch rng.IntN(6) {
		case 0:
			return 0
		case 1:
			return float64(rng.IntN(2000) - 1000)
		case 2:
			return math.Ldexp(rng.Float64(), rng.IntN(2000)-1000)
		case 3:
			return -math.Ldexp(rng.Float64(), rng.IntN(200)-100)
		case 4:
			return math.SmallestNonzeroFloat64 * float64(rng.IntN(5)+1)
		default:
			return rng.NormFloat64() * 1e300
		}
	}
	nums := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = num()
		}
		return v
	}
	kinds := []string{KindAsk, KindTell, KindFail, KindEnqueue, KindReport, KindPrune}
	r := Record{Kind: kinds[rng.IntN(len(kinds))], Trial: rng.IntN(1 << 40), Arm: rng.IntN(100) - 1, X: nums(1 + rng.IntN(12)),
		Time: time.Unix(rng.Int64N(1<<34), rng.Int64N(1e9)).UTC()}
	if rng.IntN(3) == 0 {
		r.Time = r.Time.In(time.FixedZone("x", 3600*(rng.IntN(25)-12)))
	}
	if rng.IntN(2) == 0 {
		r.Params = json.RawMessage(`{"a":1.5,"b":"c\"}{","n":{"d":[1,{"e":null}]}}`)
	}
	if rng.IntN(2) == 0 {
		r.Worker = "host:1234:5c666ef7"
	}
	if rng.IntN(2) == 0 {
		y := num()
		r.Y = &y
	}
	if rng.IntN(5) == 0 {
		r.Error = "objective: exit status 1"
	}
	if rng.IntN(2) == 0 {
		r.Seconds = math.Abs(num())
	}
	if rng.IntN(3) == 0 {
		r.Values = nums(1 + rng.IntN(3))
	}
	if rng.IntN(3) == 0 {
		r.Constraints = nums(1 + rng.IntN(3))
	}
	if rng.IntN(3) == 0 {
		r.Step = rng.IntN(1000)
	}
	return r
}

// TestDecodeRecordFast: the lines json.Marshal writes for records take the
// fast path and decode to the record written, bit for bit, and to what
// encoding/json decodes.
func TestDecodeRecordFast(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 5000; i++ {
		r := randomRecord(rng)
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := decodeRecordFast(line)
		if !ok {
			t.Fatalf("%s: not decoded by the fast path", line)
		}
		// Time values compare by instant and zone offset (the location
		// pointer differs).
		if !got.Time.Equal(r.Time) {
			t.Fatalf("%s: time %v, want %v", line, got.Time, r.Time)
		}
		sameAsEncodingJSON(t, line)
	}
}

// TestDecodeRecordOddLines: lines in other shapes (escapes, nulls,
// white space, keys in other cases, invalid JSON, numbers out of range)
// decode as encoding/json decodes them, or fail on both paths.
func TestDecodeRecordOddLines(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{}`,
		`{"kind":"ask","trial":1,"arm":-1,"x":[0.5],"time":"2026-01-02T03:04:05.123456789Z"}`,
		` { "kind" : "ask" , "trial" : 1 , "arm" : 0 , "x" : [ 1 , 2e3 , -0.5E-2 ] , "time" : "2026-01-02T03:04:05Z" } `,
		`{"kind":"tell","trial":1,"arm":0,"x":[1],"y":null,"time":"2026-01-02T03:04:05Z"}`,
		`{"kind":"fail","trial":1,"arm":0,"x":[1],"error":"a \"quoted\" \u00e9 error\n","time":"2026-01-02T03:04:05Z"}`,
		`{"Kind":"ask","TRIAL":2,"arm":0,"x":[1],"time":"2026-01-02T03:04:05Z"}`,
		`{"kind":"ask","trial":1.0,"arm":0,"x":[1]}`,
		`{"kind":"ask","trial":1e2,"arm":0,"x":[1]}`,
		`{"kind":"ask","trial":01,"arm":0,"x":[1]}`,
		`{"kind":"ask","trial":99999999999999999999,"arm":0,"x":[1]}`,
		`{"kind":"ask","trial":1,"arm":0,"x":[1e999]}`,
		`{"kind":"ask","trial":1,"arm":0,"x":[1,]}`,
		`{"kind":"ask","trial":1,"arm":0,"x":[]}`,
		`{"kind":"ask","trial":1,"arm":0,"x":null}`,
		`{"kind":"ask","trial":1,"arm":0,"x":[1],"params":{"a":[1,2}}`,
		`{"kind":"ask","trial":1,"arm":0,"x":[1],"params":{"a":"}"},"worker":"w"}`,
		`{"kind":"ask","trial":1,"arm":0,"x":[1],"params":null}`,
		`{"kind":"ask","trial":1,"arm":0,"x":[1],"params":[1]}`,
		`{"kind":"ask","trial":1,"arm":0,"x":[1],"unknown":{"deep":[1,2]}}`,
		`{"kind":"ask","trial":1,"arm":0,"x":[1],"time":"yesterday"}`,
		`{"kind":"ask","trial":1,"arm":0,"x":[1],"time":"2026-01-02T03:04:05+01:00"}`,
		`{"kind":"ask","trial":1,"arm":0,"x":[1]} trailing`,
		`{"kind":"ask","trial":1,"arm":0,"x":[1]`,
		`{"kind":"ask","kind":"tell","trial":1,"arm":0,"x":[1],"y":1,"y":2}`,
		`{"kind":"ask","trial":-0,"arm":0,"x":[-0]}`,
		`{"kind":"ask","trial":1,"arm":0,"x":[1],"step":-3}`,
		`{"kind":"ask","trial":1,"arm":0,"x":[.5]}`,
		`{"kind":"ask","trial":1,"arm":0,"x":[5.]}`,
		`{"kind":"ask","trial":1,"arm":0,"x":[0x10]}`,
		`{"kind":"ask","trial":1,"arm":0,"x":[Infinity]}`,
		`{"kind":"t` + "\x01" + `ell"}`,
		`{"kind":"t` + "\xff" + `ell"}`,
	}
	for _, line := range lines {
		sameAsEncodingJSON(t, []byte(line))
	}
}

// FuzzDecodeRecord: on any input, decodeRecord agrees with encoding/json.
func FuzzDecodeRecord(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 5))
	for i := 0; i < 20; i++ {
		line, _ := json.Marshal(randomRecord(rng))
		f.Add(line)
	}
	f.Add([]byte(`{"kind":"ask","trial":1,"arm":0,"x":[1],"params":{"a":"\\"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		sameAsEncodingJSON(t, line)
	})
}
