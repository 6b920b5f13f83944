"""The store-buffer worked examples of docs/timing-model.md ("Store buffers", "Worked examples"),
one source each for every test that checks them (engines, stepping, timeline)."""

# "A store, then a load that hits the buffer" (one core, L = 2, tso, E = 4).
FORWARD = """
.code 0
  mov r1 #5
  st r1 x
  st r1 y
  ld r2 y
  trap r0 #0
.data 0
:x
  0
:y
  0
.end
"""

# "A fence waiting for three stores, drains competing with another core's loads" (two cores, L = 2,
# fixed): core 1's three stores and its fence against core 0's three loads; words 0..2 are flag.
FENCE3 = """
.code 0
  cid r1
  jt r1 one
  ld r2 @8 r0
  ld r2 @8 r0
  ld r2 @8 r0
  trap r0 #0
:one
  st r1 @0 r0
  st r1 @1 r0
  st r1 @2 r0
  fence
  trap r0 #0
.data 0
:flag
  0 0 0
.end
"""
