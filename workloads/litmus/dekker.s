; Dekker's entry: flag[i]=1; enter if flag[j]==0. in0=1 in1=1: both cores in the critical section.
; litmus: cores=2 values=in0,in1 relaxed=1,1 sc=forbidden tso=allowed pso=allowed fence=f0
; The runner adds the code at `show` (core 0 prints the values from `v` on, after every core arrives)
; and derives dekker_fence.s, with a `fence` at each label that fence= names.
.code 0
  cid r1                ; i
  mov r9 #1
  sub r8 r9 r1          ; j = 1 - i
  st r9 @flag r1        ; flag[i] = 1
:f0                     ; dekker_fence.s: a fence here
  ld r3 @flag r8        ; the other core wants in: stay out
  jt r3 show
  st r9 @v r1           ; entered: in[i] = 1
.data 0
:flag 0 0
:v
:in0 0
:in1 0
.end
