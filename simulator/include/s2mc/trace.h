// The --trace log with bounded memory, shared by both engines.
//
// Engines log events core by core as they simulate, and a core may run far ahead of the others
// (the fast engine runs cores freely between bus events; a SystemC core runs ahead of simulated
// time). The log is ordered by (cycle, core), and events of one core at one cycle keep the order
// the core logged them in: what a stable sort of all the events by (cycle, core) gives.
//
// Why merging gives that order, with little held back: every engine logs the events of one core
// in nondecreasing cycle order (issue t, request t, grant g >= t, next issue >= g + L; sync t,
// resume c + 1 > t; push() checks it). So the stable sort is the merge by (cycle, core) of the
// per-core sequences, and no core can still log an event earlier than the last one it logged:
// every held event earlier than W = the smallest last cycle over the cores still running can be
// written out for good.
//
// Memory: a core holds its events at cycles >= W in memory up to a cap; a core that runs far ahead
// of the slowest one moves its held events to an unnamed temporary file and reads them back when
// W passes them. At most cores x (cap + read-back buffer) events and one output batch are in memory.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "machine.h"

namespace s2 {

// Sinks receive TraceEvents as they are laid out here; hosts decode these 40-byte records
// (s2mc.simulator.trace.RECORD, native byte order).
static_assert(sizeof(TraceEvent) == 40 && offsetof(TraceEvent, cycle) == 0 && offsetof(TraceEvent, pc) == 8 &&
                  offsetof(TraceEvent, core) == 12 && offsetof(TraceEvent, kind) == 14 && offsetof(TraceEvent, xact) == 15 &&
                  offsetof(TraceEvent, wait) == 16 && offsetof(TraceEvent, address) == 24 &&
                  offsetof(TraceEvent, before) == 28 && offsetof(TraceEvent, after) == 32 && offsetof(TraceEvent, span) == 36 && sizeof(TraceKind) == 1,
              "s2mc.simulator.trace.RECORD must match TraceEvent");

class TraceMerger {
 public:
  // Called with events in log order, at most BATCH at a time.
  using Sink = std::function<void(const TraceEvent*, size_t)>;
  static constexpr size_t LANE_CAP = size_t{1} << 14;  // events a core holds in memory before it spills
  static constexpr size_t BATCH = size_t{1} << 12;     // events per sink call and per read-back

  TraceMerger(int cores, Sink sink, size_t lane_cap = LANE_CAP)
      : lanes_(static_cast<size_t>(cores) + 1), sink_(std::move(sink)), cap_(lane_cap < 2 ? 2 : lane_cap) {
    out_.reserve(BATCH);
    lanes_.back().closed = true;  // the lane of others' changes (push_other) never holds the others back
  }
  ~TraceMerger() {
    for (Lane& l : lanes_)
      if (l.file) std::fclose(l.file);
  }
  TraceMerger(const TraceMerger&) = delete;
  TraceMerger& operator=(const TraceMerger&) = delete;

  void push(const TraceEvent& e) {
    Lane& l = lanes_[e.core];
    if (e.cycle < l.last)
      throw std::logic_error("trace event of core " + std::to_string(e.core) + " at cycle " + std::to_string(e.cycle) +
                             " logged after one at cycle " + std::to_string(l.last) + " (internal ordering error)");
    l.last = e.cycle;
    l.tail.push_back(e);
    if (l.tail.size() - l.pos >= cap_) make_room(l);
  }

  // With caches: a state change another core's grant at e.cycle made in the cache of core e.core.
  // That core may already have logged later events of its own, so these go to one extra lane, in
  // grant order (one grant per cycle, its changes in core order); at one (cycle, core) they come
  // after the core's own events (its lookups of the cycle happen before the grant). They hold
  // nothing back: a later grant is at or after the cycle of some core's last event.
  void push_other(const TraceEvent& e) {
    Lane& l = lanes_.back();
    if (e.cycle < l.last)
      throw std::logic_error("state change at cycle " + std::to_string(e.cycle) + " logged after one at cycle " +
                             std::to_string(l.last) + " (internal ordering error)");
    l.last = e.cycle;
    l.tail.push_back(e);
  }

  // The core logs no more events (it halted or stopped): it no longer holds the others back.
  void close(int core) { lanes_[static_cast<size_t>(core)].closed = true; }

  // The end of the run: hands every event still held to the sink.
  void finish() {
    emit_before(NEVER);
    flush();
  }

