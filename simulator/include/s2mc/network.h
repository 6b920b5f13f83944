// The on-chip network of the directory machine (docs/timing-model.md, "Directory coherence over a
// network"): a ring or a 2D mesh of routers, one per tile, with dimension-ordered routes, output
// ports that each grant the oldest ready packet, and flits. It knows nothing of the protocol: a
// packet carries an opaque payload number (the protocol's message), so another protocol reuses it
// unchanged, and so can the SystemC engine (as store_buffer.h is shared by both C++ engines).
//
//   Network net(Topology(Topology::MESH, 16), router_latency, link_latency, flit_words, max_words);
//   net.send(payload, src, dst, words, c);   // created at tile src in cycle c (c may be later)
//   net.step(c);                             // every free output port grants its oldest ready packet
//   net.delivered(c)                         // the packets whose last flit arrived at c, in tile order
//
// The reference model is simulator/network.py; this follows it rule for rule.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace s2 {

class Topology {
 public:
  enum Kind : uint8_t { RING, MESH };
  // Output ports of a router: LOCAL ejects into its tile; a ring uses CW, CCW; a mesh XP .. YM.
  enum Port : uint8_t { LOCAL, CW, CCW, XP, XM, YP, YM, PORTS };
  static const char* port_name(unsigned p) {
    static const char* const names[PORTS] = {"local", "cw", "ccw", "x+", "x-", "y+", "y-"};
    return p < PORTS ? names[p] : "?";
  }

  Topology() = default;
  Topology(Kind kind, int tiles) : kind_(kind), tiles_(tiles) {
    if (kind == MESH) {
      columns_ = 1;
      while (columns_ * columns_ < tiles) ++columns_;   // ceil(sqrt(N))
      rows_ = (tiles + columns_ - 1) / columns_;
    } else {
      columns_ = tiles;
      rows_ = 1;
    }
    routers_ = columns_ * rows_;   // mesh positions past the last tile: a router only
  }
  Kind kind() const { return kind_; }
  int tiles() const { return tiles_; }
  int routers() const { return routers_; }
  int columns() const { return columns_; }
  int rows() const { return rows_; }

  // The output port a packet at `router` takes towards tile `dst` (LOCAL when it is there).
  Port port(int router, int dst) const {
    if (router == dst) return LOCAL;
    if (kind_ == RING) {
      const int d = ((dst - router) % routers_ + routers_) % routers_;
      return d <= routers_ - d ? CW : CCW;   // the shorter way; a tie goes cw
    }
    const int x = router % columns_, tx = dst % columns_;
    if (x != tx) return tx > x ? XP : XM;   // XY: first along x, then along y
    return dst / columns_ > router / columns_ ? YP : YM;
  }
  int next_router(int router, Port p) const {
    switch (p) {
      case CW: return (router + 1) % routers_;
      case CCW: return (router - 1 + routers_) % routers_;
      case XP: return router + 1;
      case XM: return router - 1;
      case YP: return router + columns_;
      case YM: return router - columns_;
      default: return router;
    }
  }
  int hops(int src, int dst) const {
    if (kind_ == RING) {
      const int d = ((dst - src) % routers_ + routers_) % routers_;
      return std::min(d, routers_ - d);
    }
    return std::abs(src % columns_ - dst % columns_) + std::abs(src / columns_ - dst / columns_);
  }
  // Every link as (router, port), in router then port order (the order the counters list them).
  std::vector<std::pair<int, Port>> links() const {
    std::vector<std::pair<int, Port>> out;
    for (int r = 0; r < routers_; ++r) {
      if (kind_ == RING) {
        out.push_back({r, CW});
        out.push_back({r, CCW});
        continue;
      }
      const int x = r % columns_, y = r / columns_;
      if (x + 1 < columns_) out.push_back({r, XP});
      if (x > 0) out.push_back({r, XM});
      if (y + 1 < rows_) out.push_back({r, YP});
      if (y > 0) out.push_back({r, YM});
    }
    return out;
  }

 private:
  Kind kind_ = RING;
  int tiles_ = 1, routers_ = 1, columns_ = 1, rows_ = 1;
};

// One packet as the network sees it; `payload` is the protocol's.
struct Packet {
  uint32_t payload = 0;
  int src = 0, dst = 0, router = 0;
  uint32_t flits = 1;
  uint64_t seq = 0, created = 0, ready = 0, queued = 0, delivered = 0;
};

class Network {
 public:
  static constexpr uint64_t NEVER = std::numeric_limits<uint64_t>::max();
  // One output port's grant, for the event log.
  struct Grant {
    uint32_t payload;
    int router;
    Topology::Port port;
    uint32_t flits;
  };

  Network() = default;
  Network(const Topology& topo, uint32_t router_latency, uint32_t link_latency, uint32_t flit_words,
          uint32_t max_words)
      : topo_(topo), R_(router_latency), Lk_(link_latency), fw_(flit_words) {
    const size_t ports = static_cast<size_t>(topo.routers()) * Topology::PORTS;
    queue_.assign(ports, {});
    free_.assign(ports, 0);
    busy_.assign(ports, 0);
    queued_in_.assign(ports, 0);
    // a delivery is at most max flits after its grant: a ring of buckets that long suffices
    arriving_.assign(static_cast<size_t>(flits(max_words)) + 2, {});
  }

  const Topology& topology() const { return topo_; }
  uint32_t flits(uint32_t words) const { return (words + fw_ - 1) / fw_; }
  size_t in_flight() const { return in_flight_; }
  // With `grants` set, step() appends every grant it makes there (in no particular order).
  void record_grants(std::vector<Grant>* grants) { grants_ = grants; }

