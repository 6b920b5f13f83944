; Line ping-pong: cores 0 and 1 hand one word back and forth `rounds` times; other cores only wait.
; Core 0 stores 1, 3, 5, ... into `flag` and waits to read the next even number; core 1 waits for
; each odd number and answers with the next even one. After a barrier core 0 prints the last value,
; 2 x rounds (0 on one core: nobody answers, so core 0 does not start).
; With caches each store needs the line in M, so the line moves from one cache to the other twice
; per round trip (docs/caches-lab.md, section 2), as on a real CPU (s2mc coherence-native).
; expect (2 cores): 20
.symbol
  rounds 10
.code 0
  cid r1
  ncore r2
  lt r2 r2 #2           ; one core: no partner
  jt r2 done
  mov r7 #0             ; r7 = the last even number this core stored or saw
  mov r8 #rounds
  shl r8 r8 #1          ; r8 = 2 x rounds, the last value
  eq r3 r1 #0
  jt r3 ping
  eq r3 r1 #1
  jt r3 pong
  jmp done              ; cores 2.. take no part
:ping                   ; core 0: store 2k-1, wait for 2k
  add r4 r7 #1
  st r4 flag
  add r7 r7 #2
:wait0
  ld r5 flag
  ne r5 r5 r7
  jt r5 wait0
  lt r5 r7 r8
  jt r5 ping
  jmp done
:pong                   ; core 1: wait for 2k-1, store 2k
  add r4 r7 #1
:wait1
  ld r5 flag
  ne r5 r5 r4
  jt r5 wait1
  add r7 r7 #2
  st r7 flag
  lt r5 r7 r8
  jt r5 pong
:done
  sync
  jt r1 finish
  ld r3 flag
  trap r3 #1
  mov r6 #10
  trap r6 #2
:finish
  trap r0 #0
.data 0
:flag
  0
.end
