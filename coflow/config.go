package coflow

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Scheduler names a coflow scheduler. Philae is the default.
type Scheduler string

// The schedulers. Only sebf, scf and aalo-oracle order by flow sizes (they
// are clairvoyant), and fifo reads them for its MADD rates; the others see
// a flow's size only when it completes.
const (
	// SchedulerPhilae learns each wide coflow's size from a few pilot flows
	// and orders coflows by Config.Policy in Aalo's weighted queues.
	SchedulerPhilae Scheduler = "philae"
	// SchedulerAalo is D-CLAS: every coflow starts in the top queue and is
	// demoted as the bytes it has sent cross the queue thresholds.
	SchedulerAalo Scheduler = "aalo"
	// SchedulerAaloOracle is Aalo with each coflow placed at arrival in the
	// queue its true size selects (clairvoyant; no learning cost).
	SchedulerAaloOracle Scheduler = "aalo-oracle"
	// SchedulerSEBF is Varys: smallest effective bottleneck first, with
	// MADD rates (clairvoyant).
	SchedulerSEBF Scheduler = "sebf"
	// SchedulerSCF is shortest coflow first by total size (clairvoyant).
	SchedulerSCF Scheduler = "scf"
	// SchedulerFIFO serves coflows in arrival order with MADD rates, as the
	// reference simulator's coflow-level FIFO (it reads sizes for the
	// rates, not for the order).
	SchedulerFIFO Scheduler = "fifo"
	// SchedulerFair is per-flow max-min fair sharing over the port sides
	// (progressive filling): what a flow cannot use at one side goes to
	// the other flows there.
	SchedulerFair Scheduler = "fair"
	// SchedulerFairSplit is per-flow fair sharing as the reference
	// simulator's FAIR: each port side split equally among its flows, each
	// flow at the smaller of its two shares, nothing redistributed
	// (SplitRate).
	SchedulerFairSplit Scheduler = "fair-split"
)

// Schedulers lists every scheduler, the default first.
func Schedulers() []Scheduler {
	return []Scheduler{SchedulerPhilae, SchedulerAalo, SchedulerAaloOracle, SchedulerSEBF,
		SchedulerSCF, SchedulerFIFO, SchedulerFair, SchedulerFairSplit}
}

// ParseScheduler resolves a scheduler name.
func ParseScheduler(name string) (Scheduler, error) {
	for _, s := range Schedulers() {
		if string(s) == name {
			return s, nil
		}
	}
	names := make([]string, 0, len(Schedulers()))
	for _, s := range Schedulers() {
		names = append(names, string(s))
	}
	return "", fmt.Errorf("%w: %q (want one of %s)", ErrUnknownScheduler, name, strings.Join(names, ", "))
}

// Policy is Philae's inter-coflow ordering metric (docs/coflow.md).
type Policy string

// Philae's ordering policies. D is the default.
const (
	// PolicyA is smallest job first: x = l̂·N, the estimated size.
	PolicyA Policy = "A"
	// PolicyB is shortest remaining time first: x = max(1, l̂·N − bytes sent).
	PolicyB Policy = "B"
	// PolicyC is least contention first: x = the number of other coflows in
	// the same queue sharing a port; coflows are not piloted.
	PolicyC Policy = "C"
	// PolicyD is least length-weighted port contention:
	// x = Σ over the coflow's active port sides p of max(1, l̂ − b_p)·k_p.
	PolicyD Policy = "D"
)

