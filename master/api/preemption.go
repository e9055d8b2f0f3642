package api

import "github.com/allot-project/allot/protocol"

// PreemptionNeed is a role below its guarantee or a framework below its
// fair share, as the leader's last preemption decision saw it.
type PreemptionNeed struct {
	// For names it: "role eng/prod" or "framework f1".
	For    string             `json:"for"`
	Policy string             `json:"policy"`
	Short  protocol.Resources `json:"short"`
	// Since is when it was first seen; nothing is taken for it before
	// EligibleAt.
	Since      string `json:"since"`
	EligibleAt string `json:"eligible_at"`
	// Covered is how many of its pending tasks have room (free, or held by
	// warned tasks); Blocked that no room could be made for the next.
	Covered int  `json:"covered"`
	Blocked bool `json:"blocked"`
	// Warned counts the tasks warned for it; KillAt is the earliest of
	// their deadlines.
	Warned int     `json:"warned"`
	KillAt *string `json:"kill_at,omitempty"`
}

// WarnedTask is a task warned that it will be taken back.
type WarnedTask struct {
	TaskID   protocol.TaskID `json:"task_id"`
	Reason   string          `json:"reason"`
	For      string          `json:"for"`
	Deadline string          `json:"deadline"`
}
