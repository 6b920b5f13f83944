; IRIW+fences (independent reads of independent writes, a fence between the reads).
; litmus: cores=4 values=r0,r1,r2,r3 relaxed=1,0,1,0 sc=forbidden tso=forbidden pso=forbidden
; Each core keeps what it read in `v`; after the barrier core 0 prints v, then a newline.
.symbol
  nvalues 4
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
  fence                 ; wait until this core's earlier stores are in memory
  ld r4 y
  st r3 v0
  st r4 v1
  jmp show
:t3
  ld r3 y               ; core 3: r2 = y; r3 = x
  fence                 ; wait until this core's earlier stores are in memory
  ld r4 x
  st r3 v2
  st r4 v3
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
:v2 0
:v3 0
.end
