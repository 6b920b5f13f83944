; MP (message passing): r0=y; r1=x || x=1; y=1. r0=1 r1=0 needs the stores to reach memory out of order.
; litmus: cores=2 values=r0,r1 relaxed=1,0 sc=forbidden tso=forbidden pso=allowed fence=f0,f1
; The runner adds the code at `show` (core 0 prints the values from `v` on, after every core arrives)
; and derives mp_fence.s, with a `fence` at each label that fence= names.
.code 0
  cid r1
  jt r1 t1
  ld r3 y               ; core 0: r0 = y; r1 = x
:f0                     ; mp_fence.s: a fence here
  ld r4 x
  st r3 v0
  st r4 v1
  jmp show
:t1
  mov r2 #1             ; core 1: x = 1; y = 1 (the writer is core 1, so that fixed
  st r2 x               ; arbitration lets the reader's loads pass its buffered x=1)
:f1                     ; mp_fence.s: a fence here
  st r2 y
.data 0
; y below x: a PSO buffer that drains the lowest address first lets y=1 pass x=1
:y 0
:x 0
:v
:v0 0
:v1 0
.end
