; LB (load buffering): r0=x; y=1 || r1=y; x=1. r0=1 r1=1 needs a store to pass an earlier load.
; litmus: cores=2 values=r0,r1 relaxed=1,1 sc=forbidden tso=forbidden pso=forbidden fence=f0,f1
; The runner adds the code at `show` (core 0 prints the values from `v` on, after every core arrives)
; and derives lb_fence.s, with a `fence` at each label that fence= names.
.code 0
  cid r1
  jt r1 t1
  mov r2 #1             ; core 0: r0 = x; y = 1
  ld r3 x
:f0                     ; lb_fence.s: a fence here
  st r2 y
  st r3 v0
  jmp show
:t1
  mov r2 #1             ; core 1: r1 = y; x = 1
  ld r3 y
:f1                     ; lb_fence.s: a fence here
  st r2 x
  st r3 v1
.data 0
:x 0
:y 0
:v
:v0 0
:v1 0
.end
