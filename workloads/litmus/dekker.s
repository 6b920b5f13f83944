; Dekker's entry: flag[i]=1; enter if flag[j]==0. in0=1 in1=1: both cores in the critical section.
; litmus: cores=2 values=in0,in1 relaxed=1,1 sc=forbidden tso=allowed pso=allowed
; Each core keeps what it read in `v`; after the barrier core 0 prints v, then a newline.
.symbol
  nvalues 2
.code 0
  cid r1                ; i
  mov r9 #1
  sub r8 r9 r1          ; j = 1 - i
  st r9 @flag r1        ; flag[i] = 1
  ld r3 @flag r8        ; the other core wants in: stay out
  jt r3 show
  st r9 @v r1           ; entered: in[i] = 1
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
:flag 0 0
:v
:in0 0
:in1 0
.end
