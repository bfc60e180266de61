// Command peerfn evaluates a test function of package objectives for a
// peer optimizer in another language, so that both sides of a comparison
// evaluate the same definition: it reads points, one per line as
// space-separated numbers, and writes f(x) per line (%.17g). With -info it
// prints the function's box and minimum as JSON and exits.
//
// Usage: peerfn [-info] NAME[:DIM]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/bkb-go/bkb/objectives"
)

func main() {
	info := flag.Bool("info", false, "print the function's box and minimum as JSON and exit")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: peerfn [-info] NAME[:DIM]")
		os.Exit(2)
	}
	f, err := objectives.Lookup(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "peerfn:", err)
		os.Exit(2)
	}
	if *info {
		_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"name": f.String(), "lower": f.Lower, "upper": f.Upper, "min": f.MinValue})
		return
	}
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	x := make([]float64, f.Dim)
	for in.Scan() {
		fields := strings.Fields(in.Text())
		if len(fields) != f.Dim {
			fmt.Fprintf(os.Stderr, "peerfn: %d numbers, want %d\n", len(fields), f.Dim)
			os.Exit(1)
		}
		for i, s := range fields {
			if x[i], err = strconv.ParseFloat(s, 64); err != nil {
				fmt.Fprintln(os.Stderr, "peerfn:", err)
				os.Exit(1)
			}
		}
		fmt.Fprintf(out, "%.17g\n", f.Value(x))
		out.Flush()
	}
}
