// Package stats holds the summary statistics the simulators report: means,
// medians, nearest-rank percentiles, ratios and Jain's fairness index. None
// of them changes its input, so a result's samples can be summarised
// several ways.
package stats
