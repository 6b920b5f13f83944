// The shared data memory: the bus's slave. It performs a granted access at the grant cycle, with the
// memory's half of the shared semantics (s2::memory_word, s2::memory_string), and returns what it
// read: words in, words out.
#pragma once

#include "interfaces.h"

namespace s2sc {

class s2_memory : public sc_core::sc_module, public s2_mem_if {
 public:
  s2_memory(sc_core::sc_module_name name, uint32_t words) : sc_module(name), m_words(words, 0) {}

  int32_t access(s2::Bus kind, uint32_t address, int32_t wdata) override {
    return s2::memory_word(kind, address, wdata, m_words.data());
  }
  std::string read_string(uint32_t address) override {
    std::string text;
    s2::memory_string(address, m_words.data(), static_cast<uint32_t>(m_words.size()), text);
    return text;
  }
  std::vector<int32_t>& direct() override { return m_words; }

 private:
  std::vector<int32_t> m_words;
};

}  // namespace s2sc
