package offers

import (
	"errors"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// gpuAgent is an agent with n GPU devices and room for plenty of tasks.
func gpuAgent(n int) protocol.Resources {
	r := cpuMem(64000, 256000)
	r.Scalars[protocol.ResGPUs] = int64(n) * protocol.DeviceMilli
	for k := range n {
		r.Scalars[protocol.GPUResource(k)] = protocol.DeviceMilli
	}
	return r
}

// gpuTask is a task of 1 CPU asking milli-GPUs.
func gpuTask(milli int64) protocol.Resources {
	r := cpuMem(1000, 1024)
	r.Scalars[protocol.ResGPUs] = milli
	return r
}

// launchGPU declares count tasks of milli-GPUs for fw, runs a round and
// accepts them as the framework asked (no devices named), returning what
// each task holds.
func launchGPU(t *testing.T, a *Allocator, fw string, milli int64, count int, now time.Time) []protocol.Resources {
	t.Helper()
	demand(t, a, fw, Demand{Resources: gpuTask(milli), Count: int64(count)})
	d := a.Allocate(now)
	var held []protocol.Resources
	for _, o := range d.Offers {
		if string(o.FrameworkID) != fw {
			continue
		}
		tasks := make([]protocol.Resources, o.Tasks)
		for i := range tasks {
			tasks[i] = gpuTask(milli)
		}
		acc, err := a.AcceptTasks(o.FrameworkID, []protocol.OfferID{o.ID}, tasks, now)
		must(t, err)
		held = append(held, acc.Tasks...)
	}
	if len(held) != count {
		t.Fatalf("%d tasks of %d milli-GPUs launched, want %d", len(held), milli, count)
	}
	return held
}

// devicesOf names the devices a task holds and what it holds on each.
func devicesOf(t *testing.T, r protocol.Resources) map[int]int64 {
	t.Helper()
	if err := r.Validate(); err != nil {
		t.Fatalf("task resources %s: %v", r, err)
	}
	return r.GPUDevices()
}

func TestDevices_sharesPackOntoOneDevice(t *testing.T) {
	a := newAlloc(t, testConfig(PolicyDynamic))
	addAgent(t, a, "g", gpuAgent(2), nil)
	addFw(t, a, "f", "r")
	now := time.Unix(100, 0)
	two := launchGPU(t, a, "f", 500, 2, now)
	d0, d1 := devicesOf(t, two[0]), devicesOf(t, two[1])
	if len(d0) != 1 || len(d1) != 1 {
		t.Fatalf("each share should name one device: %v %v", d0, d1)
	}
	var dev int
	for k, x := range d0 {
		dev = k
		if x != 500 || d1[k] != 500 {
			t.Fatalf("two 500-milli shares on different devices: %v %v", d0, d1)
		}
	}
	third := devicesOf(t, launchGPU(t, a, "f", 600, 1, now)[0])
	if third[dev] != 0 || len(third) != 1 {
		t.Fatalf("a 600-milli share landed on the full device %d: %v", dev, third)
	}
	// The agent has 400 milli left on one device: a 500 share is offered
	// nowhere, though 400 milli-GPUs stay free in all.
	demand(t, a, "f", Demand{Resources: gpuTask(500), Count: 1})
	if d := a.Allocate(now); len(d.Offers) != 0 {
		t.Fatalf("offered %v where no device can serve 500 milli", d.Offers)
	}
}

func TestDevices_wholeDevicesAreDistinct(t *testing.T) {
	a := newAlloc(t, testConfig(PolicyDynamic))
	addAgent(t, a, "g", gpuAgent(8), nil)
	addFw(t, a, "f", "r")
	now := time.Unix(100, 0)
	got := devicesOf(t, launchGPU(t, a, "f", 8*protocol.DeviceMilli, 1, now)[0])
	if len(got) != 8 {
		t.Fatalf("an 8-device task holds %v", got)
	}
	for k, x := range got {
		if x != protocol.DeviceMilli {
			t.Fatalf("device %d holds %d of an 8-device task", k, x)
		}
	}
	// Nothing is left for even a share.
	demand(t, a, "f", Demand{Resources: gpuTask(1), Count: 1})
	if d := a.Allocate(now); len(d.Offers) != 0 {
		t.Fatalf("offered %v on an agent whose devices are all taken", d.Offers)
	}
}

func TestDevices_wholeNeedsFreeDevices(t *testing.T) {
	a := newAlloc(t, testConfig(PolicyDynamic))
	addAgent(t, a, "g", gpuAgent(2), nil)
	addFw(t, a, "f", "r")
	now := time.Unix(100, 0)
	launchGPU(t, a, "f", 100, 1, now)
	// 1,900 milli-GPUs are free, but one device only: two whole devices
	// are offered nowhere; one is.
	demand(t, a, "f", Demand{Resources: gpuTask(2000), Count: 1})
	if d := a.Allocate(now); len(d.Offers) != 0 {
		t.Fatalf("offered %v for two whole devices with one free", d.Offers)
	}
	one := devicesOf(t, launchGPU(t, a, "f", 1000, 1, now)[0])
	if len(one) != 1 {
		t.Fatalf("a whole device task holds %v", one)
	}
}

// A new leader's allocator learns the devices running tasks hold from
// their resources, and a task that ends gives its device back.
func TestDevices_usageAndRecover(t *testing.T) {
	a := newAlloc(t, testConfig(PolicyDynamic))
	addAgent(t, a, "g", gpuAgent(2), nil)
	addFw(t, a, "f", "r")
	running := gpuTask(700)
	running.Scalars[protocol.GPUResource(1)] = 700
	must(t, a.AddUsage("f", "g", running))
	now := time.Unix(100, 0)
	got := devicesOf(t, launchGPU(t, a, "f", 500, 1, now)[0])
	if got[0] != 500 {
		t.Fatalf("a 500 share went to %v, not the free device 0", got)
	}
	// Device 1 has 300 left and device 0 has 500: a 600 share fits
	// nowhere until the 700 task ends.
	demand(t, a, "f", Demand{Resources: gpuTask(600), Count: 1})
	if d := a.Allocate(now); len(d.Offers) != 0 {
		t.Fatalf("offered %v with no device holding 600", d.Offers)
	}
	must(t, a.Recover("f", "g", running))
	if got := devicesOf(t, launchGPU(t, a, "f", 600, 1, now)[0]); got[1] != 600 {
		t.Fatalf("the 600 share went to %v, not the device the ended task freed", got)
	}
}

func TestDevices_badDemandAndAccept(t *testing.T) {
	a := newAlloc(t, testConfig(PolicyDynamic))
	addAgent(t, a, "g", gpuAgent(2), nil)
	addFw(t, a, "f", "r")
	named := gpuTask(500)
	named.Scalars[protocol.GPUResource(0)] = 500
	if err := a.SetDemand("f", []Demand{{Resources: named, Count: 1}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("demand naming a device: %v, want ErrInvalid", err)
	}
	now := time.Unix(100, 0)
	// 1500 milli-GPUs span devices without being whole ones: no agent with
	// devices serves them.
	demand(t, a, "f", Demand{Resources: gpuTask(1500), Count: 1})
	if d := a.Allocate(now); len(d.Offers) != 0 {
		t.Fatalf("offered %v for 1500 milli-GPUs", d.Offers)
	}
	demand(t, a, "f", Demand{Resources: gpuTask(500), Count: 1})
	d := a.Allocate(now)
	if len(d.Offers) != 1 {
		t.Fatalf("offers %v", d.Offers)
	}
	o := d.Offers[0]
	devs := o.Resources.GPUDevices()
	if len(devs) != 1 {
		t.Fatalf("the offer names devices %v, want the one it holds room on", devs)
	}
	// A task naming a device the offer holds no room on is refused, and
	// the offer stays.
	other := gpuTask(500)
	for k := range 2 {
		if devs[k] == 0 {
			other.Scalars[protocol.GPUResource(k)] = 500
		}
	}
	if _, err := a.AcceptTasks("f", []protocol.OfferID{o.ID}, []protocol.Resources{other}, now); !errors.Is(err, ErrInsufficient) {
		t.Fatalf("accept on a device not offered: %v, want ErrInsufficient", err)
	}
	if _, err := a.AcceptTasks("f", []protocol.OfferID{o.ID}, []protocol.Resources{gpuTask(500)}, now); err != nil {
		t.Fatalf("the offer did not survive a refused accept: %v", err)
	}
}

// Device scalars do not weigh in shares: a framework holding one whole
// device of a two-device cluster has half of its GPUs.
func TestDevices_sharesSeeGPUsOnly(t *testing.T) {
	a := newAlloc(t, testConfig(PolicyDynamic))
	addAgent(t, a, "g", gpuAgent(2), nil)
	addFw(t, a, "f", "r")
	launchGPU(t, a, "f", 1000, 1, time.Unix(100, 0))
	f := a.frameworks["f"]
	if got := a.shareOf(f.used); got != 0.5 {
		t.Fatalf("share of one device in two: %v, want 0.5", got)
	}
}
