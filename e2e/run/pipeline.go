// SPDX-License-Identifier: Apache-2.0

package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kep5018/adminaccess-conformance/clusters/gobuild"
	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/e2e/bench"
	"github.com/kep5018/adminaccess-conformance/e2e/matrix"
	"github.com/kep5018/adminaccess-conformance/e2e/signoff"
	"github.com/kep5018/adminaccess-conformance/testdriver/image"
)

// Exit codes of a run, beside the sign-off's (signoff.ExitFailed, ...).
const (
	// ExitRefused: a variable was refused before anything was built.
	ExitRefused = 2
	// ExitInterrupted: Ctrl-C ended the release or column that ran, and no
	// other ran.
	ExitInterrupted = 130
)

// Pipeline runs a run's steps, printing on Stdout and Stderr.
type Pipeline struct {
	Stdout, Stderr io.Writer
	// start runs a command to its end, in the repository and with the
	// run's variables in its environment; tests record instead.
	start       func(Config, *exec.Cmd) error
	buildDriver buildDriver
	// compileSuite builds the suite's test binary for Ginkgo to run and
	// says where it is ("": Ginkgo compiles); tests replace it.
	compileSuite func(context.Context, Config) string
	// preflight is Preflight, which tests replace: it asks Docker and
	// clusters.
	preflight func(context.Context, Config) []string
	// MakeStarted is when make started (the Makefile's --make-started),
	// zero where the runner was started otherwise. The first release's
	// timeline then begins with the time until its first step, which no
	// step of the runner's own can time: on a fresh machine, the compile of
	// the runner and e2e-cluster, Docker's and debootstrap's installs and
	// the preflight. That release clears it.
	MakeStarted time.Time
}

// New is a pipeline that runs commands and builds images.
func New(stdout, stderr io.Writer) *Pipeline {
	return &Pipeline{Stdout: stdout, Stderr: stderr, start: runCommand, buildDriver: image.BuildContext, compileSuite: compileSuite, preflight: Preflight}
}

func runCommand(c Config, cmd *exec.Cmd) error {
	cmd.Dir, cmd.Env = c.Root(), gobuild.Environ(c.Environ(os.Environ()))
	return cmd.Run()
}

// Command is a command run in the repository with the run's variables in
// its environment, its output the run's.
func (c Config) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = c.Root(), gobuild.Environ(c.Environ(os.Environ()))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd
}

// WithInterrupt is ctx, ended by Ctrl-C, which no longer ends the process:
// the command that runs gets Ctrl-C from the terminal and ends (Ginkgo
// after its cleanup, which deletes the cluster), while the run, which
// reads its output, waits for it, starts no further step, release or
// column, writes the sign-off of what ran and exits 130. The pipeline's
// methods take that ctx; its commands are not killed with it.
func WithInterrupt(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt)
}

func (p *Pipeline) say(format string, a ...any) { fmt.Fprintf(p.Stdout, format+"\n", a...) }

// Preflight prints each bad variable on a line of its own ("e2e: ...")
// and returns ExitRefused, or 0 where none is; ExitInterrupted, and
// nothing said, where Ctrl-C cut it short.
func (p *Pipeline) Preflight(ctx context.Context, c Config) int {
	problems := p.preflight(ctx, c)
	if ctx.Err() != nil {
		return ExitInterrupted
	}
	for _, line := range problems {
		fmt.Fprintln(p.Stderr, "e2e:", line)
	}
	if len(problems) > 0 {
		return ExitRefused
	}
	return 0
}

// RunRelease is make e2e-release: one release, its exit code the suite's
// (1 where a step before it failed).
func (p *Pipeline) RunRelease(ctx context.Context, c Config) int {
	err := p.Release(ctx, c)
	var bad refused
	if errors.As(err, &bad) {
		fmt.Fprintln(p.Stderr, "e2e:", bad.err)
		return ExitRefused
	}
	return signoff.ExitCode(err, func(err error) {
		fmt.Fprintf(p.Stderr, "e2e: Kubernetes %s, %v\n", c.Get("K8S_VERSION"), err)
	})
}

// refused is a release's run that cannot be resolved (resolved.New): bad
// input, which make e2e's preflight refuses before, and make e2e-release,
// which has none, refuses in its one line.
type refused struct{ err error }

func (r refused) Error() string { return r.err.Error() }

