// SPDX-License-Identifier: Apache-2.0

// Package nodeimage builds the kind node image of a release here, from Go
// modules and Debian packages, with nothing pulled from any registry. Whether
// to build at all (or take an image already present, or kind's published
// one) is nodesource's decision, not this package's.
//
// The build is a pipeline of named steps (clusters/pipeline: kubernetes,
// containerd, etcd, coredns, own binaries, images, stage, assemble); the
// root filesystem is debootstrapped beside the Go builds and waited for
// before the images, and the modules of containerd, etcd and CoreDNS are
// downloaded beside the Kubernetes build. Its result is tagged by a hash of
// the recipe, so asking again for an image that exists takes seconds.
package nodeimage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/kep5018/adminaccess-conformance/clusters/gobuild"
	"github.com/kep5018/adminaccess-conformance/clusters/pipeline"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// Builder builds node images.
type Builder struct {
	Out      string    // output folder, e.g. _output/nodeimage
	RepoRoot string    // this module's root (for our own small binaries)
	Progress io.Writer // one line per step
	// Yield runs the Go builds at the lowest CPU priority (SCHED_IDLE), for
	// a build that runs beside a suite (the next release's bits): on a
	// machine of two cores, it takes the CPU the suite leaves idle and no
	// more.
	Yield bool
	log   io.Writer // everything the tools print
}

type binaries struct {
	kubernetes, containerd string // folders
	etcd, coredns, pause   string // files
	capshim                string
}

