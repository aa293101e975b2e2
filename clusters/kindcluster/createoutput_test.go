// SPDX-License-Identifier: Apache-2.0

package kindcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kinderrors "sigs.k8s.io/kind/pkg/errors"
	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// kubeadmFailure is the error kind's kubeadm init action returns: a
// RunError with the command's output, wrapped by pkg/errors.
func kubeadmFailure(lines int) (*kindexec.RunError, error) {
	var out strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&out, "kubeadm line %d\n", i)
	}
	run := &kindexec.RunError{
		Command: []string{"docker", "exec", "--privileged", "dra-e2e-control-plane", "kubeadm", "init", "--config=/kind/kubeadm.conf"},
		Output:  []byte(out.String()),
		Inner:   errors.New("exit status 1"),
	}
	return run, kinderrors.Wrap(run, "failed to init node with kubeadm")
}

func TestKeepRunOutputWritesItBesideTheKubeconfig(t *testing.T) {
	run, failure := kubeadmFailure(100)
	dir := filepath.Join(t.TempDir(), "output") // not there yet
	err := keepRunOutput(failure, dir, "kind-create-dra-e2e.log")
	path := filepath.Join(dir, "kind-create-dra-e2e.log")
	want := "failed to init node with kubeadm: " + run.Error() + " (the output of " + run.PrettyCommand() + " is in " + path + ")"
	if err == nil || err.Error() != want {
		t.Fatalf("error\n%v\nwant\n%s", err, want)
	}
	var got *kindexec.RunError
	if !errors.As(err, &got) || got != run {
		t.Error("the RunError is no longer in the chain")
	}
	b, rerr := os.ReadFile(path)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if !strings.HasPrefix(string(b), "$ "+run.PrettyCommand()+"\nkubeadm line 1\n") || !strings.HasSuffix(string(b), "kubeadm line 100\n") {
		t.Errorf("file:\n%s", b)
	}
}

func TestKeepRunOutputWithoutAFolderCarriesTheTail(t *testing.T) {
	run, failure := kubeadmFailure(100)
	check := func(name string, err error) {
		t.Helper()
		msg := err.Error()
		if !strings.Contains(msg, "the last lines of the output of "+run.PrettyCommand()+":\n") ||
			!strings.HasSuffix(msg, "\nkubeadm line 61\n"+strings.Join(linesFrom(62, 100), "\n")) ||
			strings.Contains(msg, "kubeadm line 60\n") {
			t.Errorf("%s:\n%s", name, msg)
		}
	}
	check("no folder", keepRunOutput(failure, "", "kind-create-x.log"))

	// A folder that cannot be made: a file stands where it should be.
	blocked := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := keepRunOutput(failure, blocked, "kind-create-x.log")
	check("unwritable folder", err)
	if !strings.Contains(err.Error(), "not kept in "+filepath.Join(blocked, "kind-create-x.log")) {
		t.Errorf("the error does not say the output was not kept: %v", err)
	}

	// A short output is carried whole.
	_, short := kubeadmFailure(3)
	if err := keepRunOutput(short, "", "x.log"); !strings.HasSuffix(err.Error(), ":\nkubeadm line 1\nkubeadm line 2\nkubeadm line 3") {
		t.Errorf("short output:\n%v", err)
	}
}

func linesFrom(first, last int) []string {
	var out []string
	for i := first; i <= last; i++ {
		out = append(out, fmt.Sprintf("kubeadm line %d", i))
	}
	return out
}

func TestKeepRunOutputLeavesOtherErrorsAlone(t *testing.T) {
	if keepRunOutput(nil, t.TempDir(), "x.log") != nil {
		t.Error("no error became one")
	}
	plain := errors.New("node(s) already exist for a cluster with the name \"dra-e2e\"")
	if got := keepRunOutput(plain, t.TempDir(), "x.log"); got != plain {
		t.Errorf("an error without a command: %v", got)
	}
	silent := &kindexec.RunError{Command: []string{"docker", "run"}, Output: []byte("\n"), Inner: errors.New("exit status 125")}
	if got := keepRunOutput(silent, t.TempDir(), "x.log"); got != silent {
		t.Errorf("a command with no output: %v", got)
	}
	// A RunError wrapped with fmt's %w is found too.
	run := &kindexec.RunError{Command: []string{"kubeadm", "init"}, Output: []byte("preflight failed\n"), Inner: errors.New("exit status 1")}
	if got := keepRunOutput(fmt.Errorf("creating: %w", run), "", "x.log"); !strings.HasSuffix(got.Error(), "output of kubeadm init:\npreflight failed") {
		t.Errorf("%%w chain: %v", got)
	}
}
