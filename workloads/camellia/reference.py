"""Camellia in Python, written from RFC 3713 (M. Matsui, J. Nakajima, S. Moriai, "A Description of the
Camellia Encryption Algorithm", April 2004): the s-boxes, the F-function, FL and FL^-1, the key
schedule for 128/192/256-bit keys, one-block encryption and decryption.

    from s2mc.workloads.camellia import reference as cam
    cam.encrypt_block(key, block)          # 16 bytes -> 16 bytes
    cam.subkeys(key)                       # {"kw1": ..., "k1": ..., "ke1": ...}: 64-bit subkeys

It is the source of the Rz program's data (the SP-tables, Sigma and the schedule tables written by
`python -m s2mc.workloads.camellia.tables`) and a second check beside `cryptography`: the tests hold
it to RFC 3713's Appendix A vectors and to `cryptography`'s `algorithms.Camellia`. Section numbers
below are RFC 3713's.
"""
from __future__ import annotations

MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF
MASK128 = (1 << 128) - 1

#: SBOX1 (§2.4.4), in decimal as the RFC prints it.
SBOX1 = tuple(int(v) for v in """
    112 130  44 236 179  39 192 229 228 133  87  53 234  12 174  65
     35 239 107 147  69  25 165  33 237  14  79  78  29 101 146 189
    134 184 175 143 124 235  31 206  62  48 220  95  94 197  11  26
    166 225  57 202 213  71  93  61 217   1  90 214  81  86 108  77
    139  13 154 102 251 204 176  45 116  18  43  32 240 177 132 153
    223  76 203 194  52 126 118   5 109 183 169  49 209  23   4 215
     20  88  58  97 222  27  17  28  50  15 156  22  83  24 242  34
    254  68 207 178 195 181 122 145  36   8 232 168  96 252 105  80
    170 208 160 125 161 137  98 151  84  91  30 149 224 255 100 210
     16 196   0  72 163 247 117 219 138   3 230 218   9  63 221 148
    135  92 131   2 205  74 144  51 115 103 246 243 157 127 191 226
     82 155 216  38 200  55 198  59 129 150 111  75  19 190  99  46
    233 121 167 140 159 110 188 142  41 245 249 182  47 253 180  89
    120 152   6 106 231  70 113 186 212  37 171  66 136 162 141 250
    114   7 185  85 248 238 172  10  54  73  42 104  60  56 241 164
     64  40 211 123 187 201  67 193  21 227 173 244 119 199 128 158
""".split())

#: Sigma1..Sigma6, the key schedule's constants (§2.2).
SIGMA = (0xA09E667F3BCC908B, 0xB67AE8584CAA73B2, 0xC6EF372FE94F82BE,
         0x54FF53A5F1D36F1C, 0x10E527FADE682D1D, 0xB05688C2B3E6C1FD)


def _rol8(x: int, n: int) -> int:
    return ((x << n) | (x >> (8 - n))) & 0xFF


def rol(x: int, n: int, bits: int) -> int:
    """x rotated left by n within `bits` bits."""
    n %= bits
    mask = (1 << bits) - 1
    return ((x << n) | (x >> (bits - n))) & mask if n else x & mask


# SBOX2..4 from SBOX1 (§2.4.4)
SBOX2 = tuple(_rol8(SBOX1[x], 1) for x in range(256))
SBOX3 = tuple(_rol8(SBOX1[x], 7) for x in range(256))
SBOX4 = tuple(SBOX1[_rol8(x, 1)] for x in range(256))


def F(f_in: int, ke: int) -> int:
    """The F-function (§2.4.1): key addition, the s-boxes and the P-function, on 64 bits."""
    x = f_in ^ ke
    t = [(x >> (56 - 8 * i)) & 0xFF for i in range(8)]
    t1, t2, t3, t4 = SBOX1[t[0]], SBOX2[t[1]], SBOX3[t[2]], SBOX4[t[3]]
    t5, t6, t7, t8 = SBOX2[t[4]], SBOX3[t[5]], SBOX4[t[6]], SBOX1[t[7]]
    y = (t1 ^ t3 ^ t4 ^ t6 ^ t7 ^ t8, t1 ^ t2 ^ t4 ^ t5 ^ t7 ^ t8, t1 ^ t2 ^ t3 ^ t5 ^ t6 ^ t8,
         t2 ^ t3 ^ t4 ^ t5 ^ t6 ^ t7, t1 ^ t2 ^ t6 ^ t7 ^ t8, t2 ^ t3 ^ t5 ^ t7 ^ t8,
         t3 ^ t4 ^ t5 ^ t6 ^ t8, t1 ^ t4 ^ t5 ^ t6 ^ t7)
    out = 0
    for b in y:
        out = (out << 8) | b
    return out


