// SPDX-License-Identifier: Apache-2.0

package requirements

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestIDsAndTextsAreUnique(t *testing.T) {
	ids, texts := map[string]bool{}, map[string]bool{}
	for _, r := range All {
		if ids[r.ID] || texts[r.Text] {
			t.Errorf("%s %q appears twice", r.ID, r.Text)
		}
		ids[r.ID], texts[r.Text] = true, true
		if !regexp.MustCompile(`^KEP5018-[A-Z]+-\d\d$`).MatchString(r.ID) {
			t.Errorf("ID %q is not of the form KEP5018-AREA-NN", r.ID)
		}
	}
}

// Every requirement a spec names is in the list, and every one in the list
// is named by a spec: a spec file's kep("...") calls and kep: "..." fields.
func TestEverySpecsRequirementHasAnIDAndEveryIDASpec(t *testing.T) {
	files, _ := filepath.Glob("../adminaccess/*.go")
	if len(files) == 0 {
		t.Fatal("no spec files found")
	}
	named := map[string]bool{}
	re := regexp.MustCompile(`kep(?:\(|: )("(?:[^"\\]|\\.)*"|` + "`[^`]*`" + `)`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			text, err := strconv.Unquote(m[1])
			if err != nil {
				t.Fatalf("%s: %s: %v", f, m[1], err)
			}
			named[text] = true
			if _, ok := Of(text); !ok {
				t.Errorf("%s names KEP requirement %q, which has no ID here", filepath.Base(f), text)
			}
		}
	}
	for _, r := range All {
		if !named[r.Text] {
			t.Errorf("%s %q is named by no spec", r.ID, r.Text)
		}
	}
}

// docs/kep-5018.md, the README's KEP page, lists every ID.
func TestTheKEPPageListsEveryID(t *testing.T) {
	data, err := os.ReadFile("../../docs/kep-5018.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range All {
		if !strings.Contains(string(data), r.ID) {
			t.Errorf("docs/kep-5018.md lacks %s (%s)", r.ID, r.Text)
		}
	}
}
