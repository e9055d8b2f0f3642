package simagent

import (
	"fmt"
	"strings"
	"time"

	"github.com/allot-project/allot/protocol"
)

// LabelBehaviour is the task label that tells an Agent how the task
// behaves once RUNNING; its value is a Behaviour's String form.
const LabelBehaviour = "simagent.behaviour"

// BehaviourKind is what a simulated task does once it runs.
type BehaviourKind string

// Behaviour kinds.
const (
	// BehaviourFinish ends the task FINISHED after Behaviour.After.
	BehaviourFinish BehaviourKind = "finish"
	// BehaviourFail ends the task FAILED after Behaviour.After.
	BehaviourFail BehaviourKind = "fail"
	// BehaviourRun keeps the task RUNNING until it is killed (or ended by
	// Agent.End).
	BehaviourRun BehaviourKind = "run"
)

// Behaviour says how a simulated task ends.
type Behaviour struct {
	Kind  BehaviourKind
	After time.Duration
}

// Finish is a task that ends FINISHED after d.
func Finish(d time.Duration) Behaviour { return Behaviour{Kind: BehaviourFinish, After: d} }

// Fail is a task that ends FAILED after d.
func Fail(d time.Duration) Behaviour { return Behaviour{Kind: BehaviourFail, After: d} }

// RunUntilKilled is a task that runs until it is killed.
func RunUntilKilled() Behaviour { return Behaviour{Kind: BehaviourRun} }

// String renders the behaviour as a label value: "finish:50ms", "fail:0s"
// or "run".
func (b Behaviour) String() string {
	if b.Kind == BehaviourRun {
		return string(b.Kind)
	}
	return string(b.Kind) + ":" + b.After.String()
}

// Labels returns the task labels that select this behaviour.
func (b Behaviour) Labels() map[string]string {
	return map[string]string{LabelBehaviour: b.String()}
}

// ParseBehaviour reads a Behaviour's String form.
func ParseBehaviour(s string) (Behaviour, error) {
	kind, after, _ := strings.Cut(s, ":")
	b := Behaviour{Kind: BehaviourKind(kind)}
	switch b.Kind {
	case BehaviourRun:
		return b, nil
	case BehaviourFinish, BehaviourFail:
		d, err := time.ParseDuration(after)
		if err != nil || d < 0 {
			return Behaviour{}, fmt.Errorf("behaviour %q: bad duration", s)
		}
		b.After = d
		return b, nil
	}
	return Behaviour{}, fmt.Errorf("behaviour %q: unknown kind", s)
}

// behaviourOf returns the task's labelled behaviour, or def.
func behaviourOf(t protocol.TaskInfo, def Behaviour) Behaviour {
	if s, ok := t.Labels[LabelBehaviour]; ok {
		if b, err := ParseBehaviour(s); err == nil {
			return b
		}
	}
	return def
}

// TaskKey names a task across frameworks.
type TaskKey struct {
	FrameworkID protocol.FrameworkID
	TaskID      protocol.TaskID
}

// String renders the key as "framework/task".
func (k TaskKey) String() string { return string(k.FrameworkID) + "/" + string(k.TaskID) }
