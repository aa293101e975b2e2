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
	if err := Check("nosuch || authz"); err == nil || !strings.Contains(err.Error(), "unknown label nosuch") || !strings.Contains(err.Error(), "labels are allocation, authz") {
		t.Errorf("unknown label: %v", err)
	}
	if err := Check("authz &&"); err == nil || !strings.Contains(err.Error(), "does not parse") || strings.Contains(err.Error(), "\n") {
		t.Errorf("bad syntax: %v", err)
	}
}

// Every label a spec carries is one Check accepts, so a filter naming it is never refused.
func TestKnownCoversEverySpecLabel(t *testing.T) {
	files, _ := filepath.Glob("../*_test.go")
	if len(files) == 0 {
		t.Fatal("no spec files found")
	}
	call := regexp.MustCompile(`ginkgo\.Label\(([^)]*)\)`)
	quoted := regexp.MustCompile(`"([^"]+)"`)
	seen := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(data), -1) {
			for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
				seen++
				if err := Check(q[1]); err != nil {
					t.Errorf("%s: %v", f, err)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no ginkgo.Label calls found")
	}
}

// The framework's decorators a spec file uses give labels Check accepts, and
// every one of them is in FrameworkLabels.
func TestKnownCoversTheFrameworksLabels(t *testing.T) {
	files, _ := filepath.Glob("../*_test.go")
	call := regexp.MustCompile(`framework\.(With[A-Za-z]+)\(`)
	seen := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(data), -1) {
			seen++
			label, ok := FrameworkLabels[m[1]]
			if !ok {
				t.Errorf("%s: framework.%s gives a label FrameworkLabels does not name", f, m[1])
				continue
			}
			if err := Check(label); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no framework.With... decorators found")
	}
}
