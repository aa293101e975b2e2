// SPDX-License-Identifier: Apache-2.0

package kindcluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// kind's create runs kubeadm init (and docker) through its pkg/exec, which
// keeps a failed command's output in the *exec.RunError it returns; the
// error's text names only the command and its exit status, and kind deletes
// the failed nodes, so that output (kubeadm's account of why the control
// plane did not come up) is the only trace of the failure. The kind CLI
// prints it; a library caller must keep it or lose it.

// outputTail is how many of the output's last lines an error carries where
// no file can hold the output.
const outputTail = 40

// keepRunOutput returns err with the output of the command it wraps kept:
// written to file in dir, the error saying where, or where dir is "" or
// cannot be written, its last outputTail lines in the error. An error that
// wraps no command's output is returned as it is.
func keepRunOutput(err error, dir, file string) error {
	if err == nil {
		return nil
	}
	// kind wraps with github.com/pkg/errors (Cause), which RunErrorForError
	// follows; errors.As covers a chain made with fmt's %w.
	run := kindexec.RunErrorForError(err)
	if run == nil && !errors.As(err, &run) {
		return err
	}
	output := bytes.TrimRight(run.Output, "\n")
	if len(bytes.TrimSpace(output)) == 0 {
		return err
	}
	command := "the failed command"
	if len(run.Command) > 0 {
		command = run.PrettyCommand()
	}
	if dir == "" {
		return fmt.Errorf("%w\nthe last lines of the output of %s:\n%s", err, command, lastLines(output, outputTail))
	}
	path := filepath.Join(dir, file)
	werr := os.MkdirAll(dir, 0o755)
	if werr == nil {
		werr = os.WriteFile(path, fmt.Appendf(nil, "$ %s\n%s\n", command, output), 0o644)
	}
	if werr != nil {
		return fmt.Errorf("%w\n(not kept in %s: %v) the last lines of the output of %s:\n%s", err, path, werr, command, lastLines(output, outputTail))
	}
	return fmt.Errorf("%w (the output of %s is in %s)", err, command, path)
}

// lastLines is the last n lines of out.
func lastLines(out []byte, n int) string {
	lines := strings.Split(string(out), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
