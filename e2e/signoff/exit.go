// SPDX-License-Identifier: Apache-2.0

package signoff

import (
	"errors"
	"os/exec"
)

// ExitCode is the exit code a run passes on from a step that ran a
// command (the runner's Ginkgo, the in-cluster entry's suite binary): the
// command's own where it exited non-zero (it said why), 1 where a signal
// ended it (which says nothing more) or where the step failed otherwise,
// which say is told. It is here, beside the sign-off's codes, so that the
// in-cluster entry need not link the runner for it.
func ExitCode(err error, say func(error)) int {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode()
	case errors.As(err, &exit):
		return 1
	default:
		say(err)
		return 1
	}
}
