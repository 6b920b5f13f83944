; MP (message passing): r0=y; r1=x || x=1; y=1. r0=1 r1=0 needs the stores to reach memory out of order.
; litmus: cores=2 values=r0,r1 relaxed=1,0 sc=forbidden tso=forbidden pso=allowed
; Each core keeps what it read in `v`; after the barrier core 0 prints v, then a newline.
.symbol
  nvalues 2
.code 0
  cid r1
  jt r1 t1
  ld r3 y               ; core 0: r0 = y; r1 = x
  ld r4 x
  st r3 v0
  st r4 v1
  jmp show
:t1
  mov r2 #1             ; core 1: x = 1; y = 1 (the writer is core 1, so that fixed
  st r2 x               ; arbitration lets the reader's loads pass its buffered x=1)
  st r2 y
:show
  sync
  cid r1
  jt r1 done
  mov r4 #0
:next
  ld r5 @v r4           ; print v[0] .. v[nvalues-1], a space between, a newline at the end
  trap r5 #1
  add r4 r4 #1
  eq r6 r4 #nvalues
  jt r6 last
  mov r7 #32
  trap r7 #2
  jmp next
:last
  mov r7 #10
  trap r7 #2
:done
  trap r0 #0
.data 0
; y below x: a PSO buffer that drains the lowest address first lets y=1 pass x=1
:y 0
:x 0
:v
:v0 0
:v1 0
.end
