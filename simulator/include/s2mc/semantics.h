// What every S2 instruction does, defined once and shared by both engines (fast and SystemC).
//
// The engines differ only in *when* things happen (docs/timing-model.md); the effect of an instruction on
// registers, PC and memory is decided here. Instruction words are predecoded once per program into
// Uops so the inner loops never touch bit fields.
#pragma once

#include <cstdint>
#include <string>

#include "s2_isa_table.h"  // generated from isa/instructions.toml

// The engines' inner loops must have execute() and mem_access() inlined: with several builds of a
// loop in one file (the fast engine compiles one per combination of trace, stack check, breakpoints
// and caches) the compiler's growth limits would otherwise call them (30 % slower measured).
#define S2_INLINE __attribute__((always_inline)) inline

namespace s2 {

constexpr int NUM_REGS = 32;
constexpr int SINK_REG = 32;  // writes to r0 land here, so r0 always reads 0

struct Uop {
  Op op;
  uint8_t r1, r2, r3;  // register fields as encoded (sources)
  uint8_t d1, d2;      // destination indices for r1 / r2 (r0 remapped to SINK_REG)
  Bus bus;             // bus-access class (a trap's is its number's); BUS_NONE: no bus access
  int32_t imm;         // ads (unsigned 22), mov #m (signed 22), disp / #n (signed 17)
  uint32_t word;       // the original instruction word, for fault messages
};

inline int32_t sign_extend(uint32_t v, int bits) {
  const uint32_t m = 1u << (bits - 1);
  v &= (1u << bits) - 1;
  return static_cast<int32_t>((v ^ m) - m);
}

inline Uop predecode(uint32_t w) {
  Uop u{};
  u.word = w;
  const uint32_t op = w >> 27;
  u.r1 = (w >> 22) & 31;
  u.r2 = (w >> 17) & 31;
  u.r3 = (w >> 12) & 31;
  u.d1 = u.r1 ? u.r1 : SINK_REG;
  u.d2 = u.r2 ? u.r2 : SINK_REG;
  if (op == static_cast<uint32_t>(X_OPCODE)) {
    const uint32_t xop = w & 0xFFF;
    u.op = xop < 64 ? X_OPS[xop] : OP_UNDEFINED;
    u.imm = 0;
  } else {
    u.op = PRIMARY_OPS[op];
    if (OP_FORMAT[u.op] == 'L')
      u.imm = u.op == OP_MOV_IMM ? sign_extend(w, 22) : static_cast<int32_t>(w & 0x3FFFFF);
    else
      u.imm = sign_extend(w, 17);
  }
  u.bus = bus_class(u.op, u.r2);
  return u;
}

// 32-bit ALU with the ISA's corner cases: wraparound, truncating division, low 5 bits of shifts,
// arithmetic shr. Division by zero is reported by the caller before calling.
S2_INLINE int32_t alu(int k, int32_t a, int32_t b) {
  const uint32_t ua = static_cast<uint32_t>(a), ub = static_cast<uint32_t>(b);
  switch (k) {
    case 0: return static_cast<int32_t>(ua + ub);
    case 1: return static_cast<int32_t>(ua - ub);
    case 2: return static_cast<int32_t>(ua * ub);
    case 3: return (a == INT32_MIN && b == -1) ? INT32_MIN : a / b;
    case 4: return a & b;
    case 5: return a | b;
    case 6: return a ^ b;
    case 7: return a == b;
    case 8: return a != b;
    case 9: return a < b;
    case 10: return a <= b;
    case 11: return a > b;
    case 12: return a >= b;
    case 13: return static_cast<int32_t>(ua << (ub & 31));
    case 14: return a >> (ub & 31);
    default: return (a == INT32_MIN && b == -1) ? 0 : a % b;
  }
}

// What a core must do after issuing an instruction.
enum class Next : uint8_t { CONTINUE, MEMORY, SYNC, HALT, PRINT, DIV_ZERO, UNDEFINED };

// Executes one instruction that does not touch the bus (updates registers and pc). For a memory
// instruction (bus class other than BUS_NONE) it changes nothing and returns MEMORY: the engine
// requests the bus and later calls mem_access. For print traps it returns PRINT and the engine
// calls trap_text.
S2_INLINE Next execute(int32_t* r, uint32_t& pc, const Uop& u, int core_id, int ncores) {
  const uint32_t next = pc + 1;
  // One flat switch so the compiler emits a single jump table: this is the simulators' hot path.
#define S2_ALU(NAME, K)                                                                    \
  case OP_##NAME##_IMM: r[u.d1] = alu(K, r[u.r2], u.imm); pc = next; return Next::CONTINUE; \
  case OP_##NAME##_REG: r[u.d1] = alu(K, r[u.r2], r[u.r3]); pc = next; return Next::CONTINUE;
  switch (u.op) {
    S2_ALU(ADD, 0) S2_ALU(SUB, 1) S2_ALU(MUL, 2) S2_ALU(AND, 4) S2_ALU(OR, 5) S2_ALU(XOR, 6)
    S2_ALU(EQ, 7) S2_ALU(NE, 8) S2_ALU(LT, 9) S2_ALU(LE, 10) S2_ALU(GT, 11) S2_ALU(GE, 12)
    S2_ALU(SHL, 13) S2_ALU(SHR, 14)
#undef S2_ALU
    case OP_DIV_IMM: case OP_MOD_IMM: case OP_DIV_REG: case OP_MOD_REG: {
      const int32_t b = (u.op == OP_DIV_IMM || u.op == OP_MOD_IMM) ? u.imm : r[u.r3];
      if (b == 0) return Next::DIV_ZERO;
      r[u.d1] = alu(u.op == OP_DIV_IMM || u.op == OP_DIV_REG ? 3 : 15, r[u.r2], b);
      pc = next;
      return Next::CONTINUE;
    }
    case OP_NOP: pc = next; return Next::CONTINUE;
    case OP_MOV_IMM: r[u.d1] = u.imm; pc = next; return Next::CONTINUE;
    case OP_MOV_REG: r[u.d1] = r[u.r2]; pc = next; return Next::CONTINUE;
    case OP_NOT: r[u.d1] = r[u.r2] == 0 ? -1 : 0; pc = next; return Next::CONTINUE;
    case OP_JMP: pc = static_cast<uint32_t>(u.imm); return Next::CONTINUE;
    case OP_JAL: r[u.d1] = static_cast<int32_t>(next); pc = static_cast<uint32_t>(u.imm); return Next::CONTINUE;
    case OP_JT: pc = r[u.r1] != 0 ? static_cast<uint32_t>(u.imm) : next; return Next::CONTINUE;
    case OP_JF: pc = r[u.r1] == 0 ? static_cast<uint32_t>(u.imm) : next; return Next::CONTINUE;
    case OP_RET: pc = static_cast<uint32_t>(r[u.r1]); return Next::CONTINUE;
    case OP_CID: r[u.d1] = core_id; pc = next; return Next::CONTINUE;
    case OP_NCORE: r[u.d1] = ncores; pc = next; return Next::CONTINUE;
    case OP_SYNC: pc = next; return Next::SYNC;
    // Under sc there is no store buffer, so a fence is a one-cycle no-op; an engine with store
    // buffers (consistency tso, pso) intercepts OP_FENCE before it gets here.
    case OP_FENCE: pc = next; return Next::CONTINUE;
    case OP_TRAP:
      if (u.r2 == TRAP_HALT) return Next::HALT;
      if (u.bus != BUS_NONE) return Next::MEMORY;
      pc = next;
      return (u.r2 == TRAP_PRINT_INT || u.r2 == TRAP_PRINT_CHAR) ? Next::PRINT : Next::CONTINUE;  // others: no-op
    case OP_UNDEFINED: return Next::UNDEFINED;
    default: return Next::MEMORY;  // ld, st, push, pop, xchg
  }
}

// The data address a memory instruction uses, from the registers at issue (they cannot change
// while the core waits for the bus).
S2_INLINE uint32_t mem_address(const int32_t* r, const Uop& u) {
  switch (u.op) {
    case OP_LD_ABS: case OP_ST_ABS: return static_cast<uint32_t>(u.imm);
    case OP_LD_DISP: case OP_ST_DISP: return static_cast<uint32_t>(u.imm + r[u.r2]);
    case OP_LD_INDEX: case OP_ST_INDEX: return static_cast<uint32_t>(r[u.r2] + r[u.r3]);
    case OP_PUSH: return static_cast<uint32_t>(r[u.r1]) + 1u;
    case OP_POP: case OP_TRAP: return static_cast<uint32_t>(r[u.r1]);
    case OP_XCHG: return static_cast<uint32_t>(r[u.r2]);
    default: return 0;
  }
}

struct AccessCount { uint8_t reads, writes; };

// A granted memory instruction comes in two halves, so that the memory can be a separate part that
// only sees words (the SystemC engine's bus slave):
//  - the master sends the address and store_value(); the memory performs memory_word() (or
//    memory_string() for BUS_STRING) and returns the word it read;
//  - the master then applies writeback() to its own registers and pc.
// mem_access() puts the halves together for an engine that owns both (the fast engine).

// The word a write or swap stores, from the registers at issue (they cannot change while the core
// waits for the bus). push reads R[r2] after R[r1] = R[r1] + 1, so `push r r` stores the new pointer.
S2_INLINE int32_t store_value(const int32_t* r, const Uop& u, uint32_t addr) {
  switch (u.op) {
    case OP_ST_ABS: case OP_ST_DISP: case OP_ST_INDEX: case OP_XCHG: return r[u.r1];
    case OP_PUSH: return u.r2 == u.r1 && u.r1 != 0 ? static_cast<int32_t>(addr) : r[u.r2];
    default: return 0;
  }
}

// The memory's side of one word access of class `bus` (read, write or swap): returns the word at
// addr before the access and stores `wdata` for a write or a swap.
S2_INLINE int32_t memory_word(Bus bus, uint32_t addr, int32_t wdata, int32_t* mem) {
  const int32_t old = mem[addr];
  if (bus == BUS_WRITE || bus == BUS_SWAP) mem[addr] = wdata;
  return old;
}

// The memory's side of a BUS_STRING access (trap #3): the 0-terminated string at addr, one
// character per word (stops at the end of memory).
inline void memory_string(uint32_t addr, const int32_t* mem, uint32_t mem_words, std::string& text) {
  for (uint32_t a = addr; a < mem_words && mem[a] != 0; ++a) text.push_back(static_cast<char>(mem[a] & 0xFF));
}

// Words read and written by one access of class `bus` (xchg is one access, one read and one write).
S2_INLINE AccessCount access_count(Bus bus) {
  return {static_cast<uint8_t>(bus != BUS_WRITE), static_cast<uint8_t>(bus == BUS_WRITE || bus == BUS_SWAP)};
}

// The master's side after the grant: `rdata` is the word memory_word() returned.
S2_INLINE void writeback(int32_t* r, uint32_t& pc, const Uop& u, uint32_t addr, int32_t rdata) {
  pc += 1;
  switch (u.op) {
    case OP_LD_ABS: case OP_LD_DISP: case OP_LD_INDEX: case OP_XCHG: r[u.d1] = rdata; return;
    case OP_PUSH: r[u.d1] = static_cast<int32_t>(addr); return;
    case OP_POP: r[u.d2] = rdata; r[u.d1] = static_cast<int32_t>(addr - 1u); return;
    default: return;  // stores and trap #3 change no register
  }
}

// Performs a granted memory instruction at its grant cycle and advances pc. `addr` was checked
// against the memory size at issue. A BUS_STRING access (trap #3) appends the string it reads to `text`.
S2_INLINE AccessCount mem_access(int32_t* r, uint32_t& pc, const Uop& u, uint32_t addr, int32_t* mem,
                              uint32_t mem_words, std::string* text) {
  if (u.bus == BUS_STRING) {
    memory_string(addr, mem, mem_words, *text);
    pc += 1;
  } else {
    writeback(r, pc, u, addr, memory_word(u.bus, addr, store_value(r, u, addr), mem));
  }
  return access_count(u.bus);
}

inline std::string trap_text(const int32_t* r, const Uop& u) {
  if (u.r2 == TRAP_PRINT_INT) return std::to_string(r[u.r1]);
  return std::string(1, static_cast<char>(r[u.r1] & 0xFF));
}

}  // namespace s2
