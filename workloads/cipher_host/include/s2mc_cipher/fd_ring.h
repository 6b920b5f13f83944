// fd_ring.h -- a range of one regular file through an accelerator into another, with reading,
// processing and writing overlapped: what the GPU backends' file path runs.
//
// The caller owns `slots` host buffers (pinned, for DMA) allocated once per file. A reader thread
// preads the range slot by slot straight into free buffers; the calling thread hands each filled
// buffer to `submit` (which may work asynchronously, in place: H2D, kernel, D2H back into the same
// buffer); a writer thread waits for each buffer in file order (`wait`), pwrites it and frees it.
// So every slot can be in flight at once, the data crosses host memory once each way (the kernel's
// read into the buffer, its write out of it), and nothing is allocated per piece.
#pragma once

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace s2mc {
namespace cipher_host {

// How a ring run ended: stage "" (done), "read"/"write" with errno, "eof" (the input ended before
// the range did), or "device" with the accelerator's message.
struct RingResult {
  int err = 0;
  std::string stage;
  std::string message;
  uint64_t bytes = 0;  // bytes written
  // When the range's first piece had been read, in CLOCK_MONOTONIC seconds (the clock of Python's
  // time.CLOCK_MONOTONIC, for `s2mc encrypt --timings`); 0 when none was.
  double first_read = 0;
};

struct RingOps {
  // Transform buffer `slot` (len bytes of the file at byte `offset`) in place; may return before
  // the work is done. Called on the calling thread, in file order.
  std::function<void(size_t slot, uint64_t offset, size_t len)> submit;
  // Block until the work submit started on `slot` is done. Called on the writer thread.
  std::function<void(size_t slot)> wait;
};

namespace detail {

template <class T>
class Chan {  // an unbounded blocking queue that can be closed
 public:
  void put(T v) {
    {
      std::lock_guard<std::mutex> g(m_);
      q_.push_back(std::move(v));
    }
    c_.notify_one();
  }
  bool get(T* v) {  // false once closed and empty
    std::unique_lock<std::mutex> g(m_);
    c_.wait(g, [&] { return !q_.empty() || closed_; });
    if (q_.empty()) return false;
    *v = std::move(q_.front());
    q_.pop_front();
    return true;
  }
  void close() {
    {
      std::lock_guard<std::mutex> g(m_);
      closed_ = true;
    }
    c_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable c_;
  std::deque<T> q_;
  bool closed_ = false;
};

struct Piece {
  size_t slot = 0;
  uint64_t offset = 0;
  size_t len = 0;
};

}  // namespace detail

// [offset, offset + length) of in_fd -> out_fd at the same offsets, through bufs (each slot_bytes
// long, slot_bytes a multiple of 16 so every piece but the last is whole blocks).
inline RingResult ring_run(int in_fd, int out_fd, uint64_t offset, uint64_t length,
                           const std::vector<uint8_t*>& bufs, size_t slot_bytes, const RingOps& ops) {
  RingResult res;
  if (length == 0 || bufs.empty()) return res;
  std::mutex em;
  std::atomic<bool> stop{false};
  auto fail = [&](const char* stage, int err, const std::string& msg) {
    std::lock_guard<std::mutex> g(em);
    if (res.stage.empty()) {
      res.stage = stage;
      res.err = err;
      res.message = msg;
    }
    stop = true;
  };
  detail::Chan<size_t> free_slots;
  detail::Chan<detail::Piece> filled, done;
  for (size_t i = 0; i < bufs.size(); ++i) free_slots.put(i);

  std::thread reader([&] {
    const uint64_t end = offset + length;
    for (uint64_t off = offset; off < end && !stop;) {
      size_t slot = 0;
      if (!free_slots.get(&slot) || stop) break;
      const size_t len = size_t(std::min<uint64_t>(slot_bytes, end - off));
      size_t got = 0;
      while (got < len) {
        const ssize_t r = ::pread(in_fd, bufs[slot] + got, len - got, off_t(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
          fail("read", errno, "");
          break;
        }
        if (r == 0) {
          fail("eof", 0, "");
          break;
        }
        got += size_t(r);
      }
      if (got < len) break;
      if (off == offset) {  // only this thread writes first_read, read after the join
        timespec ts{};
        clock_gettime(CLOCK_MONOTONIC, &ts);
        res.first_read = double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
      }
      filled.put({slot, off, len});
      off += len;
    }
    filled.close();
  });
  std::thread writer([&] {
    detail::Piece p;
    while (done.get(&p)) {
      try {
        ops.wait(p.slot);  // always: a buffer is not reused while a copy may still write it
      } catch (const std::exception& e) {
        fail("device", 0, e.what());
      }
      size_t put = 0;
      while (!stop && put < p.len) {
        const ssize_t w = ::pwrite(out_fd, bufs[p.slot] + put, p.len - put, off_t(p.offset + put));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
          fail("write", w < 0 ? errno : EIO, "");
          break;
        }
        put += size_t(w);
      }
      if (put == p.len) res.bytes += p.len;  // only this thread writes bytes
      free_slots.put(p.slot);
    }
  });
  detail::Piece p;
  while (filled.get(&p)) {
    if (!stop) {
      try {
        ops.submit(p.slot, p.offset, p.len);
      } catch (const std::exception& e) {
        fail("device", 0, e.what());
      }
    }
    done.put(p);  // the writer waits for it and frees the slot either way
  }
  done.close();
  writer.join();
  free_slots.close();  // wakes a reader waiting for a slot after an error
  reader.join();
  return res;
}

// The same ring over a host buffer instead of two files (pipes, stdout, a Python buffer): each piece is
// copied into a free slot, submitted, and copied back in place once `wait` says it is done, so up
// to bufs.size() pieces are in flight. `offset` is the buffer's byte offset in the stream (the CTR
// counter); a multiple of 16, as slot_bytes is.
inline void ring_buffer(uint8_t* data, size_t n, uint64_t offset, const std::vector<uint8_t*>& bufs,
                        size_t slot_bytes, const RingOps& ops) {
  struct Out {
    size_t slot, at, len;
  };
  std::deque<Out> inflight;  // oldest first; at most one per slot
  auto retire = [&] {
    const Out o = inflight.front();
    inflight.pop_front();
    ops.wait(o.slot);
    std::copy(bufs[o.slot], bufs[o.slot] + o.len, data + o.at);
  };
  size_t next = 0;
  for (size_t at = 0; at < n; at += slot_bytes) {
    if (inflight.size() == bufs.size()) retire();
    const size_t slot = next++ % bufs.size();
    const size_t len = std::min(slot_bytes, n - at);
    std::copy(data + at, data + at + len, bufs[slot]);
    ops.submit(slot, offset + at, len);
    inflight.push_back({slot, at, len});
  }
  while (!inflight.empty()) retire();
}

}  // namespace cipher_host
}  // namespace s2mc
