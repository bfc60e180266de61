package bench

import (
	"fmt"
	"io"
	"runtime"
)

// WriteScaleMarkdown writes the scaling rows as a Markdown table, with the
// machine's core count and measured bandwidth.
func WriteScaleMarkdown(w io.Writer, rows []ScaleRow, bandwidth float64) error {
	if _, err := fmt.Fprintf(w, "Machine: %d cores (GOMAXPROCS %d), measured read bandwidth %.1f GB/s.\n\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), bandwidth/1e9); err != nil {
		return err
	}
	fmt.Fprintln(w, "| variant | A | t | ms/step | m | dict. changes | cum. regret | peak heap MB | one pass ms | ratio |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		_, err := fmt.Fprintf(w, "| %s | %d | %d | %.3f | %d | %d | %.1f | %.0f | %.3f | %.2f |\n",
			r.Variant, r.Arms, r.T, 1e3*r.SecondsPerStep, r.DictionarySize, r.Changes, r.CumRegret,
			float64(r.PeakHeapBytes)/1e6, 1e3*r.PassSeconds, r.SecondsPerStep/r.PassSeconds)
		if err != nil {
			return err
		}
	}
	return nil
}
