//go:build !linux

package online

import "time"

func threadCPU() (time.Duration, bool) { return 0, false }
func lockThread()                      {}
func unlockThread()                    {}

func processCPU() (time.Duration, bool) { return 0, false }
