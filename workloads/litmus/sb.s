; SB (store buffering): x=1; r0=y || y=1; r1=x. Both loads read 0 only if the stores wait in buffers.
; litmus: cores=2 values=r0,r1 relaxed=0,0 sc=forbidden tso=allowed pso=allowed fence=f0,f1
; The runner adds the code at `show` (core 0 prints the values from `v` on, after every core arrives)
; and derives sb_fence.s, with a `fence` at each label that fence= names.
.code 0
  cid r1
  jt r1 t1
  mov r2 #1             ; core 0: x = 1; r0 = y
  st r2 x
:f0                     ; sb_fence.s: a fence here
  ld r3 y
  st r3 v0
  jmp show
:t1
  mov r2 #1             ; core 1: y = 1; r1 = x
  st r2 y
:f1                     ; sb_fence.s: a fence here
  ld r3 x
  st r3 v1
.data 0
:x 0
:y 0
:v
:v0 0
:v1 0
.end
