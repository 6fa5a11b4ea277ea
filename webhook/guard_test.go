package webhook

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"
)

// A refusal is either a forbidden target (errors.Is ErrForbiddenTarget:
// the address is internal) or an invalid URL (scheme, user info), which
// the store reports as invalid params.
const (
	allowed   = "allowed"
	forbidden = "forbidden"
	invalid   = "invalid"
)

func TestGuard(t *testing.T) {
	tests := []struct {
		name string
		url  string
		want string // with Guard{}
		// wantPrivate is the verdict with Guard{AllowPrivate: true}.
		wantPrivate string
	}{
		{"loopback v4", "http://127.0.0.1/", forbidden, allowed},
		{"loopback v4 with port and path", "http://127.0.0.1:8080/hook", forbidden, allowed},
		{"loopback v6", "http://[::1]/", forbidden, allowed},
		{"RFC 1918 10/8", "http://10.1.2.3/", forbidden, allowed},
		{"RFC 1918 172.16/12", "http://172.16.0.1/", forbidden, allowed},
		{"RFC 1918 192.168/16", "http://192.168.1.1/", forbidden, allowed},
		{"RFC 4193 unique local", "http://[fd00::1]/", forbidden, allowed},
		{"cloud metadata (link-local)", "http://169.254.169.254/latest/meta-data/", forbidden, allowed},
		{"link-local v6", "http://[fe80::1]/", forbidden, allowed},
		{"multicast v4", "http://224.0.0.1/", forbidden, allowed},
		{"multicast v6", "http://[ff02::1]/", forbidden, allowed},
		{"unspecified v4", "http://0.0.0.0/", forbidden, allowed},
		{"this network 0/8", "http://0.1.2.3/", forbidden, allowed},
		{"unspecified v6", "http://[::]/", forbidden, allowed},
		{"shared address space RFC 6598", "http://100.64.0.1/", forbidden, allowed},
		{"v4-mapped loopback", "http://[::ffff:127.0.0.1]/", forbidden, allowed},
		{"v4-mapped metadata", "http://[::ffff:169.254.169.254]/", forbidden, allowed},
		{"name resolving to loopback", "http://localhost/", forbidden, allowed},
		{"name resolving to loopback with port", "http://localhost:9/hook", forbidden, allowed},
		{"scheme ftp", "ftp://example.com/", invalid, invalid},
		{"scheme file", "file:///etc/passwd", invalid, invalid},
		{"no scheme", "example.com/hook", invalid, invalid},
		{"no host", "http:///hook", invalid, invalid},
		{"user info", "http://user:pw@1.2.3.4/", invalid, invalid},
		{"user info on loopback", "http://user@127.0.0.1/", invalid, invalid},
		{"public v4", "http://93.184.216.34/", allowed, allowed},
		{"public v4 https with port", "https://8.8.8.8:8443/x", allowed, allowed},
		{"public v6", "https://[2606:4700:4700::1111]/hook", allowed, allowed},
		{"just outside shared space", "http://100.128.0.1/", allowed, allowed},
		{"just outside 172.16/12", "http://172.32.0.1/", allowed, allowed},
	}
	verdict := func(err error) string {
		switch {
		case err == nil:
			return allowed
		case errors.Is(err, ErrForbiddenTarget):
			return forbidden
		}
		return invalid
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			err := Guard{}.CheckURL(ctx, tt.url)
			if got := verdict(err); got != tt.want {
				t.Errorf("Guard{}.CheckURL(%q)=%v (%s), want %s", tt.url, err, got, tt.want)
			}
			err = Guard{AllowPrivate: true}.CheckURL(ctx, tt.url)
			if got := verdict(err); got != tt.wantPrivate {
				t.Errorf("Guard{AllowPrivate: true}.CheckURL(%q)=%v (%s), want %s", tt.url, err, got, tt.wantPrivate)
			}
		})
	}
}

// TestGuardDialer checks the dial-time check, the defense against DNS
// rebinding: whatever a name resolved to when the URL was registered, the
// connection itself is refused if it goes to an internal address.
func TestGuardDialer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan struct{}, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}

	for _, addr := range []string{ln.Addr().String(), net.JoinHostPort("localhost", port)} {
		t.Run("refused "+addr, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			c, err := Guard{}.Dialer(time.Second).DialContext(ctx, "tcp", addr)
			if err == nil {
				c.Close()
				t.Fatalf("Guard{}.Dialer().DialContext(%s) connected, want an error wrapping ErrForbiddenTarget", addr)
			}
			if !errors.Is(err, ErrForbiddenTarget) {
				t.Errorf("Guard{}.Dialer().DialContext(%s)=%v, want an error wrapping ErrForbiddenTarget", addr, err)
			}
		})
	}
	select {
	case <-accepted:
		t.Fatal("the listener accepted a connection the guard should have refused")
	default:
	}

	t.Run("allowed with AllowPrivate", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		c, err := Guard{AllowPrivate: true}.Dialer(time.Second).DialContext(ctx, "tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("Guard{AllowPrivate: true}.Dialer().DialContext(%s)=%v, want a connection", ln.Addr(), err)
		}
		c.Close()
		select {
		case <-accepted:
		case <-ctx.Done():
			t.Fatal("the listener did not accept the allowed connection")
		}
	})
}

func TestGuardAllowed(t *testing.T) {
	// Allowed is what the dialer applies to every resolved address.
	for _, tt := range []struct {
		ip   string
		want bool
	}{
		{"127.0.0.1", false}, {"127.255.255.254", false}, {"::1", false}, {"10.0.0.1", false},
		{"169.254.0.1", false}, {"100.127.255.255", false}, {"::ffff:10.0.0.1", false},
		{"1.1.1.1", true}, {"2001:4860:4860::8888", true},
	} {
		ip := netip.MustParseAddr(tt.ip)
		if got := (Guard{}).Allowed(ip); got != tt.want {
			t.Errorf("Guard{}.Allowed(%s)=%v, want %v", tt.ip, got, tt.want)
		}
		if !(Guard{AllowPrivate: true}).Allowed(ip) {
			t.Errorf("Guard{AllowPrivate: true}.Allowed(%s)=false, want true", tt.ip)
		}
	}
}
