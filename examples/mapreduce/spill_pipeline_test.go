package main

import (
	"bytes"
	"testing"
)

// TestPipeline_Spills runs jobs whose maps' buffers are far smaller than
// their splits, so that they spill and merge their runs, and checks that
// their outputs are byte for byte those of maps that hold their whole
// split in memory, and that the counters add up across the shuffle.
func TestPipeline_Spills(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kind jobKind
	}{
		{name: "word count", kind: wordCount},
		{name: "sort", kind: sortJob},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := jobSpec{ID: "spill", Kind: tc.kind, Maps: 2, Reducers: 2}
			// 1.5 MB a split against a 256 KB buffer (bufferFor(1)).
			src := source{kind: tc.kind, seed: 31, size: 3 << 20}
			spilled := runPipeline(t, spec, src, pipeline{memMiB: 1})
			whole := runPipeline(t, spec, src, pipeline{})

			t.Logf("1 MiB maps: %d spills, %d bytes spilled", spilled.maps.Spills, spilled.maps.SpilledBytes)
			if spilled.maps.Spills == 0 || spilled.maps.SpilledBytes == 0 {
				t.Errorf("1 MiB maps: %d spills of %d bytes, want some", spilled.maps.Spills, spilled.maps.SpilledBytes)
			}
			if whole.maps.Spills != 0 || whole.maps.SpilledBytes != 0 {
				t.Errorf("unbounded maps: %d spills of %d bytes, want none", whole.maps.Spills, whole.maps.SpilledBytes)
			}
			for r := range spec.Reducers {
				if !bytes.Equal(spilled.outputs[r], whole.outputs[r]) {
					t.Errorf("reducer %d: %d bytes after spilling, %d without", r, len(spilled.outputs[r]), len(whole.outputs[r]))
				}
			}
			verify := verifySort
			if tc.kind == wordCount {
				verify = verifyWordCount
			}
			if _, err := verify(src, spec.Reducers, memOutputs(spilled.outputs)); err != nil {
				t.Errorf("after spilling: %v", err)
			}

			for _, run := range []struct {
				name string
				res  pipelineResult
			}{{"spilled", spilled}, {"whole", whole}} {
				m, r := run.res.maps, run.res.reduces
				if m.RecordsOut != r.RecordsIn || m.BytesOut != r.BytesIn {
					t.Errorf("%s: maps wrote %d records (%d bytes), reducers read %d (%d bytes)",
						run.name, m.RecordsOut, m.BytesOut, r.RecordsIn, r.BytesIn)
				}
				if r.Shuffle == nil || r.BytesIn != r.Shuffle.Bytes {
					t.Errorf("%s: reducers read %d bytes, their shuffle %+v", run.name, r.BytesIn, r.Shuffle)
				}
				if m.BytesIn < src.size {
					t.Errorf("%s: maps read %d bytes of a %d-byte input", run.name, m.BytesIn, src.size)
				}
				// A sort moves every record; a word count's maps combine
				// (across spills too), so the reducers get fewer.
				if tc.kind == sortJob && (m.RecordsOut != m.RecordsIn || r.RecordsOut != m.RecordsIn) {
					t.Errorf("%s: %d records into the maps, %d out, %d out of the reducers", run.name, m.RecordsIn, m.RecordsOut, r.RecordsOut)
				}
			}
			// Spilling changes how a map works, not what it writes.
			if spilled.maps.RecordsOut != whole.maps.RecordsOut || spilled.maps.BytesOut != whole.maps.BytesOut {
				t.Errorf("maps wrote %d records (%d bytes) after spilling, %d (%d bytes) without",
					spilled.maps.RecordsOut, spilled.maps.BytesOut, whole.maps.RecordsOut, whole.maps.BytesOut)
			}
		})
	}
}
