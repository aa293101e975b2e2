// SPDX-License-Identifier: Apache-2.0

package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kep5018/adminaccess-conformance/clusters/gobuild"
	"github.com/kep5018/adminaccess-conformance/clusters/nodesource"
	// pipe: the package's tests name their Pipeline maker pipeline.
	pipe "github.com/kep5018/adminaccess-conformance/clusters/pipeline"
	"github.com/kep5018/adminaccess-conformance/e2e/resolved"
	"github.com/kep5018/adminaccess-conformance/testdriver/image"
	"github.com/onsi/ginkgo/v2/types"
)

// step is one named part of a release's run (clusters/pipeline, as kind's
// create is a pipeline of named steps): each works on what the steps
// before built. A step takes no context: what it starts gets Ctrl-C from
// the terminal and must clean up to its end; the pipeline starts no step
// after one.
type step = pipe.Step[*built]

// releaseSteps are one release's steps: the builds of this repository's
// code the suite needs, started beside the steps after them; on clusters
// the suite makes, unless UPGRADE=0, the next release's bits for the
// upgrade spec, got beside every step after it, and the release's node
// image; the bundled driver's image (or the pushed one named), as built
// beside; the suite's compile, as done beside; the suite.
func (p *Pipeline) releaseSteps(c Config) []step {
	of := func(name string, run func(Config, *built) error) step {
		return step{Name: name, Run: func(b *built) error { return run(c, b) }}
	}
	steps := []step{of("builds beside", p.buildsBeside)}
	if !c.Existing() {
		if c.Get("UPGRADE") != "0" {
			steps = append(steps, of("next release's bits", p.upgradeBits))
		}
		steps = append(steps, of("node image", p.nodeImage))
	}
	return append(steps, of("driver image", p.driverImage), of("suite's compile", p.suiteCompile), of("ginkgo", p.ginkgo))
}

