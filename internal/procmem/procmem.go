// Package procmem measures the process's memory for benchmarks: how much
// resident memory an operation adds at its peak, which is what a user of a
// command sees, where allocation counts only tell part of it.
package procmem

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// PeakGrowthMB reports how much the process's resident memory grows while f
// runs, in MB, on Linux: it collects garbage, returns free memory to the
// system, resets the high-water mark (/proc/self/clear_refs) and reads
// VmHWM after f, less VmRSS before. Elsewhere it runs f and reports 0.
func PeakGrowthMB(f func()) float64 {
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		f()
		return 0
	}
	before := statusMB("VmRSS:")
	f()
	return statusMB("VmHWM:") - before
}

// statusMB reads a kB field of /proc/self/status, in MB.
func statusMB(field string) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