// CanBuild says why an offline node image cannot be built on this machine,
// or nil: the build runs debootstrap as root on a Debian-like linux/amd64 host.
func CanBuild() error {
	switch {
	case runtime.GOOS != "linux" || runtime.GOARCH != "amd64":
		return fmt.Errorf("an offline node image can only be built on linux/amd64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	case os.Geteuid() != 0:
		return errors.New("an offline node image needs root (debootstrap), and this user is not root")
	}
	if _, err := os.Stat("/etc/debian_version"); err != nil {
		return errors.New("an offline node image needs a Debian-like host (debootstrap from its apt mirror), and /etc/debian_version is missing")
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return errors.New("an offline node image needs debootstrap, which is not installed (make tools installs it)")
	}
	return nil
}

// Recipe is the recipe of release r's node image, read from the
// Kubernetes module of that release (downloaded if needed).
func (b *Builder) Recipe(ctx context.Context, r release.Release) (Recipe, error) {
	dir, err := b.downloadModule(ctx, "k8s.io/kubernetes@"+r.GitVersion(), r.Toolchain)
	if err != nil {
		return Recipe{}, err
	}
	rec, err := NewRecipe(r, dir)
	if err != nil {
		return rec, err
	}
	rec.StandIns, err = b.standInsFor(ctx, dir, r.Toolchain)
	return rec, err
}

// Build runs the whole pipeline and tags the result.
func (b *Builder) Build(ctx context.Context, rec Recipe, tag string) error {
	start := time.Now()
	logPath, done, err := b.openLog("build-" + rec.Release.Version + ".log")
	if err != nil {
		return err
	}
	defer done()
	fmt.Fprintf(b.Progress, "node-image: building %s (log: %s)\n", tag, logPath)

	bins := b.binaries(rec)
	var rootfsDir, rootfsTar string
	imagesDir := filepath.Join(b.Out, "images", rec.Release.Version)
	stageDir := filepath.Join(b.Out, "stage", rec.Release.Version)

	// debootstrap mostly waits on the Debian mirror and on dpkg, the Go builds
	// on the CPU: the root filesystem is made beside them (measured cold:
	// 1m24s that the builds no longer wait for), with a log of its own so that
	// neither log interleaves, and is waited for by the first step that
	// reads it.
	rootfsCtx, stopRootfs := context.WithCancel(ctx)
	rootfsDone := make(chan struct{})
	var rootfsErr error
	defer func() { stopRootfs(); <-rootfsDone }()
	go func() {
		defer close(rootfsDone)
		rootfsDir, rootfsTar, rootfsErr = b.buildRootfsBeside(rootfsCtx, filepath.Join(b.Out, "build-rootfs.log"))
	}()

	// Likewise the module proxy answers while the CPU compiles: the modules
	// of containerd, etcd and CoreDNS (977 MB, 9.5 s cold here) are
	// downloaded beside the Kubernetes build, and their steps only compile.
	// A download that failed is left to its build, which tries again and
	// says why.
	later := []goModule{containerdModule(bins.containerd), etcdModule(rec.EtcdVersion(), bins.etcd), corednsModule(rec.CoreDNSTag, bins.coredns)}
	downloadCtx, stopDownload := context.WithCancel(ctx)
	downloaded := make(chan struct{})
	defer func() { stopDownload(); <-downloaded }()
	go func() {
		defer close(downloaded)
		b.downloadBeside(downloadCtx, filepath.Join(b.Out, "build-download.log"), later)
	}()
	afterDownload := func(m goModule) func(*Builder) error {
		return func(b *Builder) error {
			<-downloaded
			return b.goBuild(ctx, m)
		}
	}

	// The steps work on the builder; each holds the build's context.
	steps := []pipeline.Step[*Builder]{
		{Name: "kubernetes", Run: func(b *Builder) error { return b.buildKubernetes(ctx, rec, bins.kubernetes, kubernetesCommands) }},
		{Name: "containerd", Run: afterDownload(later[0])},
		{Name: "etcd", Run: afterDownload(later[1])},
		{Name: "coredns", Run: afterDownload(later[2])},
		{Name: "own binaries", Run: func(b *Builder) error {
			// This module's own: the project's flags come in GOFLAGS.
			env := gobuild.Environ(os.Environ())
			if err := b.run(ctx, b.RepoRoot, env, "go", "build", "-o", bins.pause, "./clusters/cmd/pause"); err != nil {
				return err
			}
			return b.run(ctx, b.RepoRoot, env, "go", "build", "-o", bins.capshim, "./clusters/nodesource/cmd/runc-capshim")
		}},
		{Name: "rootfs wait", Run: func(*Builder) error { <-rootfsDone; return rootfsErr }},
		{Name: "images", Run: func(b *Builder) error { return b.controlPlaneImages(ctx, rec, bins, rootfsDir, imagesDir) }},
		{Name: "stage", Run: func(b *Builder) error { return b.stage(rec, bins, imagesDir, stageDir) }},
		{Name: "assemble", Run: func(b *Builder) error { return b.assemble(ctx, rec, rootfsTar, stageDir, tag) }},
	}
	err = pipeline.Run(b, steps, pipeline.Hooks{
		Before: func(name string) { fmt.Fprintf(b.log, "\n=== step %s\n", name) },
		Done: func(name string, took time.Duration) {
			fmt.Fprintf(b.Progress, "node-image: %-12s done in %s\n", name, took.Round(100*time.Millisecond))
		},
	})
	if err != nil {
		return fmt.Errorf("node image %s, step %w (see %s)", tag, err, logPath)
	}
	os.RemoveAll(stageDir)
	fmt.Fprintf(b.Progress, "node-image: %s built in %s\n", tag, since(start))
	return nil
}

// openLog starts a build: it makes Out and RepoRoot absolute (Go builds run
// inside generated module folders), creates Out and points the builder's
// log at a new file there; done closes it.
func (b *Builder) openLog(name string) (path string, done func(), err error) {
	if b.Out, err = filepath.Abs(b.Out); err != nil {
		return "", nil, err
	}
	if b.RepoRoot, err = filepath.Abs(b.RepoRoot); err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(b.Out, 0o755); err != nil {
		return "", nil, err
	}
	path = filepath.Join(b.Out, name)
	f, err := os.Create(path)
	if err != nil {
		return "", nil, err
	}
	b.log = f
	return path, func() { f.Close() }, nil
}

// buildKubernetes builds the Kubernetes commands of rec's release into out,
// from the k8s.io/kubernetes module at that patch.
func (b *Builder) buildKubernetes(ctx context.Context, rec Recipe, out string, commands []string) error {
	dir, err := b.downloadModule(ctx, "k8s.io/kubernetes@"+rec.Release.GitVersion(), rec.Release.Toolchain)
	if err != nil {
		return err
	}
	m, err := kubernetesModule(rec.Release, dir, out, commands)
	if err != nil {
		return err
	}
	for _, s := range rec.StandIns {
		in, err := b.writeStandIn(ctx, s, dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(b.Progress, "node-image: %s\n", s)
		m.Replace[s.Module] = in
	}
	return b.goBuild(ctx, m)
}

// binaries are where the builds of rec put their results.
func (b *Builder) binaries(rec Recipe) binaries {
	binDir := filepath.Join(b.Out, "bin")
	return binaries{
		kubernetes: filepath.Join(binDir, "kubernetes-v"+rec.Release.Version),
		containerd: filepath.Join(binDir, "containerd-"+ContainerdVersion),
		etcd:       filepath.Join(binDir, "etcd-"+rec.EtcdVersion()),
		coredns:    filepath.Join(binDir, "coredns-"+rec.CoreDNSTag),
		pause:      filepath.Join(binDir, "pause"),
		capshim:    filepath.Join(binDir, "runc-capshim"),
	}
}

// downloadBeside downloads the modules of builds to come, with its own log,
// for a build that runs it beside another's compiling.
func (b *Builder) downloadBeside(ctx context.Context, logPath string, modules []goModule) {
	f, err := os.Create(logPath)
	if err != nil {
		return
	}
	defer f.Close()
	db := *b
	db.log = f
	for _, m := range modules {
		t := time.Now()
		if err := db.download(ctx, m); err != nil {
			fmt.Fprintf(f, "%s: not downloaded beside (%v); its build downloads it\n", m.Name, err)
			continue
		}
		fmt.Fprintf(f, "%s: downloaded in %s\n", m.Name, since(t))
	}
}

// buildRootfsBeside builds the root filesystem with its own log, for a
// build that runs it beside the Go builds.
func (b *Builder) buildRootfsBeside(ctx context.Context, logPath string) (dir, tarball string, err error) {
	f, err := os.Create(logPath)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	rb := *b
	rb.log = f
	t := time.Now()
	if dir, tarball, err = rb.buildRootfs(ctx); err != nil {
		return "", "", fmt.Errorf("root filesystem: %w (see %s)", err, logPath)
	}
	// The import too is done here, off the Go builds' path (228 MB: seconds
	// that assemble no longer waits for).
	if _, err := rb.importRootfs(ctx, tarball); err != nil {
		return "", "", fmt.Errorf("root filesystem's import: %w (see %s)", err, logPath)
	}
	fmt.Fprintf(b.Progress, "node-image: %-12s done in %s (beside the Go builds)\n", "rootfs", since(t))
	return dir, tarball, nil
}

// run executes a command, sending its output to the build log.
func (b *Builder) run(ctx context.Context, dir string, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	w := b.log
	if w == nil {
		w = io.Discard
	}
	fmt.Fprintf(w, "+ %s %s\n", name, strings.Join(args, " "))
	var tail tailBuffer
	cmd.Stdout = io.MultiWriter(w, &tail)
	cmd.Stderr = io.MultiWriter(w, &tail)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, firstArg(args), err, tail.String())
	}
	return nil
}