def FL(fl_in: int, ke: int) -> int:
    """FL (§2.4.2)."""
    x1, x2 = fl_in >> 32, fl_in & MASK32
    k1, k2 = ke >> 32, ke & MASK32
    x2 ^= rol(x1 & k1, 1, 32)
    x1 ^= x2 | k2
    return (x1 << 32) | x2


def FLINV(flinv_in: int, ke: int) -> int:
    """FL^-1 (§2.4.3)."""
    y1, y2 = flinv_in >> 32, flinv_in & MASK32
    k1, k2 = ke >> 32, ke & MASK32
    y1 ^= y2 | k2
    y2 ^= rol(y1 & k1, 1, 32)
    return (y1 << 32) | y2


def key_material(key: bytes) -> dict[str, int]:
    """KL, KR, KA and KB (§2.2) as 128-bit numbers (KB is 0 for 128-bit keys)."""
    if len(key) not in (16, 24, 32):
        raise ValueError(f"a Camellia key is 16, 24 or 32 bytes, not {len(key)}")
    k = int.from_bytes(key, "big")
    if len(key) == 16:
        kl, kr = k, 0
    elif len(key) == 24:
        kl, r = k >> 64, k & MASK64
        kr = (r << 64) | (~r & MASK64)
    else:
        kl, kr = k >> 128, k & MASK128
    d1, d2 = (kl ^ kr) >> 64, (kl ^ kr) & MASK64
    d2 ^= F(d1, SIGMA[0])
    d1 ^= F(d2, SIGMA[1])
    d1 ^= kl >> 64
    d2 ^= kl & MASK64
    d2 ^= F(d1, SIGMA[2])
    d1 ^= F(d2, SIGMA[3])
    ka = (d1 << 64) | d2
    kb = 0
    if len(key) > 16:
        d1, d2 = (ka ^ kr) >> 64, (ka ^ kr) & MASK64
        d2 ^= F(d1, SIGMA[4])
        d1 ^= F(d2, SIGMA[5])
        kb = (d1 << 64) | d2
    return {"KL": kl, "KR": kr, "KA": ka, "KB": kb}


#: The subkeys (§2.2), in the order encryption uses them: (name, source, rotation). A subkey is the
#: left 64 bits of the source rotated left by the rotation; the RFC's "(X <<< n) & MASK64" (the
#: right half) is written as the left half of X <<< (n + 64).
SCHEDULE_128 = (
    ("kw1", "KL", 0), ("kw2", "KL", 64), ("k1", "KA", 0), ("k2", "KA", 64), ("k3", "KL", 15),
    ("k4", "KL", 79), ("k5", "KA", 15), ("k6", "KA", 79), ("ke1", "KA", 30), ("ke2", "KA", 94),
    ("k7", "KL", 45), ("k8", "KL", 109), ("k9", "KA", 45), ("k10", "KL", 124), ("k11", "KA", 60),
    ("k12", "KA", 124), ("ke3", "KL", 77), ("ke4", "KL", 13), ("k13", "KL", 94), ("k14", "KL", 30),
    ("k15", "KA", 94), ("k16", "KA", 30), ("k17", "KL", 111), ("k18", "KL", 47),
    ("kw3", "KA", 111), ("kw4", "KA", 47))
SCHEDULE_256 = (   # 192- and 256-bit keys
    ("kw1", "KL", 0), ("kw2", "KL", 64), ("k1", "KB", 0), ("k2", "KB", 64), ("k3", "KR", 15),
    ("k4", "KR", 79), ("k5", "KA", 15), ("k6", "KA", 79), ("ke1", "KR", 30), ("ke2", "KR", 94),
    ("k7", "KB", 30), ("k8", "KB", 94), ("k9", "KL", 45), ("k10", "KL", 109), ("k11", "KA", 45),
    ("k12", "KA", 109), ("ke3", "KL", 60), ("ke4", "KL", 124), ("k13", "KR", 60), ("k14", "KR", 124),
    ("k15", "KB", 60), ("k16", "KB", 124), ("k17", "KL", 77), ("k18", "KL", 13), ("ke5", "KA", 77),
    ("ke6", "KA", 13), ("k19", "KR", 94), ("k20", "KR", 30), ("k21", "KA", 94), ("k22", "KA", 30),
    ("k23", "KL", 111), ("k24", "KL", 47), ("kw3", "KB", 111), ("kw4", "KB", 47))
SOURCES = ("KL", "KR", "KA", "KB")


def schedule(key_bits: int) -> tuple[tuple[str, str, int], ...]:
    return SCHEDULE_128 if key_bits == 128 else SCHEDULE_256


def subkeys(key: bytes) -> dict[str, int]:
    """Every 64-bit subkey by its RFC name."""
    km = key_material(key)
    return {name: rol(km[src], rot, 128) >> 64 for name, src, rot in schedule(len(key) * 8)}


