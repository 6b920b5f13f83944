; Miss latency against distance: every core but 0 loads one word of a line homed at tile 0, in turn.
; Core i waits i x `gap` rounds of a 2-instruction loop, then loads word i x ncore x line_words:
; a line of its own (so each load is one cold miss), and since the lines are ncore lines apart
; they all have their home at tile 0 (line mod ncore). Core 0, the home's tile, loads nothing. The
; turns keep any two misses apart in the network and at the home, so on a ring or a mesh each
; core's miss_cycles is one miss at zero load, and its message_hops (it sends only its GetS) is its
; distance to the home. Core 0 prints the number of cores, after a barrier.
; expect (4 cores): 4
.symbol
  gap 100
  line_words 4
.code 0
  cid r1
  ncore r4
  jf r1 done            ; core 0 is the home's tile: no miss
  mul r2 r1 #gap
:wait
  sub r2 r2 #1
  jt r2 wait
  mul r5 r1 r4          ; r5 = word cid x ncore x line_words: line cid x ncore, homed at tile 0
  mul r5 r5 #line_words
  ld r3 @0 r5           ; the miss
:done
  sync
  jt r1 finish
  trap r4 #1
  mov r6 #10
  trap r6 #2
:finish
  trap r0 #0
.data 0
  0
.end
; work: per core (core i first waits i x `gap` rounds: more cores, more work)
