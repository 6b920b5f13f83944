; A test-and-test-and-set spin lock: spin_lock.s (test-and-set) with a read before the xchg.
; Every core increments a shared counter `rounds` times inside the lock; core 0 prints the final
; count after a barrier: cores x rounds. A waiting core spins on a plain load of the lock word and
; tries the xchg only when it reads 0: with caches the load hits in the core's own shared copy, so
; waiting makes no bus traffic, where spin_lock.s writes the line (needs it in M) on every try.
; expect (4 cores): 40
.symbol
  rounds 10
.code 0
  mov r7 #rounds
  mov r2 #lock
:again
:test
  ld r1 lock            ; test: spin on a read while the lock is taken
  jt r1 test
  mov r1 #1
  xchg r1 r2            ; test-and-set: r1 = old value, lock = 1 (one atomic bus access)
  jt r1 test            ; somebody was quicker: back to reading
  ld r3 counter         ; critical section: read, modify, write
  add r3 r3 #1
  st r3 counter
  st r0 lock            ; release
  sub r7 r7 #1
  jt r7 again
  sync
  cid r1
  jt r1 finish
  ld r3 counter
  trap r3 #1
  mov r6 #10
  trap r6 #2
:finish
  trap r0 #0
.data 0
:lock
  0
.data 64                ; the counter in another line than the lock (lines up to 64 words)
:counter
  0
.end
; work: per core (every core does `rounds` locked increments: n cores do n times the work)
