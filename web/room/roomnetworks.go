package room

// roomnetworks.go: the networks a room's students come from — each client
// address as an opaque id, per room — so a presenter sees how many students
// each network brings (a class behind one school NAT is one network; a
// stranger's machine holding many sockets stands out as another) and can
// remove one network from the class.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"

	"github.com/inferscope/inferscope/web/wire"
)

// maxNetworksShown is how many networks room_counts lists (most students first).
const maxNetworksShown = 16

// maxRemoved is how many networks one room may remove.
const maxRemoved = 64

// networkID names a client address within one room: a hash of the room
// code and the address, so the presenter can tell networks apart and name
// one in room_remove without ever seeing an address, and ids of two rooms
// cannot be matched.
func networkID(code, addr string) string {
	h := sha256.Sum256([]byte("inferscope network\x00" + code + "\x00" + addr))
	return hex.EncodeToString(h[:wire.NetworkIDBytes])
}

// roomNetwork is one network's line in the presenter's counts: its
// students (distinct browsers, following or trying it themselves).
type roomNetwork struct {
	ID       string `json:"id"`
	Students int    `json:"students"`
}

// networksLocked merges the replicas' counts: the networks with students,
// most students first (ties by id), at most maxNetworksShown.
func (r *room) networksLocked() []roomNetwork {
	n := map[string]int{}
	for _, p := range r.presence {
		for id, k := range p.Networks {
			n[id] += k
		}
	}
	out := make([]roomNetwork, 0, len(n))
	for id, k := range n {
		if k > 0 {
			out = append(out, roomNetwork{id, k})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Students != out[j].Students {
			return out[i].Students > out[j].Students
		}
		return out[i].ID < out[j].ID
	})
	return out[:min(len(out), maxNetworksShown)]
}

// removeNetwork takes one network out of the class: its followers on every
// replica leave with a plain message, and none of it may join again while
// the room lasts. It reports false when the room has removed its most.
func (r *room) removeNetwork(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.removed[id] {
		return true
	}
	if len(r.removed) >= maxRemoved {
		return false
	}
	if r.removed == nil {
		r.removed = map[string]bool{}
	}
	r.removed[id] = true
	b, _ := json.Marshal(map[string]string{"network": id})
	r.publishLocked(wire.MsgRoomRemoved, b)
	return true
}

// removedList is the room's removed networks, for a replica's sync.
func (r *room) removedListLocked() []string {
	out := make([]string, 0, len(r.removed))
	for id := range r.removed {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// removedMessage is what a removed student reads.
const removedMessage = "the presenter removed your network from this class: ask the presenter if this is a mistake"
