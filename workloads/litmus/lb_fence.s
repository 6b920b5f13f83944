; LB+fences (load buffering, a fence between each load and store): r0=1 r1=1 stays forbidden.
; litmus: cores=2 values=r0,r1 relaxed=1,1 sc=forbidden tso=forbidden pso=forbidden
; Each core keeps what it read in `v`; after the barrier core 0 prints v, then a newline.
.symbol
  nvalues 2
.code 0
  cid r1
  jt r1 t1
  mov r2 #1             ; core 0: r0 = x; y = 1
  ld r3 x
  fence                 ; wait until this core's earlier stores are in memory
  st r2 y
  st r3 v0
  jmp show
:t1
  mov r2 #1             ; core 1: r1 = y; x = 1
  ld r3 y
  fence                 ; wait until this core's earlier stores are in memory
  st r2 x
  st r3 v1
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
:x 0
:y 0
:v
:v0 0
:v1 0
.end