func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// tailBuffer keeps the last lines a command printed, for error messages.
type tailBuffer struct{ lines []string }

func (t *tailBuffer) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		t.lines = append(t.lines, l)
	}
	if len(t.lines) > 15 {
		t.lines = t.lines[len(t.lines)-15:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return strings.Join(t.lines, "\n") }

// downloadModule fetches a module into the module cache under the
// toolchain it needs (a module whose go line is newer than the Go that
// runs it is refused) and returns its folder.
func (b *Builder) downloadModule(ctx context.Context, modVersion, toolchain string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", modVersion)
	cmd.Dir = os.TempDir() // outside any module: no go.mod is touched
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", toolchainEnv(toolchain))
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	json.Unmarshal(out, &info)
	if err != nil || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %v %s", modVersion, err, info.Error)
	}
	return info.Dir, nil
}

// moduleDir finds a module this repository depends on, downloading it if needed.
func (b *Builder) moduleDir(module string) (string, error) {
	goCmd := func(args ...string) ([]byte, error) {
		cmd := exec.Command("go", args...)
		cmd.Dir = b.RepoRoot
		return cmd.Output()
	}
	goCmd("mod", "download", module)
	out, err := goCmd("list", "-m", "-f", "{{.Dir}}", module)
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		return "", fmt.Errorf("module %s not found: %v", module, err)
	}
	return dir, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
