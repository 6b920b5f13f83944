; 2+2W: x=1; y=2 || y=1; x=2, then the final x and y. x=1 y=1 needs stores to drain out of order.
; litmus: cores=2 values=x,y relaxed=1,1 sc=forbidden tso=forbidden pso=allowed fence=f0,f1
; The runner adds the code at `show` (core 0 prints the values from `v` on, after every core arrives)
; and derives 2+2w_fence.s, with a `fence` at each label that fence= names.
.code 0
  cid r1
  mov r2 #1
  mov r3 #2
  jt r1 t1
  st r2 x               ; core 0: x = 1; y = 2
:f0                     ; 2+2w_fence.s: a fence here
  st r3 y
  jmp show
:t1
  st r2 y               ; core 1: y = 1; x = 2
:f1                     ; 2+2w_fence.s: a fence here
  st r3 x
.data 0
:v
:x 0
:y 0
.end
