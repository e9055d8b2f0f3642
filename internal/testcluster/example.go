package testcluster

import (
	"fmt"
	"testing"
)

// ForExample starts a cluster outside a test, for Examples, which have no
// *testing.T: logs are dropped and failures panic. Call the returned
// function to stop it.
func ForExample(opts Options) (*Cluster, func()) {
	tb := &exampleTB{}
	return New(tb, opts), tb.cleanup
}

// exampleTB is the part of testing.TB a cluster uses.
type exampleTB struct {
	testing.TB // nil: any other method panics
	cleanups   []func()
}

func (e *exampleTB) Helper()                      {}
func (e *exampleTB) Name() string                 { return "Example" }
func (e *exampleTB) Log(...any)                   {}
func (e *exampleTB) Logf(string, ...any)          {}
func (e *exampleTB) Cleanup(f func())             { e.cleanups = append(e.cleanups, f) }
func (e *exampleTB) Fatal(args ...any)            { panic(fmt.Sprint(args...)) }
func (e *exampleTB) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
func (e *exampleTB) Errorf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }

func (e *exampleTB) cleanup() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}
