package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Python is what the workload's interpreter says about itself.
type Python struct {
	Interpreter   string `json:"interpreter"`
	Executable    string `json:"executable,omitempty"`
	Version       string `json:"version,omitempty"`
	Torch         string `json:"torch,omitempty"`      // torch.__version__; "" when it does not import
	TorchCUDA     string `json:"torch_cuda,omitempty"` // torch.version.cuda; "" for a CPU build
	CUDAAvailable bool   `json:"cuda_available"`
	TorchError    string `json:"torch_error,omitempty"`
	Error         string `json:"error,omitempty"` // the interpreter did not answer
}

// The first line comes before `import torch` and is flushed, so a torch
// import that hangs past the deadline still leaves sys.path behind.
const pythonScript = `import sys, json
print(json.dumps({"executable": sys.executable, "version": sys.version.split()[0], "path": sys.path}), flush=True)
try:
    import torch
    r = {"torch": torch.__version__, "torch_cuda": torch.version.cuda or "", "cuda_available": bool(torch.cuda.is_available())}
except BaseException as e:
    r = {"torch_error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")}
print(json.dumps(r), flush=True)
`

// AddPython runs interpreter once (importing torch can take many seconds,
// hence the timeout) and adds the CUPTI wheels found on its sys.path.
func (f *Facts) AddPython(h Host, interpreter string, timeout time.Duration) {
	py := &Python{Interpreter: interpreter}
	f.Python = py
	out, err := h.output(timeout, interpreter, "-c", pythonScript)
	var first struct {
		Executable, Version string
		Path                []string
	}
	var second struct {
		Torch         string `json:"torch"`
		TorchCUDA     string `json:"torch_cuda"`
		CUDAAvailable bool   `json:"cuda_available"`
		TorchError    string `json:"torch_error"`
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "{") {
			continue // something torch or a sitecustomize printed
		}
		switch n {
		case 0:
			if json.Unmarshal([]byte(line), &first) == nil {
				n++
			}
		case 1:
			if json.Unmarshal([]byte(line), &second) == nil {
				n++
			}
		}
	}
	py.Executable, py.Version = first.Executable, first.Version
	py.Torch, py.TorchCUDA, py.CUDAAvailable, py.TorchError = second.Torch, second.TorchCUDA, second.CUDAAvailable, second.TorchError
	switch {
	case n == 0 && err != nil:
		py.Error = fmt.Sprintf("%s did not run: %v", interpreter, err)
	case n == 0:
		py.Error = fmt.Sprintf("%s printed no answer", interpreter)
	case n == 1 && errors.Is(err, context.DeadlineExceeded):
		py.TorchError = fmt.Sprintf("import torch took longer than %s", timeout)
	case n == 1:
		py.TorchError = fmt.Sprintf("the torch check did not finish: %v", err)
	}
	var dirs []string
	for _, p := range first.Path {
		if p != "" && h.isDir(p) {
			dirs = append(dirs, p)
		}
	}
	f.addWheels(h, dirs)
}
