package qemutest

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestGuest: the guest is built (install.sh runs this to fill the cache):
// a kernel, and an initramfs holding the init, busybox, /dev/console and
// each module in the order the init loads them.
func TestGuest(t *testing.T) {
	g := Build(t)
	if st, err := os.Stat(g.Kernel); err != nil || st.Size() < 1<<20 {
		t.Fatalf("kernel %s: %v", g.Kernel, err)
	}
	b, err := os.ReadFile(g.Initrd)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"bin/busybox", "dev/console", "init"}
	for _, m := range Modules {
		names = append(names, "lib/modules/"+m+".ko")
	}
	for _, n := range names {
		if !bytes.Contains(b, []byte(n+"\x00")) {
			t.Errorf("the initramfs lacks %s", n)
		}
	}
	if !bytes.HasSuffix(bytes.TrimRight(b, "\x00"), []byte("TRAILER!!!")) {
		t.Error("the initramfs does not end with the cpio trailer")
	}
	if want := "for m in " + strings.Join(Modules, " ") + "; do"; !bytes.Contains(b, []byte(want)) {
		t.Errorf("the init does not load %q", want)
	}
}
