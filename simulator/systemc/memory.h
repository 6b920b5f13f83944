// The shared data memory: the bus's slave. It performs a granted access with the shared
// instruction semantics (s2::mem_access), at the grant cycle.
#pragma once

#include "interfaces.h"

namespace s2sc {

class s2_memory : public sc_core::sc_module, public s2_mem_if {
 public:
  s2_memory(sc_core::sc_module_name name, uint32_t words) : sc_module(name), m_words(words, 0) {}

  s2::AccessCount access(mem_request& rq) override {
    return s2::mem_access(rq.regs, *rq.pc, *rq.uop, rq.address, m_words.data(),
                          static_cast<uint32_t>(m_words.size()), rq.text);
  }
  std::vector<int32_t>& direct() override { return m_words; }

 private:
  std::vector<int32_t> m_words;
};

}  // namespace s2sc
