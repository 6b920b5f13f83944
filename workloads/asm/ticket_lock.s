; A ticket lock built from xchg, S2's only atomic: cores are served in the order they took a ticket.
; Every core increments a shared counter `rounds` times inside the lock; core 0 prints the final
; count after a barrier: cores x rounds.
; A ticket lock needs fetch-and-add (take the next number) and S2 has only swap, which cannot build
; a wait-free fetch-and-add for more than two cores. So the ticket dispenser `next` is itself
; guarded by xchg: swapping in -1 (no real ticket is negative) both takes the dispenser and reads
; the ticket; the holder then stores ticket + 1, which hands the dispenser back. A core that swaps
; out -1 lost the race and retries (after reading until the dispenser looks free, as in
; ttas_lock.s). Taking a ticket is short; the wait itself is a plain-load spin on `serving`, each
; core for its own number, and release is one store: serving = ticket + 1.
; expect (4 cores): 40
.symbol
  rounds 10
.code 0
  mov r7 #rounds
  mov r2 #next
:again
:take
  ld r1 next            ; read until the dispenser is not held (-1)
  lt r4 r1 #0
  jt r4 take
  mov r1 #-1
  xchg r1 r2            ; r1 = ticket, next = -1: the dispenser is ours
  lt r4 r1 #0
  jt r4 take            ; another core holds it: try again
  add r5 r1 #1
  st r5 next            ; give the dispenser back with the next number
:wait
  ld r4 serving         ; spin until our number is served
  ne r4 r4 r1
  jt r4 wait
  ld r3 counter         ; critical section: read, modify, write
  add r3 r3 #1
  st r3 counter
  st r5 serving         ; release: serve the next ticket
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
:next
  0
.data 64                ; each shared word in its own line (lines up to 64 words)
:serving
  0
.data 128
:counter
  0
.end
; work: per core (every core does `rounds` locked increments: n cores do n times the work)
