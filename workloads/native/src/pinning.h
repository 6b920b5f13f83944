// Thread placement shared by the native microbenchmarks (coherence.cpp, litmus.cpp): the CPUs this
// process may run on, a scoped pin of the calling thread to one of them, and an OpenMP region whose
// thread i runs pinned to a given CPU. Pinning makes "two threads" mean two cores, not one core
// time-slicing, and the previous mask comes back afterwards (OpenMP keeps its threads, and the AES
// benchmarks in the same process must not inherit the pinning).
#pragma once

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace s2mc_native {

// The CPUs this process may run on, in order.
inline std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// Pins the calling thread to one CPU while alive; restores its previous mask after.
class Pin {
 public:
  explicit Pin(int cpu) {
    ok_ = pthread_getaffinity_np(pthread_self(), sizeof old_, &old_) == 0;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
  }
  ~Pin() {
    if (ok_) pthread_setaffinity_np(pthread_self(), sizeof old_, &old_);
  }
  Pin(const Pin&) = delete;
  Pin& operator=(const Pin&) = delete;

 private:
  cpu_set_t old_;
  bool ok_ = false;
};

// Runs body(thread id) on `threads` OpenMP threads, each pinned to cpus[id] (the list may name a CPU
// more than once); throws when OpenMP gives fewer threads than asked (OMP_THREAD_LIMIT, a nested region).
template <typename Body>
void parallel_pinned(int threads, const std::vector<int>& cpus, Body&& body) {
  int got = 0;
#pragma omp parallel num_threads(threads)
  {
#pragma omp single
    got = omp_get_num_threads();
    if (got == threads) {
      Pin pin(cpus[size_t(omp_get_thread_num())]);
      body(omp_get_thread_num());
    }
  }
  if (got != threads)
    throw std::runtime_error("OpenMP gave " + std::to_string(got) + " thread(s), not " + std::to_string(threads) +
                             " (OMP_THREAD_LIMIT or OMP_DYNAMIC in the environment?)");
}

}  // namespace s2mc_native
