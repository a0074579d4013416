"""The most distinct saturated colours in one pixel column of a PNG.

usage: png_colours.py FILE.png  -> prints that number

Decodes 8-bit RGB or RGBA PNG files (what Cairo writes) with the standard
library only: zlib and the five row filters of the PNG specification.
A colour is saturated when its channels differ by more than 60 (text,
grid lines and shading are grey); anti-aliased edges are excluded by
keeping colours seen on at least 3 pixels of the column.
"""
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(path + ": not a PNG")
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise SystemExit(path + ": only 8-bit RGB/RGBA, not interlaced")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def main():
    w, h, bpp, rows = read_png(sys.argv[1])
    best = 0
    for x in range(0, w, 2):
        seen = {}
        for y in range(h):
            px = tuple(rows[y][x * bpp:x * bpp + 3])
            if max(px) - min(px) > 60:
                seen[px] = seen.get(px, 0) + 1
        best = max(best, sum(1 for n in seen.values() if n >= 3))
    print(best)


main()
