package main

import (
	"reflect"
	"testing"
)

func TestParseSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "4096", want: 4096},
		{in: "500KB", want: 500 << 10},
		{in: "2MB", want: 2 << 20},
		{in: "1.5mb", want: 3 << 19},
		{in: "3MiB", want: 3 << 20},
		{in: "10K", want: 10 << 10},
		{in: "7B", want: 7},
		{in: "", bad: true},
		{in: "-1MB", bad: true},
		{in: "lots", bad: true},
	}
	for _, tc := range tests {
		got, err := parseSize(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d (error: %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestFormatSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{512: "512B", 500 << 10: "500KB", 2 << 20: "2.0MB", 1536 << 10: "1.5MB"} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestParseJobs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, list, role string
		want             []jobSpec
		bad              bool
	}{
		{
			name: "roles named and alternating",
			list: "wordcount:2MB@batch, sort:1MB,wordcount:500KB",
			want: []jobSpec{
				{ID: "wordcount-1", Kind: wordCount, Size: 2 << 20, Role: "batch"},
				{ID: "sort-2", Kind: sortJob, Size: 1 << 20, Role: roleAnalytics},
				{ID: "wordcount-3", Kind: wordCount, Size: 500 << 10, Role: roleBatch},
			},
		},
		{
			name: "default role",
			list: "sort:1KB", role: "eng/prod",
			want: []jobSpec{{ID: "sort-1", Kind: sortJob, Size: 1 << 10, Role: "eng/prod"}},
		},
		{name: "unknown kind", list: "grep:1MB", bad: true},
		{
			name: "no size",
			list: "sort@batch",
			want: []jobSpec{{ID: "sort-1", Kind: sortJob, Role: "batch"}},
		},
		{name: "bad size", list: "sort:big", bad: true},
		{name: "empty", list: " , ", bad: true},
		{name: "bad role", list: "sort:1MB@no role", bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseJobs(tc.list, tc.role)
			if (err != nil) != tc.bad {
				t.Fatalf("parseJobs(%q): error %v, want error: %v", tc.list, err, tc.bad)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parseJobs(%q) = %+v, want %+v", tc.list, got, tc.want)
			}
		})
	}
}

func TestParseJobs_Default(t *testing.T) {
	t.Parallel()
	jobs, err := parseJobs(defaultJobs, "")
	if err != nil {
		t.Fatal(err)
	}
	roles, kinds := map[string]int{}, map[jobKind]int{}
	for _, j := range jobs {
		roles[j.Role]++
		kinds[j.Kind]++
	}
	if len(jobs) < 3 || roles[roleAnalytics] == 0 || roles[roleBatch] == 0 || kinds[wordCount] == 0 || kinds[sortJob] == 0 {
		t.Errorf("default mix %+v: want several word counts and sorts in both roles", jobs)
	}
}

func TestJobSpec_WithTasks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		size                 int64
		maps, reducers       int
		wantMaps, wantReduce int
	}{
		{size: 0, wantMaps: 1, wantReduce: 1},
		{size: 1 << 20, wantMaps: 1, wantReduce: 1},
		{size: 128 << 20, wantMaps: 1, wantReduce: 1},
		{size: 128<<20 + 1, wantMaps: 2, wantReduce: 1},
		{size: 1 << 30, wantMaps: 8, wantReduce: 4},
		{size: 10 << 30, wantMaps: 80, wantReduce: maxReducers},
		{size: 1 << 20, maps: 3, reducers: 5, wantMaps: 3, wantReduce: 5},
	}
	for _, tc := range tests {
		got := jobSpec{Size: tc.size}.withTasks(tc.maps, tc.reducers, defaultSplitSize)
		if got.Maps != tc.wantMaps || got.Reducers != tc.wantReduce {
			t.Errorf("size %d, flags %d/%d: %d maps, %d reducers; want %d, %d",
				tc.size, tc.maps, tc.reducers, got.Maps, got.Reducers, tc.wantMaps, tc.wantReduce)
		}
	}
	if got := (jobSpec{Size: 8 << 20}).withTasks(0, 0, demoSplitSize); got.Maps != 8 || got.Reducers != 4 {
		t.Errorf("8MB at the demonstration's split size: %d maps, %d reducers; want 8, 4", got.Maps, got.Reducers)
	}
}
