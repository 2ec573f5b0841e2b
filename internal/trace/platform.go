package trace

import "strings"

// Platform names the accelerator stack a trace came from: "rocm" (HIP
// runtime calls), "cuda" (any GPU work), "mtia" (only MTIA categories,
// kept as unknown), else "cpu".
func Platform(t *Trace) string {
	gpu, rocm := false, false
	for i := range t.Events {
		e := &t.Events[i]
		if e.Kind.OnGPU() && e.Kind != KindGPUAnnotation {
			gpu = true
		}
		if e.Kind == KindRuntime && strings.HasPrefix(e.Name, "hip") {
			rocm = true
		}
	}
	switch {
	case rocm:
		return "rocm"
	case gpu:
		return "cuda"
	}
	for k := range t.Meta.Unknown {
		if strings.HasPrefix(k, "mtia") {
			return "mtia"
		}
	}
	return "cpu"
}
