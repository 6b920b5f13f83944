; Parallel array sum: each core adds the elements i = cid, cid+N, cid+2N, ... of `array`
; (interleaved like seed 003's AES blocks), stores its partial sum in partial[cid], then core 0
; adds the partials after a barrier and prints the total.
; expect: 5050
.symbol
  n 100
.code 0
  cid r1                ; r1 = i = core id
  ncore r2              ; r2 = stride = number of cores
  mov r3 #0             ; r3 = partial sum
:loop
  lt r4 r1 #n
  jf r4 done
  ld r5 @array r1
  add r3 r3 r5
  add r1 r1 r2
  jmp loop
:done
  cid r1
  st r3 @partial r1
  sync                  ; every partial is in memory
  jt r1 finish          ; only core 0 combines
  mov r3 #0
  mov r1 #0
:combine
  ld r5 @partial r1
  add r3 r3 r5
  add r1 r1 #1
  lt r4 r1 r2
  jt r4 combine
  trap r3 #1
  mov r6 #10
  trap r6 #2
:finish
  trap r0 #0
.data 0
:partial
  0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
  0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
:array
  1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30
  31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60
  61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90
  91 92 93 94 95 96 97 98 99 100
.end
