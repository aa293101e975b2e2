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
