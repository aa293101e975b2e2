// SPDX-License-Identifier: Apache-2.0

package kindcluster

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
)

// fakeRestarter is a test double of the restarter: it says what it was
// given, in one log shared with the other double, and fails as told.
type fakeRestarter struct {
	name     string
	unfitWhy string    // its answer to unfit
	err      error     // what restart returns
	log      *[]string // "<name> unfit", "<name> restart", "<name> kubelet"
	changes  []change  // what restart was given
	asked    int       // how often unfit was asked
}

func (f *fakeRestarter) unfit(nodes.Node) string {
	f.asked++
	*f.log = append(*f.log, f.name+" unfit")
	return f.unfitWhy
}

func (f *fakeRestarter) restart(_ context.Context, ch change) error {
	*f.log = append(*f.log, f.name+" restart")
	f.changes = append(f.changes, ch)
	return f.err
}

func (f *fakeRestarter) restartKubelet(context.Context, nodes.Node, string, ...string) error {
	*f.log = append(*f.log, f.name+" kubelet")
	return nil
}

// doubles is the caller over a fast and a plain double.
func doubles(t *testing.T) (*restarters, *fakeRestarter, *fakeRestarter, *[]string) {
	log := &[]string{}
	fast := &fakeRestarter{name: "fast", log: log}
	plain := &fakeRestarter{name: "plain", log: log}
	return &restarters{fast: fast, plain: plain, logf: t.Logf}, fast, plain, log
}

// schedulerMove is a change of kube-scheduler alone, that waits.
func schedulerMove() change {
	return change{
		current: map[profile.Component][]byte{profile.APIServer: []byte("a"), profile.ControllerManager: []byte("c"), profile.Scheduler: []byte("s")},
		edited:  map[profile.Component][]byte{profile.Scheduler: []byte("s2")},
		target:  always(target{what: "with the new flag"}),
	}
}

func TestRestartTakesTheFastWayWhereItWorks(t *testing.T) {
	rs, fast, _, log := doubles(t)
	by, err := rs.restart(context.Background(), schedulerMove())
	if err != nil || by != (Restart{Way: wayFast}) {
		t.Fatalf("restart = %v, %v; want the fast way, no error", by, err)
	}
	if want := []string{"fast unfit", "fast restart"}; !slices.Equal(*log, want) {
		t.Errorf("calls %v, want %v", *log, want)
	}
	if got := rs.last[profile.Scheduler]; got.Way != wayFast || got.Note() != "" {
		t.Errorf("kube-scheduler recorded as %v (note %q), want the fast way, no note", got, got.Note())
	}
	rs.restart(context.Background(), schedulerMove())
	if fast.asked != 1 {
		t.Errorf("the fast restarter was asked %d times whether it fits, want once per cluster", fast.asked)
	}
}

// A fast restart that finds part-way that the kubelet does not act as it
// rests on reports it, wrapped as its steps wrap errors; the caller then
// gives the same change to the plain one, names it, and stays with it.
func TestRestartFallsBackToThePlainWayWhenTheFastOnesPreconditionFails(t *testing.T) {
	rs, fast, plain, log := doubles(t)
	why := "the kubelet on cp did not begin the new pods of [kube-scheduler] within 20s"
	fast.err = fmt.Errorf("restarting: %w", &unfitError{why: why})
	ch := schedulerMove()
	by, err := rs.restart(context.Background(), ch)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	if by.Way != wayPlain || by.Why != why {
		t.Errorf("restart went %+v, want the plain way because %q", by, why)
	}
	if want := "plain restart (" + why + ")"; by.String() != want {
		t.Errorf("String = %q, want %q", by, want)
	}
	if by.Note() != ", plain restart" || rs.last[profile.Scheduler] != by {
		t.Errorf("note %q, kube-scheduler recorded as %v: the timeline would not name the plain way", by.Note(), rs.last[profile.Scheduler])
	}
	if len(plain.changes) != 1 || string(plain.changes[0].edited[profile.Scheduler]) != "s2" {
		t.Errorf("the plain restarter was given %+v, want the change the fast one failed", plain.changes)
	}
	rs.restart(context.Background(), ch)
	rs.restartKubelet(context.Background(), nil, "")
	want := []string{"fast unfit", "fast restart", "plain restart", "plain restart", "plain kubelet"}
	if !slices.Equal(*log, want) {
		t.Errorf("calls %v, want %v: after a fallback every restart goes the plain way", *log, want)
	}
}

