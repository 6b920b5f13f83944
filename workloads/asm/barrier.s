; Barrier with sync: in phase 1 each core writes its id + 1 into slot[cid]; after the barrier,
; in phase 2 each core reads its right neighbour's slot (which is only safe because of the barrier)
; and prints it. Output (ordered by cycle, then core) is each neighbour's value on its own line.
; expect (4 cores): the values 2 3 4 1 in core order
.code 0
  cid r1
  ncore r2
  add r3 r1 #1
  st r3 @slot r1        ; phase 1
  mul r4 r1 #7          ; uneven work before the barrier: core k spins 7k iterations
:work
  jf r4 arrive
  sub r4 r4 #1
  jmp work
:arrive
  sync                  ; all slots are written
  add r5 r1 #1          ; phase 2: neighbour (cid + 1) mod ncore
  mod r5 r5 r2
  ld r6 @slot r5
  trap r6 #1
  mov r7 #10
  trap r7 #2
  trap r0 #0
.data 0
:slot
  0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
  0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
.end
; work: per core (every core writes its slot and reads its neighbour's: n cores do n times the work)
