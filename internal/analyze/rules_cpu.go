package analyze

import (
	"fmt"
	"sort"
)

func rulePreprocess(c *ruleCtx) *verdict {
	s := c.share(CatPreprocess)
	if s < 0.10 {
		return nil
	}
	type kv struct {
		name string
		ns   int64
	}
	var top []kv
	for n, ns := range c.f.preNames {
		top = append(top, kv{n, ns})
	}
	sort.Slice(top, func(i, j int) bool { return top[i].ns > top[j].ns })
	where := "with the GPU idle"
	if !c.x.hasGPU {
		where = "outside the model's operators"
	}
	ev := []string{fmt.Sprintf("CPU preprocessing %.2f ms per iteration (%.0f%% of wall time) %s", c.perIterMs(c.a.byCat[catIndex(CatPreprocess)]), 100*s, where)}
	for _, t := range top[:min(3, len(top))] {
		ev = append(ev, fmt.Sprintf("%s: %.2f ms per iteration", t.name, c.perIterMs(t.ns)))
	}
	title := "CPU preprocessing (tokenization, data preparation) is on the critical path"
	return &verdict{
		finding:     Finding{ID: "cpu-preprocessing", Title: title, Evidence: ev, Impact: s},
		suggestions: []string{suggestOffCritical, suggestFastTokenizer, map[bool]string{true: suggestBatch, false: suggestBatchCPU}[c.x.hasGPU]},
		primary:     (c.r.Classification == ClassCPUBound || c.r.Classification == ClassCPUOnly) && s >= c.share(CatFramework) && s >= c.share(CatCPUCompute),
	}
}

func ruleCPUOnly(c *ruleCtx) *verdict {
	if c.x.hasGPU {
		return nil
	}
	ev := []string{fmt.Sprintf("no GPU kernels or copies in the trace (platform: %s)", c.x.tl.Meta.Platform),
		fmt.Sprintf("framework ops on the CPU %.0f%%, preprocessing %.0f%%, framework/Python overhead %.0f%%", 100*c.share(CatCPUCompute), 100*c.share(CatPreprocess), 100*c.share(CatFramework))}
	for _, o := range c.r.TopCPUOps[:min(3, len(c.r.TopCPUOps))] {
		ev = append(ev, fmt.Sprintf("%s: %d× per iteration, %.2f ms self time (%.0f%%)", o.Name, o.Count, o.SelfMs, o.Pct))
	}
	return &verdict{
		finding:     Finding{ID: "cpu-only", Title: "CPU-only run: model compute and framework work share the CPU", Evidence: ev, Impact: c.share(CatCPUCompute, CatFramework)},
		suggestions: []string{suggestInferenceMode, suggestThreads, suggestBatchCPU, suggestCompileCPU},
		primary:     c.share(CatPreprocess) < c.share(CatCPUCompute, CatFramework),
	}
}