// release runs one release and says whether it passed.
func (p *Pipeline) release(ctx context.Context, c Config) bool { return p.RunRelease(ctx, c) == 0 }

// E2E is make e2e: preflight, then each release of K8S_VERSIONS in turn
// (with DEVICE_CLASS=a,b each class a run of its own, its report in
// ARTIFACTS/classes/<class>), then the sign-off of what ran, and closing
// lines that say what the exit code means. It exits 0 where every release
// passed and the sign-off signed off, or where what ran passed but is not
// a sign-off (a filter left specs out: the last line says so); 1 where a
// release or the sign-off failed; signoff.ExitClusterBroke where the
// cluster broke under a run and nothing failed otherwise; ExitRefused;
// ExitInterrupted.
func (p *Pipeline) E2E(ctx context.Context, c Config) int {
	if code := p.Preflight(ctx, c); code != 0 {
		return code
	}
	// The columns this run makes, named once: the sign-off judges these.
	// A patch (K8S_VERSION=1.35.4) is no column of the matrix: it runs, and
	// the sign-off then says why it cannot judge it.
	columns, _ := matrix.Columns(c.Get("K8S_VERSIONS"), c.Get("FEATURES"))
	artifacts, classes := c.Get("ARTIFACTS"), c.Classes()
	if classes != nil {
		os.RemoveAll(filepath.Join(artifacts, "classes"))
	}
	var failed []string
	for _, v := range c.Releases() {
		if ctx.Err() != nil {
			break
		}
		p.say("=== e2e: Kubernetes %s, profile %s, DRA feature set %s", v, c.Get("PROFILE"), c.Get("FEATURES"))
		name := c.ClusterName(v)
		if name != c.Get("CLUSTER_NAME") {
			p.say("e2e: KEEP_CLUSTER=1 with several releases: this one's cluster is %s", name)
		}
		rc := c.With("K8S_VERSION", v).With("CLUSTER_NAME", name)
		if classes == nil {
			if !p.release(ctx, rc) {
				failed = append(failed, v)
			}
			continue
		}
		for _, class := range classes {
			if ctx.Err() != nil {
				break
			}
			p.say("=== e2e: DEVICE_CLASS=%s", class)
			if !p.release(ctx, rc.With("DEVICE_CLASS", class).With("ARTIFACTS", filepath.Join(artifacts, "classes", class))) {
				failed = append(failed, v+" (class "+class+")")
			}
		}
	}
	src := signoff.Sources{Artifacts: []string{artifacts}, Columns: columns, Releases: c.Get("K8S_VERSIONS"), Features: c.Get("FEATURES")}
	if classes != nil {
		src = signoff.Sources{Cells: []string{filepath.Join(artifacts, "classes")}, Out: artifacts, Columns: columns, Releases: src.Releases, Features: src.Features}
	}
	signed := signoff.Collect(src, p.Stdout, p.Stderr)
	switch {
	case ctx.Err() != nil:
		p.say("e2e: interrupted; releases after it were not run")
		return ExitInterrupted
	case signed == signoff.ExitClusterBroke:
		// Its specs failed, but because the cluster broke: said before
		// "failed", which would read as failed requirements.
		p.say("e2e: the cluster broke under the run (exit %d), not the requirements: the verdict above says what broke and when; run again on a cluster that holds", signoff.ExitClusterBroke)
		return signoff.ExitClusterBroke
	case len(failed) > 0:
		p.say("e2e: failed for Kubernetes %s (reports in %s)", strings.Join(failed, " "), artifacts)
		return 1
	case signed == signoff.ExitSignedOff:
		return 0
	case signed == signoff.ExitLeftOut:
		p.say("e2e: what ran passed (exit 0), but it is not a sign-off: the verdict above says what was left out")
		return 0
	default:
		p.say("e2e: the specs passed, but the sign-off failed (exit 1): the verdict above says why")
		return 1
	}
}

