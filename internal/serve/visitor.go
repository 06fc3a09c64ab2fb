package serve

// visitor.go: what a visitor key says. A server keys its fairness and
// per-visitor limits by a string: the client's address alone, or the
// address and a browser's own identity joined by VisitorSep
// ("203.0.113.7|3f9c…"). Fairness is two-level: first across addresses,
// then across the visitors of one address, so a class behind one NAT
// shares one address's part and a lone machine on the LAN still gets its
// own.

import "strings"

// VisitorSep joins an address and a browser identity in a visitor key; it
// never occurs in an IP address.
const VisitorSep = "|"

// VisitorKey is the key of the browser id at addr ("" id: the address alone).
func VisitorKey(addr, id string) string {
	if id == "" {
		return addr
	}
	return addr + VisitorSep + id
}

// AddressOf is the address part of a visitor key.
func AddressOf(visitor string) string {
	if i := strings.Index(visitor, VisitorSep); i >= 0 {
		return visitor[:i]
	}
	return visitor
}
