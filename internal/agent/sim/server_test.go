package sim

import "testing"

func TestUnknownModel(t *testing.T) {
	if _, err := NewServer("dgx1", "n"); err == nil {
		t.Fatal("want an error for an unknown model")
	}
}

func TestSetIdentity(t *testing.T) {
	m, err := NewServer("dgxh100", "n")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		address, want string
		bus           uint32
	}{
		{"0000:3B:00.0", "00000000:3B:00.0", 0x3B},
		{"00000000:3b:00.0", "00000000:3B:00.0", 0x3B},
		{"0:a1:00.0", "00000000:A1:00.0", 0xA1},
	} {
		if err := m.SetIdentity(2, "GPU-x", tt.address); err != nil {
			t.Fatalf("SetIdentity(%q): %v", tt.address, err)
		}
		d := m.Device(2)
		info, _ := d.GetPciInfo()
		if d.UUID != "GPU-x" || d.PciBusID != tt.want || info.Bus != tt.bus {
			t.Errorf("SetIdentity(%q): UUID %q, bus id %q, PCI info bus %#x; want GPU-x, %s", tt.address, d.UUID, d.PciBusID, info.Bus, tt.want)
		}
	}
	for _, bad := range []string{"0001:3B:00.0", "0000:3B:01.0", "0000:3B:00.1", "0000:3B", "3B:00.0", "0000:3BB:00.0", " 0000:3B:00.0", "000000000:3B:00.0"} {
		if err := m.SetIdentity(2, "GPU-y", bad); err == nil || err.Error() != `mock GPU 2: address "`+bad+`" is not domain 0, device 0, function 0 (want 0000:BB:00.0)` {
			t.Errorf("SetIdentity(%q): err %v", bad, err)
		}
	}
	if err := m.SetIdentity(8, "GPU-z", "0000:3B:00.0"); err == nil || err.Error() != "mock dgxh100 has no GPU 8 (it has 8)" {
		t.Errorf("GPU 8: err %v", err)
	}
}
