// SPDX-License-Identifier: Apache-2.0

package image

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Contents are what an image archive holds as a runtime reads it: the
// config, which names the platform, and the machine of each ELF binary of
// its layers.
type Contents struct {
	Config v1.ConfigFile
	// Machines are the ELF binaries' machines, by path in the image.
	Machines map[string]elf.Machine
}

// Inspect reads the image tag from a docker-save archive: its config and
// each ELF binary's header (the first bytes of the file; a binary is not
// read whole).
func Inspect(archive, tag string) (Contents, error) {
	ref, err := name.NewTag(tag)
	if err != nil {
		return Contents{}, fmt.Errorf("image tag %q: %w", tag, err)
	}
	img, err := tarball.ImageFromPath(archive, &ref)
	if err != nil {
		return Contents{}, fmt.Errorf("reading %s from %s: %w", tag, archive, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return Contents{}, fmt.Errorf("reading %s's config: %w", tag, err)
	}
	layers, err := img.Layers()
	if err != nil {
		return Contents{}, err
	}
	c := Contents{Config: *cfg, Machines: map[string]elf.Machine{}}
	for _, l := range layers {
		if err := c.readLayer(l); err != nil {
			return Contents{}, fmt.Errorf("reading %s's layer: %w", tag, err)
		}
	}
	return c, nil
}

func (c *Contents) readLayer(l v1.Layer) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if m, ok := elfMachine(tr); ok {
			c.Machines["/"+strings.TrimPrefix(h.Name, "/")] = m
		}
	}
}

// elfMachine is the machine an ELF header names, read from its first
// bytes; false where r is no ELF file.
func elfMachine(r io.Reader) (elf.Machine, bool) {
	head := make([]byte, binary.Size(elf.Header64{}))
	n, _ := io.ReadFull(r, head)
	head = head[:n]
	if n < elf.EI_NIDENT || !bytes.HasPrefix(head, []byte(elf.ELFMAG)) {
		return 0, false
	}
	var order binary.ByteOrder = binary.LittleEndian
	if elf.Data(head[elf.EI_DATA]) == elf.ELFDATA2MSB {
		order = binary.BigEndian
	}
	// e_machine follows e_ident and e_type in both classes' headers.
	if n < elf.EI_NIDENT+4 {
		return 0, false
	}
	return elf.Machine(order.Uint16(head[elf.EI_NIDENT+2:])), true
}

// Matches says what of the contents contradicts platform p: a config that
// names another, or a binary of another machine. An image without any ELF
// binary contradicts nothing here.
func (c Contents) Matches(p Platform) error {
	if c.Config.OS != p.OS || c.Config.Architecture != p.Arch {
		return fmt.Errorf("its config says %s/%s", c.Config.OS, c.Config.Architecture)
	}
	want, known := p.Machine()
	var wrong []string
	for path, m := range c.Machines {
		if known && m != want {
			wrong = append(wrong, fmt.Sprintf("%s is an ELF for %s", path, m))
		}
	}
	sort.Strings(wrong)
	if len(wrong) > 0 {
		return fmt.Errorf("%s, not %s", strings.Join(wrong, ", "), want)
	}
	return nil
}
