package dag

import (
	"testing"

	"github.com/allot-project/allot/protocol"
)

func res(cpu, mem int64) protocol.Resources {
	return protocol.Scalars(map[string]int64{protocol.ResCPUs: cpu, protocol.ResMem: mem})
}

func TestDivideShare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		total protocol.Resources
		caps  []protocol.Resources
		want  []protocol.Resources
	}{
		{"one job takes it all", res(1000, 100), []protocol.Resources{res(10, 1)}, []protocol.Resources{res(1000, 100)}},
		{"equal jobs split evenly", cpus(4000), []protocol.Resources{cpus(8000), cpus(8000)},
			[]protocol.Resources{cpus(2000), cpus(2000)}},
		{"a small job gets its cap, the rest goes on", cpus(4000), []protocol.Resources{cpus(1000), cpus(8000), cpus(8000)},
			[]protocol.Resources{cpus(1000), cpus(1500), cpus(1500)}},
		{"DRF across resources", res(9000, 18000), []protocol.Resources{res(10000, 40000), res(30000, 10000)},
			// Both dominant shares reach 2/3 (job 0's of memory, job 1's of
			// CPU) when CPU runs out; the 4000 MiB left are split evenly.
			[]protocol.Resources{res(3000, 14000), res(6000, 4000)}},
		{"unclaimed capacity is spread over its users", cpus(3000), []protocol.Resources{cpus(500), cpus(500)},
			[]protocol.Resources{cpus(1500), cpus(1500)}},
		{"a job with nothing left gets nothing", cpus(3000), []protocol.Resources{{}, cpus(500)},
			[]protocol.Resources{{}, cpus(3000)}},
		{"no share", protocol.Resources{}, []protocol.Resources{cpus(1), cpus(1)},
			[]protocol.Resources{{}, {}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := divideShare(tc.total, tc.caps)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			var sum protocol.Resources
			for i := range got {
				if !got[i].Equal(tc.want[i]) {
					t.Errorf("job %d: got %v, want %v", i, got[i], tc.want[i])
				}
				sum.AddInPlace(got[i])
			}
			if !tc.total.IsEmpty() && !sum.Equal(tc.total) {
				t.Errorf("shares add up to %v, want %v", sum, tc.total)
			}
		})
	}
}