func TestRestartGoesThePlainWayAtOnceWhereTheFastOneIsUnfitUpFront(t *testing.T) {
	rs, fast, _, log := doubles(t)
	fast.unfitWhy = "cp lacks ctr, iptables"
	by, err := rs.restart(context.Background(), schedulerMove())
	if err != nil || by.Way != wayPlain || by.Why != fast.unfitWhy {
		t.Fatalf("restart = %+v, %v; want the plain way because %q", by, err, fast.unfitWhy)
	}
	if want := []string{"fast unfit", "plain restart"}; !slices.Equal(*log, want) {
		t.Errorf("calls %v, want %v: the fast restarter must not run where it is unfit", *log, want)
	}
}

func TestRestartReturnsThePlainOnesErrorWithItsCause(t *testing.T) {
	rs, fast, plain, _ := doubles(t)
	fast.unfitWhy = "cp lacks ctr"
	cause := errors.New("kube-scheduler did not come back with the new flag within 3m0s")
	plain.err = cause
	by, err := rs.restart(context.Background(), schedulerMove())
	if !errors.Is(err, cause) {
		t.Fatalf("error %v does not wrap the plain restarter's %v", err, cause)
	}
	for _, part := range []string{"plain restart", "cp lacks ctr", cause.Error()} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
	if by.Way != wayPlain {
		t.Errorf("a failed plain restart is recorded as %v", by)
	}
}

// A component that refuses its flags fails the fast restart; that is the
// restart's verdict (the GA lock spec wants it), not a reason to try again.
func TestRestartReturnsTheFastOnesOtherErrorsWithoutFallingBack(t *testing.T) {
	rs, fast, _, log := doubles(t)
	fast.err = errors.New("kube-apiserver did not come back")
	by, err := rs.restart(context.Background(), schedulerMove())
	if !errors.Is(err, fast.err) || by.Way != wayFast {
		t.Errorf("restart = %v, %v; want the fast restarter's own error", by, err)
	}
	if want := []string{"fast unfit", "fast restart"}; !slices.Equal(*log, want) {
		t.Errorf("calls %v, want %v", *log, want)
	}
}

func TestRestartOfNothingCallsNoRestarter(t *testing.T) {
	rs, _, _, log := doubles(t)
	ch := schedulerMove()
	ch.edited = nil
	if by, err := rs.restart(context.Background(), ch); err != nil || by != (Restart{}) || len(*log) != 0 {
		t.Errorf("restart = %v, %v, calls %v; want nothing", by, err, *log)
	}
}

// A change that moves kube-apiserver goes through the same caller as any
// other: the fast restarter gets it whole (restartWithAPIServer needs the two
// other components' manifests as they stand), and where it reports that the
// kubelet did not begin kube-apiserver's pod, the plain one gets the same
// change, restarts in the same waves, and all three are recorded as plain.
func TestRestartWithAPIServerGoesThroughTheSameCaller(t *testing.T) {
	rs, fast, plain, _ := doubles(t)
	fast.err = fmt.Errorf("switching: %w", &unfitError{why: "the kubelet on cp did not begin the new pods of [kube-apiserver]"})
	ch := schedulerMove()
	ch.edited[profile.APIServer] = []byte("a2")
	by, err := rs.restart(context.Background(), ch)
	if err != nil || by.Way != wayPlain {
		t.Fatalf("restart = %v, %v; want the plain way", by, err)
	}
	for _, r := range []*fakeRestarter{fast, plain} {
		if len(r.changes) != 1 || len(r.changes[0].current) != 3 || len(r.changes[0].edited) != 2 {
			t.Errorf("%s restarter was given %+v, want the whole change", r.name, r.changes)
		}
	}
	for _, comp := range profile.ControlPlane {
		if rs.last[comp] != by {
			t.Errorf("%s recorded as %v, want %v", comp, rs.last[comp], by)
		}
	}
	ws := waves(plain.changes[0])
	want := []map[profile.Component]string{
		{profile.APIServer: "a2"},
		{profile.ControllerManager: "c", profile.Scheduler: "s2"},
	}
	if len(ws) != len(want) {
		t.Fatalf("waves = %v, want kube-apiserver, then the other two", ws)
	}
	for i := range want {
		if len(ws[i]) != len(want[i]) {
			t.Errorf("wave %d = %v, want %v", i, ws[i], want[i])
		}
		for comp, m := range want[i] {
			if string(ws[i][comp]) != m {
				t.Errorf("wave %d, %s: %q, want %q", i, comp, ws[i][comp], m)
			}
		}
	}
}

