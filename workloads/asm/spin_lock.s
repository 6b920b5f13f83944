; A spin lock built on xchg: every core increments a shared counter `rounds` times inside a
; critical section. Without the lock, increments from different cores would be lost.
; Core 0 prints the final count after a barrier: cores x rounds.
; expect (4 cores): 40
.symbol
  rounds 10
.code 0
  mov r7 #rounds
:again
  mov r1 #1
:acquire
  mov r2 #lock
  xchg r1 r2            ; r1 = old lock value, lock = 1 (one atomic bus access)
  jt r1 acquire         ; somebody else holds it: spin
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
:counter
  0
.end
; work: per core (every core does `rounds` locked increments: n cores do n times the work)
