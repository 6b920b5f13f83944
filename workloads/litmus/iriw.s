; IRIW (independent reads of independent writes): x=1 || y=1 || r0=x; r1=y || r2=y; r3=x.
; litmus: cores=4 values=r0,r1,r2,r3 relaxed=1,0,1,0 sc=forbidden tso=forbidden pso=forbidden fence=f0,f1
; The runner adds the code at `show` (core 0 prints the values from `v` on, after every core arrives)
; and derives iriw_fence.s, with a `fence` at each label that fence= names.
.code 0
  cid r1
  mov r2 #1
  eq r9 r1 #1
  jt r9 t1
  eq r9 r1 #2
  jt r9 t2
  eq r9 r1 #3
  jt r9 t3
  st r2 x               ; core 0: x = 1
  jmp show
:t1
  st r2 y               ; core 1: y = 1
  jmp show
:t2
  ld r3 x               ; core 2: r0 = x; r1 = y
:f0                     ; iriw_fence.s: a fence here
  ld r4 y
  st r3 v0
  st r4 v1
  jmp show
:t3
  ld r3 y               ; core 3: r2 = y; r3 = x
:f1                     ; iriw_fence.s: a fence here
  ld r4 x
  st r3 v2
  st r4 v3
.data 0
:x 0
:y 0
:v
:v0 0
:v1 0
:v2 0
:v3 0
.end
