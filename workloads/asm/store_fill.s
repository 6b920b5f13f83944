; Store-heavy: the cores fill the 512 words of `a` between them, one store and no load per word.
; Core k writes the words k, k + n, k + 2n, ... (n cores), each a value four ALU instructions make.
; Under sc a core waits for the bus at every store; with store buffers (consistency tso or pso) the
; store waits in the buffer while the core computes the next value. docs/tutorial.md, section 8, also
; runs it with a `fence` at the label f0, after every store, which makes the core wait again.
;   s2mc run store_fill.s --cores 4 --consistency tso
.code 0
  cid r1                ; i: this core's first word
  ncore r2              ; n: the stride
:loop
  mov r3 r1             ; a[i] = (5i + i) * 5 + i
  mul r3 r3 #5
  add r3 r3 r1
  mul r3 r3 #5
  add r3 r3 r1
  st r3 @a r1
:f0                     ; the fenced run: a fence here
  add r1 r1 r2
  lt r4 r1 #512
  jt r4 loop
  trap r0 #0
.data 0
:a .space 512
.end
