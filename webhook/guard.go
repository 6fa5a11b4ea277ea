package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// ErrForbiddenTarget is returned for a webhook URL or address that the
// SSRF guard refuses.
var ErrForbiddenTarget = errors.New("webhook target not allowed")

// Guard keeps webhooks from reaching internal addresses. By default it
// refuses loopback, private (RFC 1918, RFC 4193), shared (RFC 6598),
// link-local, multicast, unspecified and NAT64 (which embed IPv4)
// addresses, checked both when a
// URL is registered and at every dial, after DNS resolution, so a name
// that later resolves elsewhere (DNS rebinding) is refused too.
type Guard struct {
	// AllowPrivate turns the guard off, for local development and tests.
	AllowPrivate bool
	// Resolver resolves hosts at registration; default net.DefaultResolver.
	Resolver *net.Resolver
}

var (
	sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")
	// nat64 prefixes embed IPv4 addresses, internal ones included.
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
)

// Allowed reports whether a webhook may connect to ip.
func (g Guard) Allowed(ip netip.Addr) bool {
	if g.AllowPrivate {
		return true
	}
	ip = ip.Unmap()
	return ip.IsValid() && !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() ||
		ip.IsUnspecified() || sharedAddressSpace.Contains(ip) || (ip.Is4() && ip.As4()[0] == 0) ||
		nat64.Contains(ip) || nat64Local.Contains(ip))
}

// CheckURL validates a webhook URL: http or https, a host, no user info,
// and every address the host resolves to allowed. It returns an error
// wrapping [ErrForbiddenTarget] for a refused target.
func (g Guard) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("webhook url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("webhook url: scheme %q, want http or https", u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return errors.New("webhook url: no host")
	}
	if u.User != nil {
		return errors.New("webhook url: user info is not allowed; use authentication.credentials")
	}
	if g.AllowPrivate {
		return nil
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if !g.Allowed(ip) {
			return fmt.Errorf("%w: %s is an internal address", ErrForbiddenTarget, ip)
		}
		return nil
	}
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("webhook url: resolve %s: %w", host, err)
	}
	for _, ip := range addrs {
		if !g.Allowed(ip) {
			return fmt.Errorf("%w: %s resolves to internal address %s", ErrForbiddenTarget, host, ip)
		}
	}
	return nil
}

// Dialer returns a dialer that refuses connections to addresses the guard
// does not allow. The check runs on the resolved address of each
// connection attempt.
func (g Guard) Dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{
		Timeout: timeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %s", ErrForbiddenTarget, address)
			}
			if !g.Allowed(ap.Addr()) {
				return fmt.Errorf("%w: %s is an internal address", ErrForbiddenTarget, ap.Addr())
			}
			return nil
		},
	}
}
