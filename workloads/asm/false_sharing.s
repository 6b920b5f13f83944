; False sharing: every core increments its own counter, `stride` words from the next core's.
; Each core adds 1 to its counter `rounds` times; the counters start at a line-aligned base.
; Core 0 prints the sum after a barrier: cores x rounds.
; No core ever reads another's counter, so the result is the same for any stride; with caches on,
; only the layout changes the cost. With a stride below line_words two cores' counters share a
; line and every store invalidates the other's copy (false sharing); a stride of line_words or more
; pads them into lines of their own. Change `stride` (1 packs them; 16 pads any line up to 16 words).
; expect (2 cores): 200
.symbol
  rounds 100
  stride 1
.code 0
  cid r1
  mul r2 r1 #stride     ; r2 = this core's counter: counters + cid x stride
  add r2 r2 #counters
  mov r7 #rounds
:again
  ld r3 @0 r2           ; read-modify-write of this core's counter only
  add r3 r3 #1
  st r3 @0 r2
  sub r7 r7 #1
  jt r7 again
  sync
  jt r1 finish          ; core 0 adds the counters up and prints the sum
  ncore r4
  mov r5 #0
  mov r2 #counters
:sum
  ld r3 @0 r2
  add r5 r5 r3
  add r2 r2 #stride
  sub r4 r4 #1
  jt r4 sum
  trap r5 #1
  mov r6 #10
  trap r6 #2
:finish
  trap r0 #0
.data 1024              ; line-aligned for any line of up to 1024 words
:counters
  0
.end
; work: per core (every core does `rounds` increments of its own counter: n cores do n times the work)