// Config configures a Coordinator. Start from DefaultConfig: zero values of
// the numeric fields are invalid, not defaults.
type Config struct {
	// Scheduler selects the scheduler (default philae).
	Scheduler Scheduler
	// Ports is the number of ports; a flow's endpoints lie in [0, Ports).
	// Every port has an egress (sending) and an ingress (receiving) side.
	Ports int
	// Capacity is each port side's bandwidth in bytes per second (default
	// 125e6, 1 Gbps). Only sebf and fifo read it, to compute MADD rates.
	Capacity float64

	// Queues is K, the number of main priority queues (default 10).
	Queues int
	// FirstQueueLimit is Q_hi_0 in bytes, the upper threshold of queue 0
	// (default 10 MB = 10·2^20 bytes, as Aalo's simulator).
	FirstQueueLimit float64
	// QueueGrowth is E: Q_hi_{q+1} = E·Q_hi_q (default 10).
	QueueGrowth float64
	// SlotsPerRound is W, the slots of one weighted round (default 256).
	SlotsPerRound int
	// WeightRatio is w: queue q gets floor(W / w^(q−q_min)) slots of a round,
	// q_min being the highest non-empty queue (default 10).
	WeightRatio float64
	// Slot is δ, the length of one slot of the weighted rotation
	// (default 8 ms; the paper scales it to 48 ms at 900 ports).
	Slot time.Duration

	// ThinLimit is T: philae never pilots a coflow of at most T flows
	// (default 7; 0 pilots every coflow).
	ThinLimit int
	// PilotFraction is ρ: a wide coflow gets min(s, max(1, ⌊ρ·s⌋)) pilots,
	// s being its number of senders (default 0.05).
	PilotFraction float64
	// Policy is philae's ordering metric (default D).
	Policy Policy
	// ContentionIncludesSelf makes k_p in policy D count the coflow itself,
	// so an uncontended coflow is still ordered by l̂·(s+r) (default true;
	// the paper's prose says "other" coflows).
	ContentionIncludesSelf bool
	// WorkConserving lets a piloting coflow's other flows use ports that
	// would otherwise idle (default true, per the paper).
	WorkConserving bool
	// QueueFIFO makes philae serve the coflows of a main queue in order of
	// entry, as the paper does. By default (false) they go smallest metric
	// first, entry breaking ties: a queue spans a factor of QueueGrowth in
	// the metric, and serving its small coflows first is what brings Philae
	// within reach of clairvoyant SEBF (docs/coflow.md). Aalo's queues stay
	// FIFO either way; policy C always orders by its metric.
	QueueFIFO bool
}

// DefaultConfig returns the paper's defaults (docs/coflow.md) for a fabric of
// the given number of ports.
func DefaultConfig(ports int) Config {
	return Config{
		Scheduler:              SchedulerPhilae,
		Ports:                  ports,
		Capacity:               125e6,
		Queues:                 10,
		FirstQueueLimit:        10 << 20,
		QueueGrowth:            10,
		SlotsPerRound:          256,
		WeightRatio:            10,
		Slot:                   8 * time.Millisecond,
		ThinLimit:              7,
		PilotFraction:          0.05,
		Policy:                 PolicyD,
		ContentionIncludesSelf: true,
		WorkConserving:         true,
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if _, err := ParseScheduler(string(c.Scheduler)); err != nil {
		return err
	}
	switch c.Policy {
	case PolicyA, PolicyB, PolicyC, PolicyD:
	default:
		return fmt.Errorf("%w: %q (want A, B, C or D)", ErrUnknownPolicy, c.Policy)
	}
	finitePos := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	switch {
	case c.Ports <= 0:
		return fmt.Errorf("%w: ports %d", ErrInvalidConfig, c.Ports)
	case !finitePos(c.Capacity):
		return fmt.Errorf("%w: capacity %v", ErrInvalidConfig, c.Capacity)
	case c.Queues <= 0:
		return fmt.Errorf("%w: queues %d", ErrInvalidConfig, c.Queues)
	case !finitePos(c.FirstQueueLimit):
		return fmt.Errorf("%w: first queue limit %v", ErrInvalidConfig, c.FirstQueueLimit)
	case !finitePos(c.QueueGrowth) || c.QueueGrowth <= 1:
		return fmt.Errorf("%w: queue growth %v (want > 1)", ErrInvalidConfig, c.QueueGrowth)
	case c.SlotsPerRound <= 0:
		return fmt.Errorf("%w: slots per round %d", ErrInvalidConfig, c.SlotsPerRound)
	case !finitePos(c.WeightRatio) || c.WeightRatio < 1:
		return fmt.Errorf("%w: weight ratio %v (want >= 1)", ErrInvalidConfig, c.WeightRatio)
	case c.Slot <= 0:
		return fmt.Errorf("%w: slot %v", ErrInvalidConfig, c.Slot)
	case c.ThinLimit < 0:
		return fmt.Errorf("%w: thin limit %d", ErrInvalidConfig, c.ThinLimit)
	case !finitePos(c.PilotFraction) || c.PilotFraction > 1:
		return fmt.Errorf("%w: pilot fraction %v (want (0, 1])", ErrInvalidConfig, c.PilotFraction)
	}
	return nil
}