  // The packet enters the network at router src in cycle c (c may be later than now: a home sends
  // at the end of its occupancy); its sequence number is the order of the calls.
  void send(uint32_t payload, int src, int dst, uint32_t words, uint64_t c) {
    uint32_t id;
    if (!free_ids_.empty()) { id = free_ids_.back(); free_ids_.pop_back(); }
    else { id = static_cast<uint32_t>(pool_.size()); pool_.emplace_back(); }
    Packet& p = pool_[id];
    p = Packet{payload, src, dst, src, flits(words), seq_++, c, c + R_, 0, 0};
    enqueue(id);
    ++in_flight_;
  }

  // Every output port free at c grants its oldest ready packet (ports are independent: a packet
  // granted at c is ready again at c + Lk + R > c at the earliest, so their order does not matter).
  void step(uint64_t c) {
    for (size_t i = 0; i < active_.size();) {
      const uint32_t port = active_[i];
      std::vector<Key>& q = queue_[port];
      if (free_[port] <= c && q.front().ready <= c) {
        std::pop_heap(q.begin(), q.end(), later);
        const uint32_t id = q.back().id;
        q.pop_back();
        Packet& p = pool_[id];
        p.queued += c - p.ready;
        free_[port] = c + p.flits;
        busy_[port] += p.flits;
        if (grants_)
          grants_->push_back({p.payload, static_cast<int>(port / Topology::PORTS),
                              static_cast<Topology::Port>(port % Topology::PORTS), p.flits});
        if (port % Topology::PORTS == Topology::LOCAL) {
          p.delivered = c + p.flits;
          arriving_[p.delivered % arriving_.size()].push_back(id);
        } else {
          p.router = topo_.next_router(p.router, static_cast<Topology::Port>(port % Topology::PORTS));
          p.ready = c + Lk_ + R_;
          enqueue(id);   // a later port: i moves on past it or meets it ready only after c
        }
      }
      if (q.empty()) {
        queued_in_[port] = 0;
        active_[i] = active_.back();
        active_.pop_back();
      } else {
        ++i;
      }
    }
  }

  // The packets whose last flit arrives at c, in tile order (one a tile: its ejection port carries
  // one packet at a time). Call once for every cycle in which something may arrive, in order.
  const std::vector<Packet>& delivered(uint64_t c) {
    out_.clear();
    std::vector<uint32_t>& b = arriving_[c % arriving_.size()];
    for (uint32_t id : b) {
      out_.push_back(pool_[id]);
      free_ids_.push_back(id);
    }
    b.clear();
    std::sort(out_.begin(), out_.end(), [](const Packet& a, const Packet& b) { return a.dst < b.dst; });
    in_flight_ -= out_.size();
    return out_;
  }

  // The earliest cycle after `c` in which a port may grant or a packet arrive (NEVER: none).
  uint64_t next_event(uint64_t c) const {
    uint64_t next = NEVER;
    for (uint32_t port : active_) next = std::min(next, std::max(free_[port], queue_[port].front().ready));
    for (uint64_t d = 1; d < arriving_.size(); ++d)
      if (!arriving_[(c + d) % arriving_.size()].empty()) { next = std::min(next, c + d); break; }
    return std::max(next, c + 1);
  }

  // Every packet in the network now (a debugger's view): waiting at `router` for its port since
  // `ready`, or (delivered != 0) arriving at its tile at `delivered`; in sequence order.
  std::vector<Packet> packets() const {
    std::vector<Packet> out;
    for (uint32_t port : active_)
      for (const Key& k : queue_[port]) out.push_back(pool_[k.id]);
    for (const std::vector<uint32_t>& b : arriving_)
      for (uint32_t id : b) out.push_back(pool_[id]);
    std::sort(out.begin(), out.end(), [](const Packet& a, const Packet& b) { return a.seq < b.seq; });
    return out;
  }
  size_t bytes() const {
    size_t n = sizeof(Network) + pool_.size() * sizeof(Packet) + free_.size() * 3 * sizeof(uint64_t);
    for (const auto& q : queue_) n += q.size() * sizeof(Key);
    return n;
  }
  // The flits each output port carried so far (router * PORTS + port).
  uint64_t carried(int router, Topology::Port p) const {
    return busy_[static_cast<size_t>(router) * Topology::PORTS + p];
  }

 private:
  struct Key {
    uint64_t ready, seq;
    uint32_t id;
  };
  // A max-heap of `later` is a queue whose front has the smallest (ready, seq).
  static bool later(const Key& a, const Key& b) { return a.ready != b.ready ? a.ready > b.ready : a.seq > b.seq; }
  void enqueue(uint32_t id) {
    const Packet& p = pool_[id];
    const uint32_t port = static_cast<uint32_t>(p.router) * Topology::PORTS + topo_.port(p.router, p.dst);
    std::vector<Key>& q = queue_[port];
    if (q.empty() && !queued_in_[port]) {
      queued_in_[port] = 1;
      active_.push_back(port);
    }
    q.push_back({p.ready, p.seq, id});
    std::push_heap(q.begin(), q.end(), later);
  }

  Topology topo_;
  uint32_t R_ = 1, Lk_ = 1, fw_ = 1;
  std::vector<Packet> pool_;
  std::vector<uint32_t> free_ids_;
  std::vector<std::vector<Key>> queue_;   // per output port: the packets waiting for it
  std::vector<uint64_t> free_, busy_;     // per port: the first cycle it is free; flits carried
  std::vector<uint8_t> queued_in_;        // per port: in active_
  std::vector<uint32_t> active_;          // the ports with packets waiting
  std::vector<std::vector<uint32_t>> arriving_;   // delivery cycle mod size -> packets
  std::vector<Packet> out_;
  uint64_t seq_ = 0;
  size_t in_flight_ = 0;
  std::vector<Grant>* grants_ = nullptr;
};

}  // namespace s2
