package driver

import "fmt"

// ExitError carries a workload's exit status through to the process exit.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("workload exited with status %d", e.Code) }
