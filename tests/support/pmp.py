#!/usr/bin/env python3
"""An independent reader of perfmon binary profiles, versions 1, 2 and 3,
written from docs/format.md alone (not from perfmon's C code), for the
shell tests:

  pmp.py compare FILE.pmp FILE.pmp.jsonl   every binary sample equals its
                                           JSON Lines copy (prints a summary)
  pmp.py to-v1 IN.pmp OUT.pmp              the same profile as version 1
  pmp.py size FILE.pmp                     the version, the samples, and the
                                           bytes per sample of the sample and
                                           index records

Records are checked by their CRC-32C; reading stops at the first record
that fails (a torn tail), whose bytes are counted."""
import json
import struct
import sys

M = 1 << 64
POLY = 0x82F63B78
TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ POLY if c & 1 else c >> 1
    TABLE.append(c)


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def records(buf):
    """(offset, type, payload) of each valid record; then the torn bytes."""
    off, out = 16, []
    while off + 12 <= len(buf):
        plen, typ = struct.unpack_from('<IB', buf, off)
        end = off + 8 + plen + 4
        if end > len(buf) or buf[off + 5:off + 8] != b'\0\0\0':
            break
        if crc32c(buf[off:off + 8 + plen]) != struct.unpack_from('<I', buf, off + 8 + plen)[0]:
            break
        out.append((off, typ, buf[off + 8:off + 8 + plen]))
        off = end
    return out, len(buf) - off


def columns(header):
    cols, i = [], 0
    while i < len(header):
        tag, _, n = struct.unpack_from('<HHI', header, i)
        v = header[i + 8:i + 8 + n]
        if tag == 12:
            kind, typ, nl = v[0], v[1], struct.unpack_from('<H', v, 2)[0]
            cols.append({'kind': kind, 'type': typ, 'name': v[16:16 + nl].decode()})
        i += 8 + n
    return cols


def varint(b, i):
    x, s = 0, 0
    while True:
        c = b[i]
        i += 1
        x |= (c & 0x7F) << s
        if c < 0x80:
            return x % M, i
        s += 7
        if s >= 70:
            raise ValueError('varint longer than 10 bytes')


def unzz(x):
    return ((x >> 1) ^ -(x & 1)) % M


def signed(x):
    return x - M if x >= 1 << 63 else x


