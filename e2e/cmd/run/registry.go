// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kep5018/adminaccess-conformance/e2e/run"
)

// registryUp is make registry-up: the registry on this machine
// (testdriver-registry: the CNCF distribution registry's handler, built
// from its Go module), in a session of its own so that it outlives the
// make that started it, its data and log under _output/registry. It has
// no authentication, so it listens only on the loopback at REGISTRY_PORT
// and, once kind's network exists, on that network's gateway, where kind's
// nodes reach this machine. It returns once the registry answers.
func registryUp(c run.Config) int {
	port, dir := c.Get("REGISTRY_PORT"), filepath.Join(c.Out(), "registry")
	pidFile, logFile := filepath.Join(dir, "pid"), filepath.Join(dir, "registry.log")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "registry-up:", err)
		return 1
	}
	if pid, ok := registryPID(pidFile); ok && syscall.Kill(pid, 0) == nil {
		fmt.Printf("registry-up: serving already on localhost:%s\n", port)
		return 0
	}
	bin := c.Out() + "/bin/testdriver-registry"
	if err := c.Command("go", "build", "-o", bin, "./testdriver/cmd/testdriver-registry").Run(); err != nil {
		return exitCode(err)
	}
	log, err := os.Create(logFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "registry-up:", err)
		return 1
	}
	defer log.Close()
	cmd := c.Command(bin, "--port", port, "--root", filepath.Join(dir, "data"))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "registry-up:", err)
		return 1
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "registry-up:", err)
		return 1
	}
	ended := make(chan struct{})
	go func() { cmd.Wait(); close(ended) }()
	// A look a second, for half a minute, or until the registry ended.
	tick, deadline := time.NewTicker(time.Second), time.After(30*time.Second)
	defer tick.Stop()
	for !answers(port) {
		select {
		case <-tick.C:
			continue
		case <-ended:
		case <-deadline:
		}
		fmt.Fprintf(os.Stderr, "registry-up: the registry did not answer on localhost:%s (see %s)\n", port, logFile)
		return 1
	}
	fmt.Printf("registry-up: serving on localhost:%s and, for kind's nodes, on the kind network's gateway (log: %s)\n", port, logFile)
	return 0
}

// answers says whether the registry at port serves its API.
func answers(port string) bool {
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://localhost:" + port + "/v2/")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode < 400
}

// registryDown is make registry-down: the registry registry-up started is
// stopped.
func registryDown(c run.Config) int {
	pidFile := filepath.Join(c.Out(), "registry", "pid")
	if _, err := os.Stat(pidFile); err != nil {
		return 0
	}
	if pid, ok := registryPID(pidFile); ok {
		syscall.Kill(pid, syscall.SIGTERM) // gone already is stopped too
	}
	os.Remove(pidFile)
	fmt.Println("registry-down: stopped")
	return 0
}

func registryPID(pidFile string) (int, bool) {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, err == nil && pid > 0
}
