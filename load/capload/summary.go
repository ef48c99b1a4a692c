package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Summary is the step's whole count, written as JSON beside the rows.
type Summary struct {
	Version           string         `json:"version"`
	StartUnix         float64        `json:"start_unix"`
	DurationS         float64        `json:"duration_s"`
	Statuses          map[string]int `json:"statuses"`
	Errors            map[string]int `json:"errors"`
	Cut               int            `json:"cut"`
	ConnectionsOpened int            `json:"connections_opened"`
	TLSHandshakes     int            `json:"tls_handshakes"`
	rows              []row
}

func summarize(start time.Time, duration time.Duration, tallies []tally) Summary {
	s := Summary{Version: version, StartUnix: float64(start.UnixMicro()) / 1e6, DurationS: duration.Seconds(),
		Statuses: map[string]int{}, Errors: map[string]int{}}
	for _, t := range tallies {
		s.rows = append(s.rows, t.rows...)
		for status, n := range t.statuses {
			s.Statuses[strconv.Itoa(status)] += n
		}
		for text, n := range t.errors {
			s.Errors[text] += n
		}
		s.Cut += t.cut
		s.ConnectionsOpened += t.opened
		s.TLSHandshakes += t.handshakes
	}
	return s
}

// write puts the rows first and the summary last, so a summary on disk always has its rows.
func (s Summary) write(reportPath, rowsPath string) error {
	rows, err := os.Create(rowsPath)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(rows)
	fmt.Fprintln(out, "due_s\tstamp_s\tsent_s\tend_s\tstatus")
	for _, r := range s.rows {
		fmt.Fprintf(out, "%.6f\t%.6f\t%.6f\t%.6f\t%d\n", r.due, r.stamp, r.sent, r.end, r.status)
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if err := rows.Close(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(reportPath, append(data, '\n'), 0o644)
}