def v3_numbers(b, i, codes, n):
    """Version 3's form bytes and numbers after the codes at i
    (docs/format.md, "Version 3 samples"): two lists, and the end."""
    cs = [codes[c // 4] >> (2 * (c % 4)) & 3 for c in range(n)]
    nf = cs.count(3)
    nn = nf + cs.count(2)
    forms = list(b[i:i + nf])
    i += nf
    lens = []
    for k in range((nn + 1) // 2):
        lens += [b[i + k] & 15, b[i + k] >> 4]
    if nn % 2 and lens[-1]:
        raise ValueError('padding nibble not 0')
    lens = lens[:nn]
    i += (nn + 1) // 2
    if len(forms) != nf or any(x > 8 for x in lens):
        raise ValueError('bad lengths')
    nums = []
    for x in lens:
        if i + x > len(b):
            raise ValueError('numbers past the payload')
        nums.append(int.from_bytes(b[i:i + x], 'little'))
        i += x
    return forms, nums, i


class V2:
    """Decoder state (docs/format.md, "Version 2 samples", "Version 3
    samples": version 3 differs only in where the bytes of codes 2 and 3
    are)."""

    def __init__(self, cols, version=2):
        self.cols = cols
        self.version = version
        self.reset()

    def reset(self):
        self.st = [[None, 0, 0] for _ in self.cols]  # form, m, d
        self.mono = self.md = self.off = 0

    def sample(self, key, b):
        if key:
            self.reset()
        a, i = varint(b, 0)
        o, i = varint(b, i)
        self.md = (self.md + unzz(a)) % M
        self.mono = (self.mono + self.md) % M
        self.off = (self.off + unzz(o)) % M
        if key:
            self.md = 0
        mono, wall = signed(self.mono), signed((self.mono + self.off) % M)
        n = len(self.cols)
        codes = b[i:i + (n + 3) // 4]
        i += (n + 3) // 4
        if self.version >= 3:
            forms, nums, i = v3_numbers(b, i, codes, n)
            forms.reverse()
            nums.reverse()
        bits = []  # per column: None, or the stored 64 bits
        for c, col in enumerate(self.cols):
            code = codes[c // 4] >> (2 * (c % 4)) & 3
            s = self.st[c]
            counter = col['kind'] == 1
            if code == 0:
                bits.append(None)
                continue
            if code == 1:
                if s[0] is None:
                    raise ValueError('code 1 without a value')
                if counter and s[0] != 'raw':
                    s[1] = (s[1] + s[2]) % M
            elif code == 2:
                if s[0] is None:
                    raise ValueError('code 2 without a value')
                if self.version >= 3:
                    x = nums.pop()
                else:
                    x, i = varint(b, i)
                if s[0] == 'raw':
                    s[1] ^= x
                elif counter:
                    s[2] = (s[2] + unzz(x)) % M
                    s[1] = (s[1] + s[2]) % M
                else:
                    s[1] = (s[1] + unzz(x)) % M
            elif self.version >= 3:
                k, x = forms.pop(), nums.pop()
                if k <= 9 and (k == 0 or col['type'] == 0):
                    s[0], s[1], s[2] = k, unzz(x), 0
                elif k == 128 and col['type'] == 0:
                    s[0], s[1] = 'raw', x
                else:
                    raise ValueError('escape %d' % k)
            else:
                k = b[i]
                i += 1
                if k <= 9:
                    x, i = varint(b, i)
                    s[0], s[1], s[2] = k, unzz(x), 0
                elif k == 128:
                    s[0], s[1] = 'raw', int.from_bytes(b[i:i + 8], 'little')
                    i += 8
                else:
                    raise ValueError('escape %d' % k)
            if col['type'] == 1 or s[0] == 'raw':
                bits.append(s[1])
            else:
                v = float(signed(s[1]))
                if s[0]:
                    v = v / float(10 ** s[0])
                bits.append(struct.unpack('<Q', struct.pack('<d', v))[0])
        if i != len(b):
            raise ValueError('bytes left over')
        return mono, wall, bits


def read(path):
    buf = open(path, 'rb').read()
    assert buf[:8] == b'\x89PMPROF\n', 'bad magic'
    version = struct.unpack_from('<I', buf, 8)[0]
    recs, torn = records(buf)
    assert recs and recs[0][1] == 1, 'no header'
    cols = columns(recs[0][2])
    dec = V2(cols, version)
    samples = []
    for off, typ, p in recs:
        if version == 1 and typ == 3:
            mono, wall = struct.unpack_from('<qq', p, 0)
            nb = (len(cols) + 7) // 8
            bits = []
            for c in range(len(cols)):
                has = p[16 + c // 8] >> (c % 8) & 1
                bits.append(struct.unpack_from('<Q', p, 16 + nb + 8 * c)[0] if has else None)
            samples.append((mono, wall, bits))
        elif version in (2, 3) and typ in (6, 7):
            samples.append(dec.sample(typ == 6, p))
    return {'version': version, 'cols': cols, 'samples': samples, 'records': recs,
            'torn': torn, 'preamble': buf[:16]}


def value(col, b):
    if b is None:
        return None
    if col['type'] == 1:
        return b
    return struct.unpack('<d', struct.pack('<Q', b))[0]


def compare(pmp, jsonl):
    prof = read(pmp)
    rows = []
    for line in open(jsonl, encoding='utf-8'):
        try:
            o = json.loads(line, parse_float=str)
        except ValueError:
            continue  # a torn last line
        if 'v' in o:
            rows.append(o)
    bad, n = 0, min(len(prof['samples']), len(rows))
    for k in range(n):
        mono, wall, bits = prof['samples'][k]
        row = rows[k]
        t = '%d.%06d' % divmod(wall // 1000, 1000000)
        if str(row['t']) != t:
            bad += 1
            print('sample %d: t %s in JSON, %s in the binary' % (k, row['t'], t))
        for c, col in enumerate(prof['cols']):
            v, j = value(col, bits[c]), row['v'][c]
            ok = (j is None and (v is None or v != v or v in (float('inf'), float('-inf')))) or \
                 (j is not None and v is not None and float(j) == v)
            if not ok:
                bad += 1
                if bad < 10:
                    print('sample %d %s: %r in JSON, %r in the binary' % (k, col['name'], j, v))
    print('version %d: %d samples in the binary (%d torn bytes after them), %d in JSON Lines, '
          '%d compared, %d differ' % (prof['version'], len(prof['samples']), prof['torn'],
                                      len(rows), n, bad))
    return 1 if bad or abs(len(prof['samples']) - len(rows)) > 1 else 0


def to_v1(src, dst):
    prof = read(src)
    out = bytearray(prof['preamble'][:8] + struct.pack('<II', 1, 0))
    it = iter(prof['samples'])
    ncols = len(prof['cols'])

    def rec(typ, payload):
        head = struct.pack('<IB3x', len(payload), typ)
        return head + payload + struct.pack('<I', crc32c(head + payload))

    for off, typ, p in prof['records']:
        if typ in (6, 7):
            mono, wall, bits = next(it)
            bm = bytearray((ncols + 7) // 8)
            vals = b''
            for c, x in enumerate(bits):
                if x is not None:
                    bm[c // 8] |= 1 << (c % 8)
                vals += struct.pack('<Q', x or 0)
            out += rec(3, struct.pack('<qq', mono, wall) + bytes(bm) + vals)
        elif typ != 8:
            out += rec(typ, p)
    open(dst, 'wb').write(out)
    return 0


def size(path):
    prof = read(path)
    n = len(prof['samples'])
    b = sum(12 + len(p) for _, typ, p in prof['records'] if typ in (3, 6, 7, 8))
    print('%d %d %.1f' % (prof['version'], n, b / n if n else 0))
    return 0


if __name__ == '__main__':
    if sys.argv[1] == 'size':
        sys.exit(size(sys.argv[2]))
    if sys.argv[1] == 'compare':
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    if sys.argv[1] == 'to-v1':
        sys.exit(to_v1(sys.argv[2], sys.argv[3]))
    sys.exit(2)
