package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Step runs a plan: its workers share the schedule through `next`, the number of the next request due.
type Step struct {
	plan  Plan
	urls  []string
	body  []byte
	tls   *tls.Config
	start time.Time
	next  atomic.Int64
}

// row is one answered request, in seconds from the start of the step: when it was due; when its worker woke for
// it (its due time where the worker was busy until after it: no sleep to be late from), so stamp - due is the
// generator's own lateness (a timer fired late, the CPU taken), never the server's; when it was sent and ended.
type row struct {
	due, stamp, sent, end float64
	status                int
}

// tally is what one worker saw; the step's summary adds them up.
type tally struct {
	rows       []row
	statuses   map[int]int
	errors     map[string]int
	cut        int // in flight when the step ended: neither answered nor failed
	opened     int // connections opened
	handshakes int // TLS handshakes completed
}

func newStep(plan Plan) (*Step, error) {
	urls, err := plan.targets()
	if err != nil {
		return nil, err
	}
	config, err := plan.tlsConfig()
	if err != nil {
		return nil, err
	}
	var body []byte
	if plan.BodyFile != "" {
		if body, err = os.ReadFile(plan.BodyFile); err != nil {
			return nil, err
		}
	}
	return &Step{plan: plan, urls: urls, body: body, tls: config}, nil
}

func (s *Step) run() Summary {
	s.start = time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), s.start.Add(s.plan.Duration))
	defer cancel()
	tallies := make([]tally, s.plan.Connections)
	var wg sync.WaitGroup
	for i := range tallies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tallies[i] = s.work(ctx, uint64(i))
		}()
	}
	wg.Wait()
	return summarize(s.start, s.plan.Duration, tallies)
}

// work is one worker: a user at a time, each over its own connection where the plan's life says so. It takes
// the next due request, waits for its due time if it is early, and sends it; if it is late (the server slow,
// every worker busy), it sends at once and the latency still runs from the due time.
func (s *Step) work(ctx context.Context, worker uint64) (t tally) {
	t = tally{statuses: map[int]int{}, errors: map[string]int{}}
	// The trace's callbacks may run on the transport's dialing goroutine.
	var opened, handshakes atomic.Int64
	defer func() { t.opened, t.handshakes = int(opened.Load()), int(handshakes.Load()) }()
	random := rand.New(rand.NewPCG(worker, uint64(s.start.UnixNano())))
	transport := s.plan.transport(s.tls)
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport,
		// A redirect is the server's answer to this request: counted by its status, not followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	trace := &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if !info.Reused {
				opened.Add(1)
			}
		},
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			if err == nil {
				handshakes.Add(1)
			}
		},
	}
	ctx = httptrace.WithClientTrace(ctx, trace)
	target, inSession := "", 0
	for {
		k := s.next.Add(1) - 1
		dueS := float64(k) / s.plan.Rate
		if dueS >= s.plan.Duration.Seconds() {
			return t
		}
		due := s.start.Add(time.Duration(dueS * float64(time.Second)))
		stampS := dueS
		if wait := time.Until(due); wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return t
			}
			stampS = time.Since(s.start).Seconds()
		}
		if inSession == 0 || !s.plan.Sessions {
			target = s.urls[random.IntN(len(s.urls))]
		}
		s.send(ctx, client, target, dueS, stampS, &t)
		if inSession = (inSession + 1) % s.plan.SessionRequests; inSession == 0 && s.plan.Life == "per-user" {
			transport.CloseIdleConnections() // the user leaves; the next one opens a connection of their own
		}
		if ctx.Err() != nil {
			return t
		}
	}
}

func (s *Step) send(ctx context.Context, client *http.Client, target string, dueS, stampS float64, t *tally) {
	requestCtx, cancel := context.WithTimeout(ctx, s.plan.Timeout)
	defer cancel()
	var body io.Reader
	if s.body != nil {
		body = bytes.NewReader(s.body)
	}
	request, err := http.NewRequestWithContext(requestCtx, s.plan.Method, target, body)
	if err != nil {
		t.errors[err.Error()]++
		return
	}
	for _, h := range s.plan.Headers {
		if h[0] == "Host" {
			request.Host = h[1]
		} else {
			request.Header.Add(h[0], h[1])
		}
	}
	sent := time.Since(s.start).Seconds()
	response, err := client.Do(request)
	if err == nil {
		_, err = io.Copy(io.Discard, response.Body)
		response.Body.Close()
	}
	end := time.Since(s.start).Seconds()
	switch {
	case err != nil && ctx.Err() != nil:
		t.cut++ // the step's end, not the server: unanswered, as oha and wrk2 leave them
	case err != nil:
		t.errors[message(err, requestCtx)]++
	default:
		t.rows = append(t.rows, row{dueS, stampS, sent, end, response.StatusCode})
		t.statuses[response.StatusCode]++
	}
}

// message is an error as capbench's driver classifies it: a request's own timeout named so, else the cause
// without the URL that net/http wraps around it.
func message(err error, requestCtx context.Context) string {
	if errors.Is(requestCtx.Err(), context.DeadlineExceeded) {
		return "request timeout"
	}
	var wrapped *url.Error
	if errors.As(err, &wrapped) {
		return wrapped.Err.Error()
	}
	return err.Error()
}