// Without kube-apiserver, or without a wait, every edited component
// restarts at once.
func TestWavesRestartTheEditedTogetherWhereNothingOrdersThem(t *testing.T) {
	ch := schedulerMove()
	if ws := waves(ch); len(ws) != 1 || len(ws[0]) != 1 || string(ws[0][profile.Scheduler]) != "s2" {
		t.Errorf("a kube-scheduler move: waves %v", ws)
	}
	ch.edited[profile.APIServer] = []byte("a2")
	ch.target = nil
	if ws := waves(ch); len(ws) != 1 || len(ws[0]) != 2 {
		t.Errorf("a change without a wait: waves %v, want the two edited at once", ws)
	}
}

// Nothing reaches an implementation but through the caller: in the
// package's own files fastRestart and plainRestart are made only in
// Cluster.restarts, restartWithAPIServer is called only from
// fastRestart.restart, and the kubelet restart's process step only from the
// restarters' methods.
func TestNothingBypassesTheCaller(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			where := funcName(fn)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CompositeLit:
					if id, ok := n.Type.(*ast.Ident); ok && (id.Name == "fastRestart" || id.Name == "plainRestart") && where != "Cluster.restarts" {
						t.Errorf("%s: %s makes a %s: restarts go through Cluster.restarts", fset.Position(n.Pos()), where, id.Name)
					}
				case *ast.CallExpr:
					switch name := calledName(n); {
					case name == "restartWithAPIServer" && where != "fastRestart.restart":
						t.Errorf("%s: %s calls restartWithAPIServer outside fastRestart.restart", fset.Position(n.Pos()), where)
					case name == "restartKubeletProcess" && !strings.HasPrefix(where, "fastRestart.") && !strings.HasPrefix(where, "plainRestart."):
						t.Errorf("%s: %s restarts a kubelet outside the restarters (use Cluster.restartKubelet)", fset.Position(n.Pos()), where)
					}
				}
				return true
			})
		}
	}
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

func calledName(call *ast.CallExpr) string {
	switch f := call.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

// The fast restarter's up-front check names each tool the node lacks, and
// none where it has them all.
func TestMissingToolsScriptNamesWhatTheNodeLacks(t *testing.T) {
	bin := t.TempDir()
	for _, tool := range []string{"ctr", "pkill"} {
		if err := os.WriteFile(filepath.Join(bin, tool), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shell, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	missing := func(tools ...string) string {
		t.Helper()
		cmd := exec.Command(shell, append([]string{"-c", missingToolsScript, "sh"}, tools...)...)
		cmd.Env = []string{"PATH=" + bin}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return string(out)
	}
	if got := missing(fastTools...); got != "iptables\nsystemctl\n" {
		t.Errorf("missing = %q, want iptables and systemctl", got)
	}
	if got := missing("ctr", "pkill"); got != "" {
		t.Errorf("missing = %q, want none", got)
	}
}

// The plain restart's PIDs before it writes: one a component, none for one
// that does not run (pgrep faked).
func TestPIDsScriptGivesEachRunningComponentsOldestProcess(t *testing.T) {
	bin := t.TempDir()
	fake := "#!/bin/sh\ncase \"$*\" in *'^kube-apiserver '*) echo 42;; *) exit 1;; esac\n"
	if err := os.WriteFile(filepath.Join(bin, "pgrep"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	shell, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(shell, "-c", pidsScript, "sh", "kube-apiserver", "kube-scheduler")
	cmd.Env = []string{"PATH=" + bin}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := parsePIDs(strings.TrimSpace(string(out)))
	if len(got) != 1 || got[profile.APIServer] != "42" {
		t.Errorf("pids = %v from %q, want kube-apiserver's 42 alone", got, out)
	}
}
