package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
)

// Plan is one step as the command line gives it.
type Plan struct {
	URL, URLsFile   string
	Sessions        bool
	Rate            float64
	Duration        time.Duration
	Connections     int
	Timeout         time.Duration
	Method          string
	Headers         [][2]string
	BodyFile        string
	HTTP, Life      string
	SessionRequests int
	CACert          string
	Report, Rows    string
}

func (p Plan) check() error {
	var problems []string
	if (p.URL == "") == (p.URLsFile == "") {
		problems = append(problems, "give one of -url and -urls-file")
	}
	if p.Rate <= 0 {
		problems = append(problems, fmt.Sprintf("-rate %g: a step needs a rate above 0 (capload has no closed loop)", p.Rate))
	}
	if p.Duration <= 0 {
		problems = append(problems, "-duration must be above 0")
	}
	if p.Connections < 1 || p.SessionRequests < 1 || p.Timeout <= 0 {
		problems = append(problems, "-connections, -session-requests and -timeout must be above 0")
	}
	if p.HTTP != "1.1" && p.HTTP != "2" {
		problems = append(problems, fmt.Sprintf("-http %q: use 1.1 or 2", p.HTTP))
	}
	if !slices.Contains(lives, p.Life) {
		problems = append(problems, fmt.Sprintf("-life %q: use one of %s", p.Life, strings.Join(lives, ", ")))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// targets are the URLs a step draws from: -url alone, or -urls-file's lines.
func (p Plan) targets() ([]string, error) {
	if p.URL != "" {
		return []string{p.URL}, nil
	}
	data, err := os.ReadFile(p.URLsFile)
	if err != nil {
		return nil, err
	}
	var urls []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			urls = append(urls, line)
		}
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("-urls-file %s has no URL", p.URLsFile)
	}
	return urls, nil
}

// tlsConfig verifies the server against -cacert (the system's authorities without it) and keeps no session
// cache: every connection a user opens is a full handshake, as a new visitor's first one is.
func (p Plan) tlsConfig() (*tls.Config, error) {
	config := &tls.Config{MinVersion: tls.VersionTLS12}
	if p.CACert != "" {
		pem, err := os.ReadFile(p.CACert)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-cacert %s holds no PEM certificate", p.CACert)
		}
		config.RootCAs = pool
	}
	return config, nil
}

// transport is one user's client side: at most one connection, the protocol -http names and nothing else (no
// fallback from HTTP/2 to HTTP/1.1 that would measure another protocol than asked), keep-alive off per request.
func (p Plan) transport(config *tls.Config) *http.Transport {
	protocols := new(http.Protocols)
	if p.HTTP == "2" {
		protocols.SetHTTP2(true)
		protocols.SetUnencryptedHTTP2(true)
	} else {
		protocols.SetHTTP1(true)
	}
	return &http.Transport{
		TLSClientConfig:     config.Clone(),
		Protocols:           protocols,
		MaxConnsPerHost:     1,
		MaxIdleConnsPerHost: 1,
		DisableKeepAlives:   p.Life == "per-request",
		DisableCompression:  true,
		IdleConnTimeout:     p.Duration + p.Timeout,
	}
}