// Release runs one release, K8S_VERSION, on CLUSTER_NAME: no preflight and
// no sign-off (make e2e-release; make e2e runs it per release). The error
// of a failed suite is its *exec.ExitError.
func (p *Pipeline) Release(ctx context.Context, c Config) error {
	b := &built{nodeImage: "none", timeline: filepath.Join(c.Out(), "timeline-"+c.Get("K8S_VERSION")+".tsv")}
	// What runs beside the steps ends with the release.
	defer func() {
		for _, stop := range b.stopBeside {
			stop()
		}
	}()
	if err := os.MkdirAll(c.Out(), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(b.timeline, nil, 0o644); err != nil {
		return err
	}
	if err := p.timeBeforeSteps(b); err != nil {
		return err
	}
	// The one resolve of the release's run: the steps and the suite read
	// it, none resolves the release or decides the upgrade again.
	r, err := resolved.New(c.inputs(b.timeline))
	if err != nil {
		return refused{err}
	}
	b.run = r
	return pipe.Run(b, p.releaseSteps(c), pipe.Hooks{Ctx: ctx})
}

// BeforeSteps is the timeline's name for the time from make's start to the
// first release's first step.
const BeforeSteps = "make until the first release's steps (the runner's and e2e-cluster's compile, Docker, tools, preflight)"

// timeBeforeSteps puts BeforeSteps on the first release's timeline, once
// per run: a later release's steps wait for the releases before it, not
// for the set-up. make gives its start in whole seconds; a clock that
// stepped back, or a start handed over a day later, times nothing.
func (p *Pipeline) timeBeforeSteps(b *built) error {
	if p.MakeStarted.IsZero() {
		return nil
	}
	took := time.Since(p.MakeStarted)
	p.MakeStarted = time.Time{}
	if took < 0 || took > 24*time.Hour {
		return nil
	}
	return timedFor(b, BeforeSteps, took)
}

// timed adds a step that took since start to the release's timeline file
// (name, a tab, milliseconds; e2e/timeline reads it into the report).
func timed(b *built, name string, start time.Time) error {
	return timedFor(b, name, time.Since(start))
}

// timedFor adds a step that took took, beside the others.
func timedFor(b *built, name string, took time.Duration) error {
	f, err := os.OpenFile(b.timeline, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s\t%d\n", name, took.Milliseconds())
	return errors.Join(err, f.Close())
}

func (p *Pipeline) nodeImage(c Config, b *built) error {
	start := time.Now()
	ref, err := p.clusterTool(c, "node-image.out", "node-image", "--release", c.Get("K8S_VERSION"), "--source", c.Get("NODE_IMAGE"), "--out", c.Out())
	if err != nil {
		return err
	}
	b.nodeImage = ref
	return timed(b, "node image "+ref, start)
}

// upgradeBits starts getting the next release's kubelet and control-plane
// images for the in-place upgrade spec (e2e-cluster upgrade-bits) beside the
// steps after it, and the suite waits for the status file it leaves
// (the run's Upgrade.Bits) only when that spec starts. Where no node image
// of that release is here or can be pulled, getting them is minutes of
// compiling: they are then built alone, at the lowest CPU priority, in the
// CPU the node image's build, the cluster's creation and the parallel specs
// leave idle. Only where the resolved run says the spec runs: not where the
// label filter leaves it out, the release is the newest, or a feature set
// other than the defaults makes it a declared skip.
func (p *Pipeline) upgradeBits(c Config, b *built) error {
	if !b.run.Upgrade.Runs {
		return nil
	}
	next, status := b.run.Upgrade.Next, b.run.Upgrade.Bits
	args := []string{"upgrade-bits", "--release", c.Get("K8S_VERSION"), "--features", c.Get("FEATURES"),
		"--source", c.Get("UPGRADE_NODE_IMAGE"), "--out", c.Out()}
	logPath := filepath.Join(c.Out(), "upgrade-bits-"+c.Get("K8S_VERSION")+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	if err := os.Remove(status); err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Close()
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, c.bin("e2e-cluster"), append(args, "--status", status)...)
	// Ended early (the suite is over, or failed before the upgrade spec):
	// Ctrl-C, so that it removes its build container, then a kill.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	endsWithRunner(cmd)
	cmd.Stdout, cmd.Stderr = log, log
	start, done := time.Now(), make(chan struct{})
	var took time.Duration
	var ended error
	go func() {
		defer close(done)
		defer log.Close()
		err := p.start(c, cmd)
		took, ended = time.Since(start), err
		// Ended without its last word (killed, or its disk full): the
		// suite must not wait on.
		nodesource.EndBitsStatus(status, fmt.Errorf("e2e-cluster upgrade-bits ended (%v) without saying what it got; its output is in %s", err, logPath))
	}()
	// Said at the release's end, so that no line of it cuts into Ginkgo's.
	b.stopBeside = append(b.stopBeside, func() {
		select {
		case <-done:
			if ended != nil {
				p.say("e2e: getting the Kubernetes %s bits for the upgrade spec beside the steps failed after %s: %v (%s)", next, took.Round(time.Second), ended, logPath)
				break
			}
			p.say("e2e: the Kubernetes %s bits for the upgrade spec took %s beside the steps (%s)", next, took.Round(time.Second), logPath)
		default:
			cancel()
			<-done
			p.say("e2e: the Kubernetes %s bits for the upgrade spec were still being got when the release ended; stopped (%s)", next, logPath)
		}
		cancel()
	})
	p.say("e2e: the Kubernetes %s kubelet and control-plane images for the upgrade spec are got beside the steps below (%s)", next, logPath)
	return nil
}

// clusterTool runs e2e-cluster (make e2e-cli builds it) with its output
// shown and kept in the output folder's file keep (node-image.out), and
// returns what it got: the reference it writes into the file its
// --ref-file names (keep's name, .ref for .out), not a line of what people
// see.
func (p *Pipeline) clusterTool(c Config, keep string, args ...string) (string, error) {
	f, err := os.Create(filepath.Join(c.Out(), keep))
	if err != nil {
		return "", err
	}
	defer f.Close()
	refFile := filepath.Join(c.Out(), strings.TrimSuffix(keep, ".out")+".ref")
	// An earlier run's answer is not this one's.
	if err := os.Remove(refFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	// Not CommandContext: Ctrl-C reaches it from the terminal, and it
	// cleans up after itself (a build container) before it ends.
	cmd := exec.Command(c.bin("e2e-cluster"), slices.Concat(args, []string{"--ref-file", refFile})...)
	cmd.Stdout, cmd.Stderr = io.MultiWriter(p.Stdout, f), p.Stderr
	if err := p.start(c, cmd); err != nil {
		return "", err
	}
	ref, err := os.ReadFile(refFile)
	if err == nil && strings.TrimSpace(string(ref)) == "" {
		err = errors.New("it is empty")
	}
	if err != nil {
		return "", fmt.Errorf("e2e-cluster %s ended well but left no reference in %s: %w", args[0], refFile, err)
	}
	return strings.TrimSpace(string(ref)), nil
}

// buildsBeside starts building what the suite needs of this repository's
// code beside the steps after it: the bundled driver's image (unless the
// nodes pull TESTDRIVER_IMAGE), then the suite's test binary and Ginkgo's
// own command (compileSuite), which Ginkgo then runs instead of compiling
// them. The driver image step waits for the driver's. With the node
// images present, the driver's build is hidden and Ginkgo starts the specs
// 2 s after it starts instead of 6.5 s. On a cold machine the test
// binary's link and Ginkgo's command (16 s and 19 s alone) are done while
// the node image builds, instead of between it and the first spec.
func (p *Pipeline) buildsBeside(c Config, b *built) error {
	ctx, cancel := context.WithCancel(context.Background())
	driverBuilt, done := make(chan struct{}), make(chan struct{})
	var img image.Built
	var took time.Duration
	var err error
	go func() {
		defer close(done)
		start := time.Now()
		if c.Get("TESTDRIVER_IMAGE") == "" {
			img, err = p.buildDriver(ctx, c.Root(), filepath.Join(c.Out(), "testdriver"))
		}
		took = time.Since(start)
		close(driverBuilt)
		// A failed compile is Ginkgo's to report, with its own output;
		// after a failed driver build (or Ctrl-C) no Ginkgo runs.
		if err == nil {
			b.suiteBinary = p.compileSuite(ctx, c)
		}
	}()
	b.driver = func() (image.Built, time.Duration, error) {
		<-driverBuilt
		return img, took, err
	}
	// Ginkgo waits for it: two go commands compiling one package both
	// compile it.
	b.suiteCompiled = func() { <-done }
	b.stopBeside = append(b.stopBeside, func() { cancel(); <-done })
	return nil
}

func (p *Pipeline) driverImage(c Config, b *built) error {
	start := time.Now()
	if b.driverTag = c.Get("TESTDRIVER_IMAGE"); b.driverTag == "" {
		img, took, err := b.driver()
		if err != nil {
			return fmt.Errorf("testdriver-image: %w", err)
		}
		b.driverTag, b.driverArchive = img.Tag, img.Archive
		if err := timedFor(b, "test driver image "+b.driverTag, took); err != nil {
			return err
		}
		p.say("e2e: test driver image %s, built beside the steps before in %s (waited %s for it)", b.driverTag,
			took.Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond))
		return nil
	}
	if err := timed(b, "test driver image "+b.driverTag, start); err != nil {
		return err
	}
	p.say("e2e: test driver image %s", b.driverTag)
	return nil
}

// suiteCompile waits for the suite's compile beside the steps before: a
// step of its own, so that a Ctrl-C that ended the compile starts no
// Ginkgo (the pipeline checks between steps).
func (p *Pipeline) suiteCompile(c Config, b *built) error {
	b.suiteCompiled()
	return nil
}

// ginkgo runs the suite under go tool ginkgo, its output also in the
// release's e2e.log. The release's folder starts empty.
func (p *Pipeline) ginkgo(c Config, b *built) error {
	dir := c.releaseDir()
	if err := errors.Join(os.RemoveAll(dir), os.MkdirAll(dir, 0o755)); err != nil {
		return err
	}
	// Written into the release's folder, which starts empty: the suite
	// reads it (--run), and the report's readers find it beside the report.
	var err error
	if b.runFile, err = resolved.Write(dir, b.theRun()); err != nil {
		return err
	}
	args, err := c.GinkgoCommand(*b)
	if err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(dir, "e2e.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	// Ginkgo too gets Ctrl-C from the terminal: its cleanup must run to
	// its end.
	cmd := exec.Command("go", args...)
	out := io.MultiWriter(p.Stdout, log)
	cmd.Stdout, cmd.Stderr = out, out
	return p.start(c, cmd)
}

// buildDriver is the bundled driver's image build (image.BuildContext),
// which tests replace.
type buildDriver func(ctx context.Context, root, out string) (image.Built, error)

// suiteBinary is where compileSuite writes the suite's test binary,
// relative to the repository, where Ginkgo's own compile would put it: in
// the package's folder, the specs' working folder.
var suiteBinary = filepath.Join(".", "e2e", "e2e.test")

// compileSuite builds what Ginkgo would build before its first spec: its
// own command (go tool caches it) and the suite's test binary, as Ginkgo
// builds it (go test -c, the e2e tag, -s -w), which Ginkgo then runs
// precompiled. It says where the binary is, or "" where Ginkgo compiles
// the package itself: after a failed compile (Ginkgo's compile then
// reports why), or where GINKGO_ARGS holds a go build flag (-race, -cover,
// ...), which a binary built here would lack. What the go commands print
// goes to _output/suite-compile.log.
func compileSuite(ctx context.Context, c Config) string {
	log, err := os.Create(filepath.Join(c.Out(), "suite-compile.log"))
	if err != nil {
		return ""
	}
	defer log.Close()
	goCommand := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir, cmd.Env = c.Root(), gobuild.Environ(c.Environ(os.Environ()))
		// The go command's compiles outlive its kill; their output is not
		// waited for past that.
		cmd.WaitDelay = 5 * time.Second
		endsWithRunner(cmd)
		cmd.Stdout, cmd.Stderr = log, log
		fmt.Fprintf(log, "+ go %s\n", strings.Join(args, " "))
		err := cmd.Run()
		if err != nil {
			fmt.Fprintf(log, "go %s: %v\n", args[0], err)
		}
		return err
	}
	goCommand("tool", "ginkgo", "version")
	if flag := goBuildFlag(c); flag != "" {
		fmt.Fprintf(log, "GINKGO_ARGS has the go build flag %s: Ginkgo compiles the suite itself\n", flag)
		return ""
	}
	// An earlier binary is only reused where go finds it up to date; a
	// binary this returns no path for is not run (Ginkgo compiles its own
	// over it).
	if goCommand("test", "-c", "-tags", "e2e", "-ldflags", "-s -w", "-o", filepath.Join(c.Root(), suiteBinary), "./e2e") != nil {
		return ""
	}
	return suiteBinary
}

// goBuildFlag is the first go build flag (Ginkgo's list) in GINKGO_ARGS,
// or "".
func goBuildFlag(c Config) string {
	words, _ := ginkgoArgs(c)
	for _, w := range words {
		if !strings.HasPrefix(w, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
		for _, f := range slices.Concat(types.GoBuildFlags, types.GoBuildOFlags) {
			if name == f.Name {
				return w
			}
		}
	}
	return ""
}
