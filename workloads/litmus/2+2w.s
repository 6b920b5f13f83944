; 2+2W: x=1; y=2 || y=1; x=2, then the final x and y. x=1 y=1 needs stores to drain out of order.
; litmus: cores=2 values=x,y relaxed=1,1 sc=forbidden tso=forbidden pso=allowed
; Each core keeps what it read in `v`; after the barrier core 0 prints v, then a newline.
.symbol
  nvalues 2
.code 0
  cid r1
  mov r2 #1
  mov r3 #2
  jt r1 t1
  st r2 x               ; core 0: x = 1; y = 2
  st r3 y
  jmp show
:t1
  st r2 y               ; core 1: y = 1; x = 2
  st r3 x
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
:v
:x 0
:y 0
.end
