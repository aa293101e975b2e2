package labels

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, ok := range []string{"", "authz", "authz || allocation", "!disruptive", "metrics && !disruptive", "Disruptive && !Serial", "!serial"} {
		if err := Check(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	if err := Check("nosuch || authz"); err == nil || !strings.Contains(err.Error(), "unknown label nosuch") || !strings.Contains(err.Error(), "labels are allocation, allocators, authz") {
		t.Errorf("unknown label: %v", err)
	}
	if err := Check("authz &&"); err == nil || !strings.Contains(err.Error(), "does not parse") || strings.Contains(err.Error(), "\n") {
		t.Errorf("bad syntax: %v", err)
	}
}

// specLabels are the labels the spec files give their specs, each with the
// file it is in: those of ginkgo.Label calls, and those the e2e framework's
// decorators give (a decorator FrameworkLabels does not name is an error).
func specLabels(t *testing.T) map[string]string {
	files, _ := filepath.Glob("../adminaccess/*.go")
	if len(files) == 0 {
		t.Fatal("no spec files found")
	}
	labelCall := regexp.MustCompile(`ginkgo\.Label\(([^)]*)\)`)
	quoted := regexp.MustCompile(`"([^"]+)"`)
	decorator := regexp.MustCompile(`framework\.(With[A-Za-z]+)\(`)
	out := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range labelCall.FindAllStringSubmatch(string(data), -1) {
			for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
				out[q[1]] = f
			}
		}
		for _, m := range decorator.FindAllStringSubmatch(string(data), -1) {
			label, ok := FrameworkLabels[m[1]]
			if !ok {
				t.Errorf("%s: framework.%s gives a label FrameworkLabels does not name", f, m[1])
				continue
			}
			out[label] = f
		}
	}
	return out
}

// Every label a spec carries, its own or the framework's, is one Check
// accepts, so a filter naming it is never refused.
func TestKnownCoversEverySpecLabel(t *testing.T) {
	labels := specLabels(t)
	for label, f := range labels {
		if err := Check(label); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, want := range []string{"Serial", "Disruptive", "authz"} {
		if _, ok := labels[want]; !ok {
			t.Errorf("no spec carries %s: the scan of the spec files missed it", want)
		}
	}
}
