package coflow

import (
	"fmt"
	"slices"
	"time"
)

// CoflowInfo is the coordinator's view of one coflow, for the simulator's
// metrics (learning time, estimation error, queue moves) and for operators.
type CoflowInfo struct {
	ID      CoflowID
	Arrival time.Time
	Phase   Phase
	// Pilots are the pilot flows' indices in the order they were picked.
	Pilots []int
	// Estimate is l̂, the mean pilot length, once the pilots have finished.
	Estimate float64
	// EstimatedSize is Ŝ = l̂·N.
	EstimatedSize float64
	// EstimatedAt is when the last pilot finished (zero before).
	EstimatedAt time.Time
	// Queue is the main queue (the last one once finished), or -1 when the
	// coflow is in none (thin, piloting, or a single-order scheduler).
	Queue int
	// Metric is the last ordering metric computed (philae's x(C), sebf's Γ
	// in seconds, the thin class's contention).
	Metric float64
	// BytesSent counts finished flows' bytes and reported progress.
	BytesSent int64
	// FlowsLeft is the number of unfinished flows.
	FlowsLeft int
}

// Info returns a registered coflow's state.
func (co *Coordinator) Info(id CoflowID) (CoflowInfo, error) {
	c, ok := co.coflows[id]
	if !ok {
		return CoflowInfo{}, fmt.Errorf("info %s: %w", id, ErrUnknownCoflow)
	}
	q := c.queue // a finished coflow keeps its last queue
	if c.phase == PhaseThin || c.phase == PhasePilot {
		q = -1
	}
	return CoflowInfo{
		ID:            c.id,
		Arrival:       c.arrival,
		Phase:         c.phase,
		Pilots:        slices.Clone(c.pickOrder),
		Estimate:      c.pilotEst,
		EstimatedSize: c.pilotEst * float64(len(c.flows)),
		EstimatedAt:   c.estimated,
		Queue:         q,
		Metric:        c.metric,
		BytesSent:     c.bytesSent,
		FlowsLeft:     c.left,
	}, nil
}
