package loadgen

import (
	"context"
	"fmt"
	"time"
)

// reading is the masters' metrics at one moment.
type reading struct {
	at      time.Time
	metrics []scrape // by master; nil for one that did not answer
}

func (r *run) read(ctx context.Context) reading {
	out := reading{at: time.Now(), metrics: make([]scrape, len(r.ms))}
	for i, m := range r.ms {
		if s, err := readMetrics(ctx, m); err == nil {
			out.metrics[i] = s
		}
	}
	return out
}

// window measures the steady state for Duration, killing the leader
// Kills times at even intervals.
func (r *run) window(ctx context.Context) error {
	restarted := make([]bool, len(r.ms))
	r.rec.measure(true)
	before, traffic := r.read(ctx), r.fleet.traffic() // also starts the agents' lag anew
	start := time.Now()
	for k := range r.cfg.Kills {
		at := start.Add(time.Duration(k+1) * r.cfg.Duration / time.Duration(r.cfg.Kills+1))
		if err := sleepUntil(ctx, at); err != nil {
			return err
		}
		res, err := r.killLeader(ctx)
		if err != nil {
			return err
		}
		restarted[res.Master] = true
		r.report.Kills = append(r.report.Kills, res)
		r.progress("kill %d: %s killed; leader again in %s, first offer %s after the kill", k+1,
			r.ms[res.Master].name, res.ToLeader.Round(time.Millisecond), res.ToOffer.Round(time.Millisecond))
	}
	if err := sleepUntil(ctx, start.Add(r.cfg.Duration)); err != nil {
		return err
	}
	after, fs := r.read(ctx), r.fleet.stats()
	traffic2 := fs.Traffic
	r.report.AgentsLag = fs.Lag
	r.report.AgentOutages = fs.Outages
	r.rec.measure(false)
	r.summarize(before, after, restarted)
	secs := after.at.Sub(before.at).Seconds()
	r.report.Window = after.at.Sub(before.at)
	r.report.NATSMsgsPerSec = float64(traffic2.InMsgs+traffic2.OutMsgs-traffic.InMsgs-traffic.OutMsgs) / secs
	r.report.NATSBytesPerSec = float64(traffic2.InBytes+traffic2.OutBytes-traffic.InBytes-traffic.OutBytes) / secs
	r.report.NATSReconnects = traffic2.Reconnects - traffic.Reconnects
	l := r.rec.latencies()
	r.report.OfferToLaunch, r.report.AcceptCall = quantiles(l.offerLaunch), quantiles(l.acceptCall)
	r.report.OfferWait, r.report.CallToAgent = quantiles(l.offerWait), quantiles(l.callToAgent)
	r.report.OfferToWire = quantiles(l.offerToWire)
	if len(r.report.Kills) > 0 {
		r.report.AcceptCallCalm, r.report.OfferToWireCalm = quantiles(l.acceptCallCalm), quantiles(l.offerToWireCalm)
	}
	r.report.StatusUpdate = quantiles(l.statusDelay)
	return nil
}

// killLeader kills the leader, times its replacement and the first offer
// after the kill, and starts the killed master again.
func (r *run) killLeader(ctx context.Context) (Kill, error) {
	i, err := waitLeader(ctx, r.ms)
	if err != nil {
		return Kill{}, err
	}
	killed := time.Now()
	r.rec.killed(killed)
	offer := r.rec.firstOfferAfter(killed)
	r.ms[i].kill()
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := waitLeader(wctx, r.ms); err != nil {
		return Kill{}, err
	}
	res := Kill{Master: i, ToLeader: time.Since(killed)}
	select {
	case t := <-offer:
		res.ToOffer = t.Sub(killed)
	case <-wctx.Done():
		return Kill{}, fmt.Errorf("no offer within a minute of killing %s", r.ms[i].name)
	}
	if err := r.ms[i].start(); err != nil {
		return Kill{}, err
	}
	if err := waitReady(wctx, r.ms[i]); err != nil {
		return Kill{}, err
	}
	return res, nil
}

// summarize turns the readings around the window into the report's
// master figures. A master started again during the window counts from
// zero.
func (r *run) summarize(before, after reading, restarted []bool) {
	secs := after.at.Sub(before.at).Seconds()
	var rounds, applies, toLaunch histogram
	for i := range r.ms {
		a, b := after.metrics[i], before.metrics[i]
		if a == nil {
			continue
		}
		if restarted[i] || b == nil {
			b = scrape{}
		}
		rounds = rounds.plus(a.histogram("allot_allocation_round_seconds").since(b.histogram("allot_allocation_round_seconds")))
		toLaunch = toLaunch.plus(a.histogram("allot_offer_to_launch_seconds").since(b.histogram("allot_offer_to_launch_seconds")))
		applies = applies.plus(a.histogram("allot_raft_apply_seconds").since(b.histogram("allot_raft_apply_seconds")))
		cpu := (a.value("process_cpu_seconds_total") - b.value("process_cpu_seconds_total")) / secs
		r.report.MasterCPU = append(r.report.MasterCPU, cpu)
		r.report.MasterRSS = append(r.report.MasterRSS, a.value("process_resident_memory_bytes"))
		r.report.MasterHeap = append(r.report.MasterHeap, a.value("go_memstats_heap_inuse_bytes"))
	}
	r.report.Rounds = int(rounds.count)
	r.report.RoundMean, r.report.RoundP99 = seconds(rounds.mean()), seconds(rounds.quantile(0.99))
	r.report.LeaderOfferToAcceptP99, r.report.LeaderOfferToAcceptP50 = seconds(toLaunch.quantile(0.99)), seconds(toLaunch.quantile(0.5))
	r.report.Commits = int(applies.count)
	r.report.CommitMean, r.report.CommitP99 = seconds(applies.mean()), seconds(applies.quantile(0.99))
}

func sleepUntil(ctx context.Context, t time.Time) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(t)):
		return nil
	}
}
