; Peterson's lock with fences after flag[i]=1, after turn=j and before the release: count is 2.
; litmus: cores=2 values=count relaxed=1 sc=forbidden tso=forbidden pso=forbidden
; Each core keeps what it read in `v`; after the barrier core 0 prints v, then a newline.
.symbol
  nvalues 1
.code 0
  cid r1                ; i
  mov r9 #1
  sub r8 r9 r1          ; j = 1 - i
  st r9 @flag r1        ; flag[i] = 1
  fence                 ; wait until this core's earlier stores are in memory
  st r8 turn            ; turn = j
  fence                 ; wait until this core's earlier stores are in memory
:wait
  ld r3 @flag r8        ; wait while flag[j] and turn == j
  jf r3 enter
  ld r3 turn
  eq r3 r3 r8
  jt r3 wait
:enter
  ld r4 count           ; the critical section: count = count + 1
  add r4 r4 #1
  st r4 count
  fence                 ; wait until this core's earlier stores are in memory
  st r0 @flag r1        ; flag[i] = 0: leave
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
:turn 0
:v
:count 0
.end
