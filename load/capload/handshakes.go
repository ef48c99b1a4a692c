package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Handshakes is -handshakes: what a new TLS connection costs the server that ends it, with no request on it.
// Each of -connections workers takes the next due connection (k/rate seconds from the start, the steps'
// schedule), dials -url's host, completes a full handshake (no session cache: nothing to resume) and closes the
// connection. capbench reads the server's CPU before and after (capbench/engine/handshake_probe.py); this
// side counts what completed.
type Handshakes struct {
	Version    string         `json:"version"`
	Mode       string         `json:"mode"`
	Address    string         `json:"address"`
	ServerName string         `json:"server_name"`
	StartUnix  float64        `json:"start_unix"`
	DurationS  float64        `json:"duration_s"`
	Completed  int            `json:"handshakes"`
	Errors     map[string]int `json:"errors"`
	Protocol   string         `json:"protocol"`
	Cipher     string         `json:"cipher"`
}

// handshakeTarget is the address to dial and the name to verify: -url's, which must be https.
func handshakeTarget(raw string) (address, name string, err error) {
	parsed, err := url.Parse(raw)
	if err != nil {
		return "", "", err
	}
	if parsed.Scheme != "https" {
		return "", "", fmt.Errorf("-handshakes needs an https -url, not %q", raw)
	}
	port := parsed.Port()
	if port == "" {
		port = "443"
	}
	return net.JoinHostPort(parsed.Hostname(), port), parsed.Hostname(), nil
}

func runHandshakes(plan Plan) (Handshakes, error) {
	address, name, err := handshakeTarget(plan.URL)
	if err != nil {
		return Handshakes{}, err
	}
	config, err := plan.tlsConfig()
	if err != nil {
		return Handshakes{}, err
	}
	config.ServerName = name
	start := time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(plan.Duration))
	defer cancel()
	var next atomic.Int64
	var mu sync.Mutex
	result := Handshakes{Version: version, Mode: "handshakes", Address: address, ServerName: name,
		StartUnix: float64(start.UnixMicro()) / 1e6, DurationS: plan.Duration.Seconds(), Errors: map[string]int{}}
	var wg sync.WaitGroup
	for range plan.Connections {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				due := start.Add(time.Duration(float64(next.Add(1)-1) / plan.Rate * float64(time.Second)))
				if !due.Before(start.Add(plan.Duration)) {
					return
				}
				if wait := time.Until(due); wait > 0 {
					select {
					case <-time.After(wait):
					case <-ctx.Done():
						return
					}
				}
				state, err := handshake(ctx, address, config, plan.Timeout)
				mu.Lock()
				switch {
				case err != nil && ctx.Err() != nil: // the probe's end, not the server
				case err != nil:
					result.Errors[err.Error()]++
				default:
					result.Completed++
					result.Protocol, result.Cipher = openSSLName(state.Version), tls.CipherSuiteName(state.CipherSuite)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return result, nil
}

// handshake dials, completes one full TLS handshake with the certificate verified, and closes.
func handshake(ctx context.Context, address string, config *tls.Config, timeout time.Duration) (tls.ConnectionState, error) {
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: config}
	dialCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := dialer.DialContext(dialCtx, "tcp", address)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState(), nil
}

func (h Handshakes) write(path string) error {
	data, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// openSSLName is a TLS version as OpenSSL and HAProxy name it (TLSv1.3), as run.json's other records do.
func openSSLName(version uint16) string {
	return strings.Replace(tls.VersionName(version), "TLS ", "TLSv", 1)
}
