package driver

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/inferscope/inferscope/internal/probe"
	"github.com/inferscope/inferscope/internal/run"
)

// DoctorRequest is one `inferscope doctor` invocation.
type DoctorRequest struct {
	Python  string        // the workload's interpreter, asked about sys.path and torch
	Timeout time.Duration // for that interpreter; importing torch is slow
	Build   bool          // build the CUPTI collector now
	JSON    bool
}

// DoctorReport is doctor's answer; --json prints it as is.
type DoctorReport struct {
	Checks    []probe.Check `json:"checks"`
	Collector string        `json:"collector"` // what `run --collector auto` would use
	Reason    string        `json:"reason"`
	Library   string        `json:"library,omitempty"` // the built collector, with --build
	Facts     probe.Facts   `json:"facts"`
}

// Doctor says what this machine can collect and why, one check per fact
// with the fix for each problem, then the collector `run` would pick.
func Doctor(req DoctorRequest, stdout io.Writer) error {
	rep := Diagnose(req)
	if req.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("write the doctor report: %w", err)
		}
		return nil
	}
	for _, c := range rep.Checks {
		fmt.Fprintf(stdout, "%-4s  %-9s  %s\n", c.Status, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(stdout, "%-4s  %-9s  fix: %s\n", "", "", c.Fix)
		}
	}
	if _, err := fmt.Fprintf(stdout, "collector: %s — %s\n", rep.Collector, rep.Reason); err != nil {
		return fmt.Errorf("write the doctor report: %w", err)
	}
	return nil
}

// Diagnose gathers the facts, Python's included, and judges them the way
// `run --collector auto` does.
func Diagnose(req DoctorRequest) DoctorReport {
	h := probe.Local()
	f := probe.Collect(h, req.Python)
	f.AddPython(h, req.Python, req.Timeout)
	tk, haveTK := f.BestCUPTI()
	if haveTK {
		f.CachedLib = run.CachedCUPTILibrary(tk)
	}
	var rep DoctorReport
	var buildErr error
	if req.Build && (haveTK || f.Prebuilt != "") {
		rep.Library, buildErr = run.CUPTILibrary(tk)
		if buildErr == nil && f.Prebuilt == "" {
			f.CachedLib = rep.Library
		}
	}
	rep.Checks = probe.Checklist(f)
	rep.Collector, rep.Reason = probe.Choose(f)
	switch {
	case !req.Build:
	case buildErr != nil:
		rep.Checks = append(rep.Checks, probe.Check{Name: "build", Status: probe.Fail, Detail: buildErr.Error(),
			Fix: "fix what the compiler says, or use --collector torch"})
		if rep.Collector == "cupti" {
			rep.Collector, rep.Reason = "torch", "the CUPTI collector did not build; falling back to torch.profiler"
		}
	case rep.Library != "":
		rep.Checks = append(rep.Checks, probe.Check{Name: "build", Status: probe.OK, Detail: "built " + rep.Library})
	default:
		rep.Checks = append(rep.Checks, probe.Check{Name: "build", Status: probe.Warn, Detail: "nothing to build against: no usable CUPTI"})
	}
	rep.Facts = f
	return rep
}