  // Events that went to a temporary file because their core ran ahead (for tests and curiosity).
  uint64_t spilled() const { return spilled_; }

 private:
  static constexpr uint64_t NEVER = std::numeric_limits<uint64_t>::max();

  // One core's held events, oldest first: back[back_pos:], then the file's [file_read, file_written),
  // then tail[pos:].
  struct Lane {
    std::vector<TraceEvent> back;
    size_t back_pos = 0;
    std::FILE* file = nullptr;
    uint64_t file_read = 0, file_written = 0;
    std::vector<TraceEvent> tail;
    size_t pos = 0;
    uint64_t last = 0;  // the cycle of the last event logged
    bool closed = false;
  };

  uint64_t frontier() const {
    uint64_t w = NEVER;
    for (const Lane& l : lanes_)
      if (!l.closed && l.last < w) w = l.last;
    return w;
  }

  void make_room(Lane& l) {
    emit_before(frontier());
    if (l.tail.size() - l.pos >= cap_ / 2) spill(l);
  }

  const TraceEvent* head(Lane& l) {
    if (l.back_pos < l.back.size()) return &l.back[l.back_pos];
    if (l.file_read < l.file_written) {
      read_back(l);
      return &l.back[0];
    }
    return l.pos < l.tail.size() ? &l.tail[l.pos] : nullptr;
  }
  static void pop(Lane& l) {
    if (l.back_pos < l.back.size()) ++l.back_pos;
    else ++l.pos;
  }

  // Hands every held event at a cycle before w to the sink, merged by (cycle, core): a lane's events
  // at one cycle come out together, since its next head keeps the smallest key.
  // Keys (cycle, core, lane): the lane of others' changes is the last, so at one (cycle, core)
  // they follow the core's own events.
  void emit_before(uint64_t w) {
    using Key = std::tuple<uint64_t, uint16_t, size_t>;
    std::priority_queue<Key, std::vector<Key>, std::greater<Key>> heap;
    for (size_t i = 0; i < lanes_.size(); ++i) {
      const TraceEvent* h = head(lanes_[i]);
      if (h && h->cycle < w) heap.push({h->cycle, h->core, i});
    }
    while (!heap.empty()) {
      const size_t i = std::get<2>(heap.top());
      heap.pop();
      Lane& l = lanes_[i];
      out_.push_back(*head(l));
      pop(l);
      if (out_.size() == BATCH) flush();
      const TraceEvent* h = head(l);
      if (h && h->cycle < w) heap.push({h->cycle, h->core, i});
    }
    for (Lane& l : lanes_) {
      if (l.pos) l.tail.erase(l.tail.begin(), l.tail.begin() + static_cast<std::ptrdiff_t>(l.pos));
      l.pos = 0;
    }
  }

  void flush() {
    if (out_.empty()) return;
    sink_(out_.data(), out_.size());
    out_.clear();
  }

  [[noreturn]] static void io_error(const char* what) {
    throw std::runtime_error(std::string("cannot ") + what + " the trace's temporary file: " + std::strerror(errno));
  }

  // Moves the lane's in-memory events to the end of its file (older events stay before them).
  void spill(Lane& l) {
    if (!l.file && !(l.file = std::tmpfile())) io_error("create");
    if (l.file_read == l.file_written) l.file_read = l.file_written = 0;  // all read back: reuse the space
    const size_t n = l.tail.size() - l.pos;
    if (fseeko(l.file, static_cast<off_t>(l.file_written * sizeof(TraceEvent)), SEEK_SET) != 0 ||
        std::fwrite(l.tail.data() + l.pos, sizeof(TraceEvent), n, l.file) != n)
      io_error("write");
    l.file_written += n;
    spilled_ += n;
    l.tail.clear();
    l.pos = 0;
  }

  void read_back(Lane& l) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(BATCH, l.file_written - l.file_read));
    l.back.resize(n);
    if (fseeko(l.file, static_cast<off_t>(l.file_read * sizeof(TraceEvent)), SEEK_SET) != 0 ||
        std::fread(l.back.data(), sizeof(TraceEvent), n, l.file) != n)
      io_error("read");
    l.file_read += n;
    l.back_pos = 0;
  }

  std::vector<Lane> lanes_;
  Sink sink_;
  size_t cap_;
  std::vector<TraceEvent> out_;
  uint64_t spilled_ = 0;
};

}  // namespace s2
