package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// scrape is one reading of a master's /metrics: every sample's value by
// its name and labels as written ("name{a=\"b\"}").
type scrape map[string]float64

func readMetrics(ctx context.Context, m *master) (scrape, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m.http+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("metrics of %s: %w", m.name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics of %s: %s", m.name, resp.Status)
	}
	out := scrape{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// value is the sum of every series of a metric.
func (s scrape) value(name string) float64 {
	var sum float64
	for k, v := range s {
		if k == name || strings.HasPrefix(k, name+"{") {
			sum += v
		}
	}
	return sum
}

// histogram is a Prometheus histogram's cumulative buckets, sum and count.
type histogram struct {
	bounds []float64 // upper bounds, ascending; the last is +Inf
	counts []float64 // cumulative counts per bound
	sum    float64
	count  float64
}

func (s scrape) histogram(name string) histogram {
	h := histogram{sum: s.value(name + "_sum"), count: s.value(name + "_count")}
	byBound := map[float64]float64{}
	prefix := name + "_bucket{"
	for k, v := range s {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		_, le, ok := strings.Cut(k, `le="`)
		if !ok {
			continue
		}
		le, _, _ = strings.Cut(le, `"`)
		b, err := strconv.ParseFloat(le, 64)
		if err != nil {
			continue
		}
		byBound[b] += v
	}
	for b := range byBound {
		h.bounds = append(h.bounds, b)
	}
	sort.Float64s(h.bounds)
	for _, b := range h.bounds {
		h.counts = append(h.counts, byBound[b])
	}
	return h
}

// since is what the histogram gathered after an earlier reading of it.
func (h histogram) since(before histogram) histogram {
	out := histogram{bounds: h.bounds, sum: h.sum - before.sum, count: h.count - before.count}
	for i, c := range h.counts {
		if i < len(before.counts) && before.bounds[i] == h.bounds[i] {
			c -= before.counts[i]
		}
		out.counts = append(out.counts, c)
	}
	return out
}

func (h histogram) mean() float64 {
	if h.count == 0 {
		return math.NaN()
	}
	return h.sum / h.count
}

// quantile is the upper bound of the bucket that holds quantile q: an
// upper estimate, as coarse as the buckets.
func (h histogram) quantile(q float64) float64 {
	if h.count == 0 {
		return math.NaN()
	}
	rank := q * h.count
	for i, c := range h.counts {
		if c >= rank {
			return h.bounds[i]
		}
	}
	return math.Inf(1)
}

// plus adds two readings of the same histogram (from two masters).
func (h histogram) plus(o histogram) histogram {
	if len(h.bounds) == 0 {
		return o
	}
	out := histogram{bounds: h.bounds, sum: h.sum + o.sum, count: h.count + o.count}
	for i, c := range h.counts {
		if i < len(o.counts) && o.bounds[i] == h.bounds[i] {
			c += o.counts[i]
		}
		out.counts = append(out.counts, c)
	}
	return out
}
