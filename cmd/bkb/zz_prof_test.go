package main

import (
	"context"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"testing"
)

func TestZZCLIProfile(t *testing.T) {
	args := os.Getenv("ZZARGS")
	if args == "" {
		t.Skip()
	}
	f, _ := os.Create(os.Getenv("ZZPROF"))
	pprof.StartCPUProfile(f)
	for i := 0; i < 5; i++ {
		run(context.Background(), strings.Fields(args), io.Discard, io.Discard)
	}
	pprof.StopCPUProfile()
}
