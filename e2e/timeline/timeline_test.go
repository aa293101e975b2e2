// SPDX-License-Identifier: Apache-2.0

package timeline

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReadFileReadsTheMakefilesSteps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.tsv")
	os.WriteFile(path, []byte("node image 1.35\t1500\n\ntest driver image\t58000\n"), 0o644)
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Step{{Kind: KindBuild, Name: "node image 1.35", Seconds: 1.5}, {Kind: KindBuild, Name: "test driver image", Seconds: 58}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if steps, err := ReadFile(filepath.Join(t.TempDir(), "none")); err != nil || steps != nil {
		t.Fatalf("a missing file is no steps, got %v, %v", steps, err)
	}
}

func TestReadFileNamesABadLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.tsv")
	os.WriteFile(path, []byte("ok\t1\nbroken line\n"), 0o644)
	if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Fatalf("want the line number of the bad line, got %v", err)
	}
}

func TestSortPutsStepsBeforeTheSuiteFirst(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	steps := []Step{{Name: "b", Started: t0.Add(time.Second)}, {Name: "pre"}, {Name: "a", Started: t0}}
	Sort(steps)
	var names []string
	for _, s := range steps {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "pre,a,b" {
		t.Fatalf("order %v", names)
	}
}

// The parallel part ends where the first Serial group starts, the Serial
// part where the last group ends; moves and set-up steps count for neither.
func TestPhasesSplitTheGroupsAtTheFirstSerialOne(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	steps := []Step{
		{Kind: KindSetup, Name: "cluster create", Started: t0, Seconds: 30},
		{Kind: KindGroup, Name: "Admin access authorization", Started: at(30), Seconds: 40},
		{Kind: KindGroup, Name: "Admin access allocation", Started: at(35), Seconds: 50},
		{Kind: KindGroup, Name: "Admin access metrics [Serial]", Started: at(90), Seconds: 45},
		{Kind: KindMove, Name: "kube-scheduler DRAAdminAccess=false", Started: at(140), Seconds: 3},
		{Kind: KindGroup, Name: "Turning DRAAdminAccess off and on again [Serial] [Disruptive]", Started: at(135), Seconds: 45},
	}
	p, ok := SplitPhases(steps)
	if !ok || p.Parallel != 60*time.Second || p.Serial != 90*time.Second || len(p.SerialGroups) != 2 {
		t.Fatalf("phases %+v, %v", p, ok)
	}
	if share := p.Share(p.SerialGroups[0]); share != 0.5 {
		t.Errorf("metrics' share %v, want 0.5", share)
	}
	if _, ok := SplitPhases(steps[:1]); ok {
		t.Error("a timeline without groups has no phases")
	}
	// Without Serial groups the whole run is the parallel part.
	if p, _ := SplitPhases(steps[:3]); p.Parallel != 55*time.Second || p.Serial != 0 {
		t.Errorf("no Serial group: %+v", p)
	}
}
