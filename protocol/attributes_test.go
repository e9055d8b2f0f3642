package protocol

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Value
	}{
		{"r3", Text("r3")},
		{"", Text("")},
		{"5.15.0", Text("5.15.0")},
		{"25", Number(25)},
		{"-2.5", Number(-2.5)},
		{"1e3", Number(1000)},
		{"{}", Set()},
		{"{ b, a ,b}", Set("a", "b")},
		{"{a", Text("{a")},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got := ParseValue(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
			if back := ParseValue(got.String()); !reflect.DeepEqual(back, got) {
				t.Errorf("ParseValue(String()): got %#v, want %#v", back, got)
			}
		})
	}
}

func TestParseAttributes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    Attributes
		wantErr bool
	}{
		{"empty", "", Attributes{}, false},
		{"blank", "  ", Attributes{}, false},
		{"mixed", "rack=r3,net_gbps=25,features={avx;sse4},kernel=5.15.0",
			Attributes{"rack": Text("r3"), "net_gbps": Number(25), "features": Set("avx", "sse4"), "kernel": Text("5.15.0")}, false},
		{"spaces trimmed", " rack = r3 , zone=z1", Attributes{"rack": Text("r3"), "zone": Text("z1")}, false},
		{"empty value", "gpu=", Attributes{"gpu": Text("")}, false},
		{"value with equals", "k=a=b", Attributes{"k": Text("a=b")}, false},
		{"semicolon outside braces kept", "k=a;b", Attributes{"k": Text("a;b")}, false},
		{"last wins", "rack=r1,rack=r2", Attributes{"rack": Text("r2")}, false},
		{"no equals", "rack", nil, true},
		{"empty key", "=r3", nil, true},
		{"empty pair", "a=1,,b=2", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseAttributes(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("got %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				if !errors.Is(err, ErrInvalidArgument) {
					t.Errorf("got %v, want it to wrap %v", err, ErrInvalidArgument)
				}
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}
