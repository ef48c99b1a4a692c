package main

import (
	"crypto/tls"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// A TLS server counting the handshakes it completed: each probe connection is a full one (no session to resume),
// verified against the server's own certificate given as -cacert, and carries no request.
func TestHandshakesAreFullVerifiedAndCarryNoRequest(t *testing.T) {
	var requests, handshakes atomic.Int64
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		requests.Add(1)
	}))
	server.TLS = &tls.Config{VerifyConnection: func(state tls.ConnectionState) error {
		if !state.DidResume {
			handshakes.Add(1)
		}
		return nil
	}}
	server.StartTLS()
	t.Cleanup(server.Close)
	authority := filepath.Join(t.TempDir(), "ca.pem")
	certificate := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
	if err := os.WriteFile(authority, certificate, 0o600); err != nil {
		t.Fatal(err)
	}
	plan := Plan{URL: server.URL, Rate: 100, Duration: time.Second, Connections: 2, Timeout: time.Second,
		Method: "GET", HTTP: "1.1", Life: "keep", SessionRequests: 1, CACert: authority}
	probe, err := runHandshakes(plan)
	if err != nil {
		t.Fatal(err)
	}
	server.Close()
	if probe.Completed < 90 || probe.Completed > 100 || len(probe.Errors) > 0 {
		t.Fatalf("%d handshakes at 100/s for 1 s, errors %v", probe.Completed, probe.Errors)
	}
	if got := handshakes.Load(); got < int64(probe.Completed) {
		t.Fatalf("the server completed %d full handshakes of the %d the probe counted", got, probe.Completed)
	}
	if requests.Load() != 0 || probe.Protocol != "TLSv1.3" || probe.Cipher == "" {
		t.Fatalf("requests %d, protocol %q, cipher %q", requests.Load(), probe.Protocol, probe.Cipher)
	}
}

// Without the authority the server's certificate is not trusted: every handshake an error, none counted.
func TestHandshakesVerifyTheCertificate(t *testing.T) {
	server := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(server.Close)
	plan := Plan{URL: server.URL, Rate: 20, Duration: 500 * time.Millisecond, Connections: 1, Timeout: time.Second}
	probe, err := runHandshakes(plan)
	if err != nil || probe.Completed != 0 || len(probe.Errors) == 0 {
		t.Fatalf("completed %d, errors %v, %v", probe.Completed, probe.Errors, err)
	}
	if _, _, err := handshakeTarget("http://lb:8080/"); err == nil {
		t.Fatal("an http URL was taken for a handshake probe")
	}
}
