// SPDX-License-Identifier: Apache-2.0

//go:build linux

package run

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// A runner killed with SIGKILL runs no deferred stop: its getter must end
// anyway. The test binary plays the runner (ENDS_WITH_RUNNER_CHILD): it
// starts a child as the getter is started, prints its pid and waits to be
// killed.
func TestGetterEndsWhenTheRunnerIsKilled(t *testing.T) {
	if os.Getenv("ENDS_WITH_RUNNER_CHILD") == "1" {
		child := exec.Command("sleep", "60")
		endsWithRunner(child)
		if err := child.Start(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(child.Process.Pid)
		child.Wait()
		os.Exit(0)
	}
	runner := exec.Command(os.Args[0], "-test.run=^TestGetterEndsWhenTheRunnerIsKilled$")
	runner.Env = append(os.Environ(), "ENDS_WITH_RUNNER_CHILD=1")
	out, err := runner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(line[:max(len(line)-1, 0)])
	if err != nil || perr != nil {
		runner.Process.Kill()
		t.Fatalf("the runner said %q (%v, %v)", line, err, perr)
	}
	runner.Process.Kill()
	runner.Wait()
	// Gone, or a zombie that no init reaps (in a container without one).
	gone := func(context.Context) (bool, error) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true, nil
		}
		_, after, _ := strings.Cut(string(stat), ") ")
		return strings.HasPrefix(after, "Z"), nil
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, gone); err != nil {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the getter (pid %d) still ran 10 s after its runner was killed: %v", pid, err)
	}
}
