// SPDX-License-Identifier: Apache-2.0

package signoff

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// headlessBrowser is a headless Chromium to render the page with:
// $SIGNOFF_BROWSER if it names a program, else the first of the usual names
// on PATH, else "".
func headlessBrowser() string {
	if b := os.Getenv("SIGNOFF_BROWSER"); b != "" && b != "required" {
		return b
	}
	for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser", "google-chrome", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// The page renders as a browser shows it, offline: the DOM Chromium builds
// holds the verdict, the matrix and the failed cell's link, and a screenshot
// has the inline styles' colours (a failed, a passed and a skipped cell), so
// nothing the page needs is fetched. Every network request is sent to a
// closed port.
func TestHTMLRendersInAHeadlessBrowser(t *testing.T) {
	bin := headlessBrowser()
	if bin == "" {
		if os.Getenv("SIGNOFF_BROWSER") == "required" {
			t.Fatal("SIGNOFF_BROWSER=required, and no headless Chromium is on PATH")
		}
		t.Skip("no headless Chromium on PATH (chromium-headless-shell or chromium; make tools installs one on Debian)")
	}
	page, err := Build(runs(), byRelease).HTML()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "signoff.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	browse := func(args ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--proxy-server=127.0.0.1:9",
			"--user-data-dir=" + filepath.Join(dir, "profile"), "--window-size=1200,4000"}
		cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+path)...)
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("%s %v: %v\n%s", bin, args, err, stderr)
		}
		return out
	}

	dom := string(browse("--dump-dom"))
	for _, want := range []string{
		`id="verdict"`, "NOT signed off: 0 of 2 columns signed off; 1.35 defaults: 1 failed",
		"<th>1.35 defaults</th><th>1.36 defaults</th>",
		`<td class="failed"><a href="1.35/report.md">failed 1 of 2</a><small>denies every request: expected 422</small></td>`,
		"declared (gate-switching): DRAAdminAccess is locked on in 1.36",
		"<h3>Kubernetes 1.35 defaults</h3>",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered DOM lacks %q:\n%s", want, dom)
		}
	}

	shot := filepath.Join(dir, "signoff.png")
	browse("--screenshot=" + shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	for name, rgb := range map[string][3]uint8{"failed": {0xf9, 0xd6, 0xd5}, "passed": {0xdf, 0xf5, 0xdf}, "skipped": {0xff, 0xf4, 0xcc}} {
		if n := pixelsOf(img, rgb); n < 200 {
			t.Errorf("the screenshot has %d pixels of the %s cells' colour #%02x%02x%02x: the inline styles were not applied", n, name, rgb[0], rgb[1], rgb[2])
		}
	}
}

// pixelsOf counts the pixels of one colour (within 2 per channel).
func pixelsOf(img image.Image, rgb [3]uint8) int {
	near := func(a uint32, b uint8) bool { d := int(a>>8) - int(b); return d >= -2 && d <= 2 }
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if near(r, rgb[0]) && near(g, rgb[1]) && near(b, rgb[2]) {
				n++
			}
		}
	}
	return n
}
