#include "core.h"

namespace s2sc {

using namespace sc_core;
using s2::Next;
using s2::TraceKind;

s2_core::s2_core(sc_module_name name, int id, run_control& ctl)
    : sc_module(name), request("request"), grant("grant"), stall("stall"), waiting("waiting"), halted("halted"),
      pc(ctl.entry), m_id(id), m_ctl(ctl) {
  SC_THREAD(main);
}

// Exact to the tick: with --vcd a core may stand at the middle of a cycle (after a grant pulse).
void s2_core::sync_to(uint64_t t) {
  const uint64_t now = sc_time_stamp().value(), target = t * TICKS_PER_CYCLE;
  if (target > now) wait(sc_time::from_value(target - now));
}

void s2_core::main() {
  run();
  // With store buffers a core stopped by a fault or the cycle limit may still have entries that
  // the bus drains in its lane: only a halt (with an empty buffer) ends its log.
  if (m_ctl.trace && (is_halted || !m_ctl.cfg.buffered())) m_ctl.trace->close(m_id);
}

// Step 1 with store buffers (docs/timing-model.md, "Store buffers"), at t: DONE when the buffer
// took care of the instruction (held back, buffered, forwarded, a fence), STOP on a fault,
// AS_BEFORE when it issues as without a buffer. The faults it meets log nothing, as in the fast engine.
s2_core::buffered_step s2_core::issue_buffered(const s2::Uop& u, uint64_t& t, const s2::StackGuard& guard) {
  s2::StoreBuffer& b = m_ctl.buffers[static_cast<size_t>(m_id)];
  const bool draining = u.op == s2::OP_FENCE || u.op == s2::OP_XCHG || u.op == s2::OP_SYNC || u.op == s2::OP_TRAP;
  const bool store = u.bus == s2::BUS_WRITE;
  // What touches only the registers runs ahead of simulated time (not while tracing: the log goes
  // in cycle order); the rest needs the buffer's state at t, and the bus drains it as time passes.
  if (draining || u.bus != s2::BUS_NONE || u.op == s2::OP_UNDEFINED || m_ctl.trace) {
    sync_to(t);
    drains->ready(m_id, t);
  }
  if (u.op == s2::OP_UNDEFINED) {
    m_ctl.record_fault(s2::FaultKind::UNDEFINED_OPCODE, m_id, pc, t, 0);
    return buffered_step::STOP;
  }
  if (b.holds(draining, store, t)) {  // until an entry leaves: then it tries again
    if (m_ctl.vcd) stall.write(true);
    t = drains->drained(m_id);
    return buffered_step::DONE;
  }
  const uint64_t held = b.held_cycles(t);
  (store ? stats.store_buffer_full_stalls : stats.fence_stall_cycles) += held;
  if (held && m_ctl.vcd) stall.write(false);
  const uint32_t here = pc;
  if (store || u.bus == s2::BUS_READ) {
    int32_t* r = regs;
    const uint32_t a = s2::mem_address(r, u);
    if (a >= m_ctl.cfg.mem_words || guard.violates(a)) {
      m_ctl.record_fault(a >= m_ctl.cfg.mem_words ? s2::FaultKind::ADDRESS_OUT_OF_RANGE : s2::FaultKind::STACK_OVERFLOW,
                         m_id, here, t, a);
      return buffered_step::STOP;
    }
    if (store) {
      const int32_t v = s2::store_value(r, u, a);
      if (u.op == s2::OP_PUSH) r[u.d1] = static_cast<int32_t>(a);
      b.push(a, v, here, t);
      m_ctl.log(t, here, m_id, s2::TraceKind::BUFFER, b.size(), a, line_data->direct()[a], v);
      if (m_ctl.show_buffer) m_ctl.show_buffer(m_id);
      drains->buffered(m_id, t);
      pc += 1;
    } else {
      int32_t v;
      if (!b.forward(a, v)) return buffered_step::AS_BEFORE;  // memory, cache or bus
      s2::writeback(r, pc, u, a, v);
      m_ctl.log(t, here, m_id, s2::TraceKind::FORWARD, 0, a, v, v);
      ++stats.store_forwards;
      ++stats.mem_reads;
    }
  } else if (u.op == s2::OP_FENCE) {
    m_ctl.log(t, here, m_id, s2::TraceKind::ISSUE);
    pc += 1;
  } else {
    return buffered_step::AS_BEFORE;
  }
  ++stats.instructions;
  ++t;
  return buffered_step::DONE;
}

// The request half of u's access to address a, issued at t (pc still at u).
mem_request s2_core::request_for(const s2::Uop& u, uint32_t a, uint64_t t) const {
  mem_request rq;
  rq.core = m_id;
  rq.request_cycle = t;
  rq.pc = pc;
  rq.address = a;
  rq.kind = u.bus;
  rq.wdata = s2::store_value(regs, u, a);
  return rq;
}

// Over a ring or a mesh: the access of u to address a, issued at t, through the core's tile; t
// becomes the cycle of the next instruction. False when the run stopped first (pc stays).
bool s2_core::access_tile(const s2::Uop& u, uint32_t a, uint64_t& t) {
  mem_request rq = request_for(u, a, t);
  const uint64_t g = network->access(rq);   // blocks until the access took effect at g (now)
  if (g == NEVER) return false;
  s2::writeback(regs, pc, u, a, rq.rdata);
  if (u.bus == s2::BUS_STRING) m_ctl.output.push_back({t, m_id, std::move(rq.text)});
  const s2::AccessCount counts = s2::access_count(u.bus);
  stats.mem_reads += counts.reads;
  stats.mem_writes += counts.writes;
  stats.mem_accesses += rq.miss;
  t = g + rq.span;
  return true;
}

void s2_core::run() {
  const auto& prog = m_ctl.prog;
  const uint32_t n = static_cast<uint32_t>(prog.size());
  const uint32_t mem_words = m_ctl.cfg.mem_words;
  const bool cached = m_ctl.cfg.cache.on();
  const int ncores = m_ctl.cfg.cores;
  const bool vcd = m_ctl.vcd;
  const bool buffered = m_ctl.cfg.buffered();
  const bool networked = m_ctl.networked;
  const s2::StackGuard guard(m_ctl.stacks, m_id);
  int32_t* r = regs;
  uint64_t t = 0;  // the cycle at which the next instruction issues (never behind simulated time)
  for (;;) {
    if (t >= m_ctl.limit) return;  // stopped by the cycle limit or by a fault elsewhere
    if (pc >= n) return m_ctl.record_fault(s2::FaultKind::PC_OUT_OF_RANGE, m_id, pc, t, 0);
    const s2::Uop& u = prog[pc];
    const uint32_t here = pc;
    if (buffered) {
      const buffered_step step = issue_buffered(u, t, guard);
      if (step == buffered_step::STOP) return;
      if (step == buffered_step::DONE) continue;
    }
    const Next nx = s2::execute(r, pc, u, m_id, ncores);
    switch (nx) {
      case Next::CONTINUE:
        m_ctl.log(t, here, m_id, TraceKind::ISSUE);
        ++t;
        ++stats.instructions;
        continue;
      case Next::PRINT:
        m_ctl.log(t, here, m_id, TraceKind::ISSUE);
        m_ctl.output.push_back({t, m_id, s2::trap_text(r, u)});
        ++t;
        ++stats.instructions;
        continue;
      case Next::MEMORY: {
        const uint32_t a = s2::mem_address(r, u);
        if (a >= mem_words || guard.violates(a)) {
          // The faulting request is logged too, at its issue cycle, as the fast engine logs it
          // (without store buffers; with them it logs no fault, as the reference model).
          if (!buffered) m_ctl.log(t, here, m_id, TraceKind::REQUEST, 0, a);
          return m_ctl.record_fault(a >= mem_words ? s2::FaultKind::ADDRESS_OUT_OF_RANGE : s2::FaultKind::STACK_OVERFLOW,
                                    m_id, here, t, a);
        }
        ++stats.instructions;
        if (networked) {
          if (!access_tile(u, a, t)) return;
          continue;
        }
        if (cached && u.bus != s2::BUS_STRING) {
          // The lookup at t: after every grant before t, and before the bus decides the grant of t
          // (the bus settles one delta cycle first, see bus.h).
          sync_to(t);
          if (m_ctl.caches.lookup(m_id, u.bus, a)) {
            auto& mem = line_data->direct();
            const int32_t before = mem[a];
            s2::writeback(r, pc, u, a, line_data->access(u.bus, a, s2::store_value(r, u, a)));
            const s2::AccessCount counts = s2::access_count(u.bus);
            stats.mem_reads += counts.reads;
            stats.mem_writes += counts.writes;
            m_ctl.log(t, here, m_id, TraceKind::HIT, 0, a, before, mem[a]);
            m_ctl.log_changes(t, here, m_id);
            const uint64_t H = m_ctl.cfg.cache.hit_latency;
            t += H;
            if (vcd && H > 1) {  // the hit's cycles beyond its first are stalls
              wait(cycles(1));
              stall.write(true);
              wait(cycles(H - 1));
              stall.write(false);
            }
            continue;
          }
        }
        m_ctl.log(t, here, m_id, TraceKind::REQUEST, 0, a);
        if (vcd) sync_to(t);  // so that the request signal rises at t
        mem_request rq = request_for(u, a, t);
        if (vcd) { request.write(true); stall.write(true); }
        const uint64_t g = bus->transfer(rq);  // blocks until the grant cycle g (now)
        if (g == NEVER) return;                // the run stopped first; pc stays at this instruction
        s2::writeback(r, pc, u, a, rq.rdata);  // the core writes its own registers
        if (u.bus == s2::BUS_STRING) m_ctl.output.push_back({t, m_id, std::move(rq.text)});
        const s2::AccessCount counts = s2::access_count(u.bus);
        stats.mem_reads += counts.reads;
        stats.mem_writes += counts.writes;
        stats.mem_accesses += 1;
        stats.bus_wait_cycles += g - t;
        stats.bus_busy_cycles += rq.span;
        const uint64_t D = rq.span;  // L, or with caches the transaction's bus time
        t = g + D;
        if (vcd) {
          stall.write(false);
          grant.write(true);
          wait(half_cycle());
          request.write(false);
          grant.write(false);
          if (D > 1) {
            wait(half_cycle());
            stall.write(true);
            wait(cycles(D - 1));
            stall.write(false);
          }
        }
        continue;
      }
      case Next::SYNC: {
        m_ctl.log(t, here, m_id, TraceKind::SYNC);
        ++stats.instructions;
        sync_to(t);
        if (vcd) waiting.write(true);
        const uint64_t c = barrier->arrive(m_id);
        stats.sync_wait_cycles += c - t;
        m_ctl.log(c + 1, pc, m_id, TraceKind::RESUME, c - t);
        t = c + 1;
        if (vcd) {
          wait(cycles(1));
          waiting.write(false);
        }
        continue;
      }
      case Next::HALT:
        m_ctl.log(t, here, m_id, TraceKind::HALT);
        ++stats.instructions;
        stats.finish_cycle = t + 1;
        sync_to(t);
        is_halted = true;
        ++m_ctl.halted;
        m_ctl.last_finish = std::max(m_ctl.last_finish, t + 1);
        barrier->halt(m_id);
        if (networked) network->halted(m_id);
        if (vcd) {
          wait(cycles(1));
          halted.write(true);
        }
        return;
      case Next::DIV_ZERO:
        m_ctl.log(t, here, m_id, TraceKind::ISSUE);  // the faulting cycle, logged as the fast engine does
        return m_ctl.record_fault(s2::FaultKind::DIVISION_BY_ZERO, m_id, here, t, 0);
      default:
        m_ctl.log(t, here, m_id, TraceKind::ISSUE);
        return m_ctl.record_fault(s2::FaultKind::UNDEFINED_OPCODE, m_id, here, t, 0);
    }
  }
}

}  // namespace s2sc
