// SPDX-License-Identifier: Apache-2.0

//go:build linux

package run

import (
	"os/exec"
	"syscall"
)

// endsWithRunner has the kernel send cmd Ctrl-C (SIGINT) when the runner
// dies without stopping it: killed with SIGKILL, no deferred stop runs, and
// a getter beside the steps would build on alone for minutes. SIGINT, not
// SIGKILL, so that it removes what it made (a build container) as on
// Ctrl-C. The signal follows the thread that started cmd, and Go ends a
// thread only where a goroutine locked to it ends, which the runner never
// does.
func endsWithRunner(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGINT
}
