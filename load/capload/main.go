// capload is capbench's constant-rate HTTP client for the connections oha and wrk2 cannot open: one per user's
// session (CONNECTION_LIFE=per-user, what a browser does: a user's requests share a connection, the next user
// opens a new one, over TLS a full handshake each), or one per request, over HTTP/1.1 or HTTP/2.
//
// Its schedule is oha's and wrk2's: request k of the step is due at k/rate seconds from the start, whether or
// not a connection is free then; each of -connections workers takes the next due request when it is free, so
// a slow server delays the send, never the due time, and each latency runs from the due time (coordinated
// omission corrected). It writes one row per answered request (due, woken, sent, end, status: seconds from the start)
// and a summary (statuses, errors by message, connections and handshakes opened); capbench's driver
// (capbench/load/drivers/capload.py) computes every figure from those with HdrHistogram, as it does oha's.
//
// Only the standard library: net/http's HTTP/1.1 and HTTP/2 (h2 by ALPN, h2c by prior knowledge), crypto/tls
// verifying the server's certificate against -cacert, with no session cache (each user a new client, so each
// new connection a full handshake). With -handshakes it opens connections alone: a handshake each, no request
// (handshakes.go).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

const version = "capload 1.2.0"

var lives = []string{"keep", "per-user", "per-request"}

// headerFlags collects repeated -H "Name: value" options.
type headerFlags []string

func (h *headerFlags) String() string     { return strings.Join(*h, ", ") }
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

func main() {
	var plan Plan
	var headers headerFlags
	showVersion := flag.Bool("version", false, "print the version and exit")
	handshakesOnly := flag.Bool("handshakes", false, "open TLS connections to -url's host at -rate, each a full handshake closed with no request: what a handshake costs the server (-report alone)")
	flag.StringVar(&plan.URL, "url", "", "the URL every request asks for (or -urls-file)")
	flag.StringVar(&plan.URLsFile, "urls-file", "", "one URL per line, each user's (with -sessions) or each request's drawn at random")
	flag.BoolVar(&plan.Sessions, "sessions", false, "a user takes one line of -urls-file for all of their -session-requests requests")
	flag.Float64Var(&plan.Rate, "rate", 0, "requests per second in total (above 0)")
	flag.DurationVar(&plan.Duration, "duration", 0, "how long the step lasts")
	flag.IntVar(&plan.Connections, "connections", 16, "workers, each with its own connection: the users at once")
	flag.DurationVar(&plan.Timeout, "timeout", 10*time.Second, "each request's timeout")
	flag.StringVar(&plan.Method, "method", "GET", "every request's method")
	flag.Var(&headers, "H", "a header every request sends, \"Name: value\" (repeatable)")
	flag.StringVar(&plan.BodyFile, "body-file", "", "the body every request sends")
	flag.StringVar(&plan.HTTP, "http", "1.1", "1.1, or 2 (h2 by ALPN over TLS, h2c by prior knowledge in clear text)")
	flag.StringVar(&plan.Life, "life", "keep", "how long a connection lives: keep (the step), per-user (a user's session) or per-request")
	flag.IntVar(&plan.SessionRequests, "session-requests", 10, "a user's requests; then the next user")
	flag.StringVar(&plan.CACert, "cacert", "", "over https: the authority the server's certificate is verified against")
	flag.StringVar(&plan.Report, "report", "capload.json", "where the summary goes")
	flag.StringVar(&plan.Rows, "rows", "requests.tsv", "where each answered request's row goes")
	flag.Parse()
	if *showVersion {
		fmt.Println(version)
		return
	}
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			fail("-H %q is not \"Name: value\"", h)
		}
		plan.Headers = append(plan.Headers, [2]string{strings.TrimSpace(name), strings.TrimSpace(value)})
	}
	if err := plan.check(); err != nil {
		fail("%v", err)
	}
	if *handshakesOnly {
		probe, err := runHandshakes(plan)
		if err == nil {
			err = probe.write(plan.Report)
		}
		if err != nil {
			fail("%v", err)
		}
		return
	}
	step, err := newStep(plan)
	if err != nil {
		fail("%v", err)
	}
	summary := step.run()
	if err := summary.write(plan.Report, plan.Rows); err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "capload: "+format+"\n", args...)
	os.Exit(2)
}
