package analyze

import (
	"fmt"
	"sort"
)

// ruleCtx is what every rule reads: the result so far and the raw facts.
type ruleCtx struct {
	r *Result
	a *attribution
	f *facts
	x *analyzer
}

func (c *ruleCtx) share(cats ...Category) float64 {
	if c.a.total == 0 {
		return 0
	}
	var ns int64
	for _, cat := range cats {
		ns += c.a.byCat[catIndex(cat)]
	}
	return float64(ns) / float64(c.a.total)
}

func (c *ruleCtx) perIterMs(ns int64) float64 { return ms(ns) / float64(max(c.f.n, 1)) }

// verdict is one rule's output: a finding and the changes it motivates.
type verdict struct {
	finding     Finding
	suggestions []string
	// primary marks the finding that explains the classification; it
	// leads the diagnosis whatever the impact of the others.
	primary bool
}

// A rule inspects the facts and returns a verdict, or nil when its cause is
// not present. Rules are independent; each lives in a rules_*.go file.
type rule func(*ruleCtx) *verdict

var rules = []rule{
	ruleGPUBound, ruleLaunchBound, ruleFrameworkBound, ruleCopyBound, rulePageable, ruleSyncInLoop,
	rulePreprocess, ruleFP32GEMM, ruleCPUOnly, ruleGPUIdle, ruleWarmup, ruleProfilerCost, ruleClockSuspect,
}

// minSuggestions is the seed's floor whenever the GPU is not already
// saturated by the work itself.
const minSuggestions = 2

func (x *analyzer) diagnose(r *Result, a *attribution, f *facts) {
	c := &ruleCtx{r: r, a: a, f: f, x: x}
	r.Classification, r.ClassReason = classify(c)
	var vs []*verdict
	for _, rl := range rules {
		if v := rl(c); v != nil {
			vs = append(vs, v)
		}
	}
	sort.SliceStable(vs, func(i, j int) bool {
		if vs[i].primary != vs[j].primary {
			return vs[i].primary
		}
		return vs[i].finding.Impact > vs[j].finding.Impact
	})
	seen := map[string]bool{}
	for _, v := range vs {
		r.Diagnosis = append(r.Diagnosis, v.finding)
		for k, s := range v.suggestions {
			if seen[s] {
				continue
			}
			seen[s] = true
			r.Suggestions = append(r.Suggestions, Suggestion{ID: fmt.Sprintf("%s-%d", v.finding.ID, k+1), Text: s, Reason: v.finding.ID})
		}
	}
	saturated := r.Classification == "gpu-bound" && r.GPUBusyPct >= 90
	if len(r.Suggestions) < minSuggestions && !saturated {
		for _, s := range genericSuggestions(c) {
			if len(r.Suggestions) >= minSuggestions {
				break
			}
			if !seen[s] {
				seen[s] = true
				r.Suggestions = append(r.Suggestions, Suggestion{ID: fmt.Sprintf("general-%d", len(r.Suggestions)+1), Text: s, Reason: "classification"})
			}
		}
	}
}

func genericSuggestions(c *ruleCtx) []string {
	if !c.x.hasGPU {
		return []string{suggestInferenceMode, suggestThreads, suggestBatchCPU}
	}
	return []string{suggestCUDAGraphs, suggestBatch, suggestNativeCollector}
}