// Signoff is make signoff: every column of K8S_VERSIONS (each DRA feature
// set a release lists, or FEATURES given on make's command line), one
// after another, each on one cluster with the label filter its cells
// select together, then the merged sign-off in ARTIFACTS/signoff, with
// each column's wall time in seconds.tsv. It exits as the sign-off does,
// ExitRefused, or ExitInterrupted.
func (p *Pipeline) Signoff(ctx context.Context, c Config) int {
	if code := p.Preflight(ctx, c); code != 0 {
		return code
	}
	dir := filepath.Join(c.Get("ARTIFACTS"), "signoff")
	if err := errors.Join(os.RemoveAll(dir), os.MkdirAll(filepath.Join(dir, "cells"), 0o755)); err != nil {
		fmt.Fprintln(p.Stderr, "signoff:", err)
		return 1
	}
	features := "all"
	if c.Given("FEATURES") {
		features = c.Get("FEATURES")
	}
	columns, err := matrix.Columns(c.Get("K8S_VERSIONS"), features)
	groups, gerr := matrix.GroupsFor(c.Get("LABELS"))
	if err = errors.Join(err, gerr); err != nil {
		fmt.Fprintln(p.Stderr, "matrix:", err)
		return ExitRefused
	}
	start, ran := time.Now(), 0
	var failed, seconds []string
	for _, col := range columns {
		if ctx.Err() != nil {
			break
		}
		p.say("=== signoff: Kubernetes %s, DRA feature set %s (allocator %s)", col.Release, col.Features, col.Allocator)
		t := time.Now()
		cc := c.With("K8S_VERSION", col.Release).With("FEATURES", col.Features).With("LABELS", matrix.Union(groups)).
			With("ARTIFACTS", filepath.Join(dir, "cells", col.Release+"-"+col.Features))
		if !p.release(ctx, cc) {
			failed = append(failed, col.Release+" "+col.Features)
		}
		ran++
		seconds = append(seconds, fmt.Sprintf("%s\t%s\t%d\n", col.Release, col.Features, int(time.Since(t).Seconds())))
		if err := os.WriteFile(filepath.Join(dir, "seconds.tsv"), []byte(strings.Join(seconds, "")), 0o644); err != nil {
			fmt.Fprintln(p.Stderr, "signoff:", err)
		}
	}
	p.say("signoff: %d columns in %d s (per column: %s)", ran, int(time.Since(start).Seconds()), filepath.Join(dir, "seconds.tsv"))
	rc := signoff.Collect(signoff.Sources{Cells: []string{filepath.Join(dir, "cells")}, Columns: columns, Out: dir}, p.Stdout, p.Stderr)
	if ctx.Err() != nil {
		p.say("signoff: interrupted; columns after it were not run")
		return ExitInterrupted
	}
	if len(failed) > 0 {
		p.say("signoff: failed for %s", strings.Join(failed, ", "))
	}
	return rc
}

// Bench is make bench: one whole run of K8S_VERSION with its cluster kept
// (reports in ARTIFACTS/bench), then each component's gate moved off and
// on BENCH_REPEAT times there, and the table, also in
// ARTIFACTS/bench/<release>/bench.md. The cluster is deleted at the end,
// unless KEEP_CLUSTER=1.
func (p *Pipeline) Bench(ctx context.Context, c Config) int {
	if code := p.Preflight(ctx, c); code != 0 {
		return code
	}
	rc := 0
	run := c.With("KEEP_CLUSTER", "1").With("ARTIFACTS", filepath.Join(c.Get("ARTIFACTS"), "bench"))
	if !p.release(ctx, run) {
		rc = 1
	}
	dir := run.releaseDir()
	repeat, _ := strconv.Atoi(c.Get("BENCH_REPEAT")) // checked by Preflight
	name := c.Get("CLUSTER_NAME")
	if err := bench.Run([]string{filepath.Join(dir, "report.json")}, name, "", repeat, filepath.Join(dir, "bench.md")); err != nil {
		fmt.Fprintln(p.Stderr, "bench:", err)
		rc = 1
		// The suite's logs were taken when it ended; a move that fails after
		// it is read in the cluster as it is now (the kubelets' journals, the
		// static pods' logs), before the cluster goes. kind collects what it
		// can and names what it could not read.
		logs := filepath.Join(dir, "bench-logs")
		p.say("bench: the cluster's logs after the failed move are in %s", logs)
		if err := kindcluster.ExportLogs(name, logs); err != nil {
			fmt.Fprintln(p.Stderr, "bench: some of the cluster's logs could not be read:", err)
		}
	}
	if c.Get("KEEP_CLUSTER") == "1" {
		p.say("bench: cluster %s kept (KEEP_CLUSTER=1)", name)
	} else if err := kindcluster.Delete(name); err != nil {
		fmt.Fprintln(p.Stderr, "bench:", err)
		rc = 1
	}
	return rc
}
