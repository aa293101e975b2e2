// SPDX-License-Identifier: Apache-2.0

// Package bench times where a release's run spends its time: the timeline
// of one or more suite runs (report.json: images, cluster, driver, spec
// groups, gate moves, release switches, the whole suite) and, on a cluster
// the run kept, each component's gate move off and on repeated, with
// minimum, median and maximum. make bench (e2e/run, after a run that kept
// its cluster) and e2e/cmd/bench call it; docs/benchmarks.md keeps its
// results.
package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/resolved"
	"github.com/kep5018/adminaccess-conformance/e2e/timeline"
)

// Run prints the table of the reports' timelines and, with a cluster, of
// repeat gate and feature-set moves on it, the cluster of the first
// report's run (its release and feature set are the run's, run.json beside
// the report); out, where given, gets the table too.
func Run(files []string, cluster, kubeconfig string, repeat int, out string) error {
	s := newSamples()
	for _, f := range files {
		r, err := report.Read(f)
		if err != nil {
			return err
		}
		s.fromReport(r)
	}
	note := ""
	if cluster != "" {
		if len(files) == 0 {
			return fmt.Errorf("a cluster's moves need the report of the run that kept it")
		}
		// What the run resolved, not a release string read again.
		run, err := resolved.Read(filepath.Join(filepath.Dir(files[0]), resolved.FileName))
		if err != nil {
			return fmt.Errorf("the run of %s: %w", files[0], err)
		}
		rel, err := run.Rel()
		if err != nil {
			return err
		}
		n, err := timeMoves(s, cluster, kubeconfig, rel, repeat)
		if err != nil {
			return err
		}
		note = n
	}
	text := fmt.Sprintf("Machine: %s\n\n%s\n%s", machine(), note, markdown(s.rows()))
	fmt.Print(text)
	if out != "" {
		return os.WriteFile(out, []byte(text), 0o644)
	}
	return nil
}

// timeMoves switches each component's gate off and on `repeat` times on the
// kept cluster (where the gate is not locked), and moves kube-scheduler to
// each other DRA feature set of the release and back as often; each move ends
// when the component serves on its new flags.
func timeMoves(s *samples, cluster, kubeconfig string, rel release.Release, repeat int) (string, error) {
	c, err := kindcluster.Attach(cluster, rel, kubeconfig)
	if err != nil {
		return "", err
	}
	ctx := context.Background()
	var notes []string
	if _, locked := rel.DeclaredSkip(release.NeedGateSwitching, release.Mode{}); locked {
		notes = append(notes, fmt.Sprintf("Gate moves: none on Kubernetes %s, where %s is locked on.", rel.Minor, release.Gate))
	} else {
		for i := 0; i < repeat; i++ {
			for _, comp := range profile.AllComponents {
				for _, enable := range []bool{false, true} {
					took, err := c.SetAdminAccess(ctx, comp, enable)
					if err != nil {
						return "", fmt.Errorf("%s %s=%t: %w", comp, release.Gate, enable, err)
					}
					name := fmt.Sprintf("%s %s=%t", comp, release.Gate, enable)
					s.add(timeline.KindMove, name, took.Seconds())
					fmt.Fprintf(os.Stderr, "bench: %s in %s\n", name, took.Round(100*time.Millisecond))
				}
			}
		}
		notes = append(notes, fmt.Sprintf("Gate moves: each component off and on %d times on cluster %s, besides the suite's own moves.", repeat, cluster))
	}
	sets := rel.FeatureSets()
	for i := 0; i < repeat; i++ {
		for _, set := range sets[1:] {
			for _, to := range []release.FeatureSet{set, sets[0]} {
				took, err := c.MoveSchedulerTo(ctx, to)
				if err != nil {
					return "", fmt.Errorf("kube-scheduler to %s: %w", to.Name, err)
				}
				name := "kube-scheduler to DRA feature set " + to.Name
				s.add(timeline.KindMove, name, took.Seconds())
				fmt.Fprintf(os.Stderr, "bench: %s in %s\n", name, took.Round(100*time.Millisecond))
			}
		}
	}
	if len(sets) > 1 {
		notes = append(notes, fmt.Sprintf("Feature-set moves: kube-scheduler to each of the release's %d other DRA feature sets and back, %d times.", len(sets)-1, repeat))
	}
	return strings.Join(notes, "\n") + "\n", nil
}

// machine names what the figures were measured on, load included.
func machine() string {
	read := func(path string) string {
		b, _ := os.ReadFile(path)
		return strings.TrimSpace(string(b))
	}
	mem := ""
	for _, line := range strings.Split(read("/proc/meminfo"), "\n") {
		if strings.HasPrefix(line, "MemTotal:") {
			mem = strings.Join(strings.Fields(line)[1:], " ")
		}
	}
	docker, _ := exec.Command("docker", "version", "--format", "{{.Server.Version}}").Output()
	load := strings.Join(strings.Fields(read("/proc/loadavg"))[:3], " ")
	return fmt.Sprintf("%d CPUs, %s memory, Linux %s, Docker %s, load average %s, %s",
		runtime.NumCPU(), mem, read("/proc/sys/kernel/osrelease"), strings.TrimSpace(string(docker)), load, time.Now().UTC().Format("2006-01-02 15:04 MST"))
}
