; Peterson's lock: flag[i]=1; turn=j; wait while flag[j] and turn==j; count+=1; flag[i]=0.
; litmus: cores=2 values=count relaxed=1 sc=forbidden tso=allowed pso=allowed fence=f0,f1,f2
; The runner adds the code at `show` (core 0 prints the values from `v` on, after every core arrives)
; and derives peterson_fence.s, with a `fence` at each label that fence= names.
.code 0
  cid r1                ; i
  mov r9 #1
  sub r8 r9 r1          ; j = 1 - i
  st r9 @flag r1        ; flag[i] = 1
:f0                     ; peterson_fence.s: a fence here
  st r8 turn            ; turn = j
:f1                     ; peterson_fence.s: a fence here
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
:f2                     ; peterson_fence.s: a fence here
  st r0 @flag r1        ; flag[i] = 0: leave
.data 0
:flag 0 0
:turn 0
:v
:count 0
.end