def _crypt(block: bytes, sk: dict[str, int], names: dict[str, str]) -> bytes:
    """The data randomizing part (§2.3) with subkey names mapped by `names` (decryption swaps them)."""
    k = lambda n: sk[names.get(n, n)]  # noqa: E731
    rounds = 18 if "k19" not in sk else 24
    m = int.from_bytes(block, "big")
    d1, d2 = (m >> 64) ^ k("kw1"), (m & MASK64) ^ k("kw2")
    for r in range(1, rounds + 1, 2):
        d2 ^= F(d1, k(f"k{r}"))
        d1 ^= F(d2, k(f"k{r + 1}"))
        if r + 1 in (6, 12, 18) and r + 1 < rounds:
            i = (r + 1) // 3 - 1       # ke1/ke2 after round 6, ke3/ke4 after 12, ke5/ke6 after 18
            d1 = FL(d1, k(f"ke{i}"))
            d2 = FLINV(d2, k(f"ke{i + 1}"))
    d2 ^= k("kw3")
    d1 ^= k("kw4")
    return ((d2 << 64) | d1).to_bytes(16, "big")


def _decryption_names(sk: dict[str, int]) -> dict[str, str]:
    """Decryption is encryption with the subkeys swapped (§2.3.3): kw1<->kw3, kw2<->kw4, k_i<->k_(n+1-i),
    ke_i<->ke_(m+1-i)."""
    nk = 24 if "k19" in sk else 18
    nke = 6 if "ke5" in sk else 4
    names = {"kw1": "kw3", "kw2": "kw4", "kw3": "kw1", "kw4": "kw2"}
    names.update({f"k{i}": f"k{nk + 1 - i}" for i in range(1, nk + 1)})
    names.update({f"ke{i}": f"ke{nke + 1 - i}" for i in range(1, nke + 1)})
    return names


def encrypt_block(key: bytes, block: bytes) -> bytes:
    return _crypt(bytes(block), subkeys(bytes(key)), {})


def decrypt_block(key: bytes, block: bytes) -> bytes:
    sk = subkeys(bytes(key))
    return _crypt(bytes(block), sk, _decryption_names(sk))


def decryption_order(key_bits: int) -> tuple[str, ...]:
    """The subkey names in the order decryption uses them: each encryption slot's swapped name."""
    names = {name for name, _, _ in schedule(key_bits)}
    swap = _decryption_names({n: 0 for n in names})
    return tuple(swap[name] for name, _, _ in schedule(key_bits))


# --------------------------------------------------------------------------------------------------
# What the 32-bit program uses
# --------------------------------------------------------------------------------------------------

def sp_tables() -> dict[str, list[int]]:
    """The SP-tables of the 32-bit F-function: the s-box of each input byte already spread over
    the bytes of the P-function's left output word that it reaches (see camellia.rz):
    SP1110[x] = s1 s1 s1 0, SP0222[x] = 0 s2 s2 s2, SP3033[x] = s3 0 s3 s3, SP4404[x] = s4 s4 0 s4."""
    return {"sp1110": [SBOX1[x] * 0x01010100 for x in range(256)],
            "sp0222": [SBOX2[x] * 0x00010101 for x in range(256)],
            "sp3033": [SBOX3[x] * 0x01000101 for x in range(256)],
            "sp4404": [SBOX4[x] * 0x01010001 for x in range(256)]}


def f_words(x0: int, x1: int, k0: int, k1: int) -> tuple[int, int]:
    """F on 32-bit halves with the SP-tables, exactly as camellia.rz computes it."""
    sp = sp_tables()
    x, y = x0 ^ k0, x1 ^ k1
    a = (sp["sp1110"][x >> 24] ^ sp["sp0222"][(x >> 16) & 0xFF] ^ sp["sp3033"][(x >> 8) & 0xFF]
         ^ sp["sp4404"][x & 0xFF])
    b = (sp["sp0222"][y >> 24] ^ sp["sp3033"][(y >> 16) & 0xFF] ^ sp["sp4404"][(y >> 8) & 0xFF]
         ^ sp["sp1110"][y & 0xFF])
    left = a ^ b
    return left, left ^ rol(a, 24, 32)      # a rotated right by 8


def schedule_words(key_bits: int, decrypt: bool = False) -> list[int]:
    """The program's schedule table: for each 64-bit subkey slot, source * 128 + rotation
    (source 0 KL, 1 KR, 2 KA, 3 KB), in encryption or decryption order."""
    table = {name: SOURCES.index(src) * 128 + rot for name, src, rot in schedule(key_bits)}
    order = decryption_order(key_bits) if decrypt else [n for n, _, _ in schedule(key_bits)]
    return [table[n] for n in order]


def round_key_words(key: bytes, decrypt: bool = False) -> list[int]:
    """The 32-bit words the program's key expansion writes (ek): every subkey, in use order."""
    sk = subkeys(bytes(key))
    order = decryption_order(len(key) * 8) if decrypt else [n for n, _, _ in schedule(len(key) * 8)]
    return [w for n in order for w in (sk[n] >> 32, sk[n] & MASK32)]
