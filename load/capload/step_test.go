package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A plain net/http server counting the connections it accepts: how many a step opens is the client's own
// behaviour, which the server only witnesses.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var accepted atomic.Int64
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok"))
	}))
	server.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			accepted.Add(1)
		}
	}
	server.Start()
	t.Cleanup(server.Close)
	return server, &accepted
}

func runStep(t *testing.T, url, life string) (Summary, int64) {
	server, accepted := countingServer(t)
	plan := Plan{URL: server.URL + url, Rate: 200, Duration: time.Second, Connections: 4, Timeout: time.Second,
		Method: "GET", HTTP: "1.1", Life: life, SessionRequests: 5}
	if err := plan.check(); err != nil {
		t.Fatal(err)
	}
	step, err := newStep(plan)
	if err != nil {
		t.Fatal(err)
	}
	summary := step.run()
	server.Close() // every connection closed, so the count is final
	return summary, accepted.Load()
}

func TestEachLifeOpensItsConnections(t *testing.T) {
	for _, c := range []struct {
		life     string
		min, max int
	}{
		{"keep", 4, 4},       // one per worker for the step
		{"per-user", 40, 44}, // 200 requests of 5-request users: 40, and a worker's last one cut short
		{"per-request", 200, 200},
	} {
		summary, accepted := runStep(t, "/", c.life)
		if summary.Statuses["200"] != 200 || len(summary.rows) != 200 {
			t.Errorf("%s: %v answered, %d rows, errors %v", c.life, summary.Statuses, len(summary.rows), summary.Errors)
		}
		if summary.ConnectionsOpened < c.min || summary.ConnectionsOpened > c.max || int64(summary.ConnectionsOpened) != accepted {
			t.Errorf("%s: opened %d (the server accepted %d), want %d..%d", c.life, summary.ConnectionsOpened,
				accepted, c.min, c.max)
		}
	}
}

func TestEveryRequestIsDueOnTheSchedule(t *testing.T) {
	summary, _ := runStep(t, "/", "keep")
	seen := map[int]bool{}
	for _, r := range summary.rows {
		k := int(r.due*200 + 0.5)
		if seen[k] || r.stamp < r.due || r.sent < r.stamp || r.end < r.sent {
			t.Fatalf("row %+v: due slot %d twice, or woken before due, sent before woken, ended before sent", r, k)
		}
		seen[k] = true
	}
	if len(seen) != 200 {
		t.Errorf("%d due slots, want 200", len(seen))
	}
}

func TestBadPlansAreRefusedTogether(t *testing.T) {
	err := Plan{Rate: 0, HTTP: "3", Life: "forever"}.check()
	for _, want := range []string{"-url", "-rate 0", "-duration", "-http \"3\"", "-life \"forever\""} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %v lacks %q", err, want)
		}
	}
}
