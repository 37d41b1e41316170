#!/usr/bin/env python3
"""An independent JA4 of a captured ClientHello, written from the FoxIO specification (JA4 is
BSD-3-Clause) without looking at umbra's TypeScript: the sensor tests compare the two.

Usage: ja4.py BASE64_OF_THE_TLS_RECORD ... ; prints one JA4 per argument, one per line.
"""
import base64
import hashlib
import struct
import sys


def grease(v):
    return (v & 0x0F0F) == 0x0A0A and (v >> 8) == (v & 0xFF)


VERSIONS = {0x0304: "13", 0x0303: "12", 0x0302: "11", 0x0301: "10", 0x0300: "s3", 0x0002: "s2",
            0xFEFF: "d1", 0xFEFD: "d2", 0xFEFC: "d3"}


def ja4(record):
    assert record[0] == 0x16, "not a handshake record"
    hs = record[5:]
    assert hs[0] == 1, "not a ClientHello"
    p = 4
    legacy_version = struct.unpack(">H", hs[p:p + 2])[0]
    p += 2 + 32
    p += 1 + hs[p]
    n = struct.unpack(">H", hs[p:p + 2])[0]
    ciphers = [struct.unpack(">H", hs[i:i + 2])[0] for i in range(p + 2, p + 2 + n, 2)]
    p += 2 + n
    p += 1 + hs[p]
    exts = []
    if p < len(hs):
        end = p + 2 + struct.unpack(">H", hs[p:p + 2])[0]
        p += 2
        while p < end:
            t, ln = struct.unpack(">HH", hs[p:p + 4])
            exts.append((t, hs[p + 4:p + 4 + ln]))
            p += 4 + ln
    codes = [t for t, _ in exts if not grease(t)]
    data = dict(exts)
    version = legacy_version
    if 0x002B in data:
        d = data[0x002B]
        vs = [struct.unpack(">H", d[i:i + 2])[0] for i in range(1, 1 + d[0], 2)]
        vs = [v for v in vs if not grease(v)]
        if vs:
            version = max(vs)
    alpn = "00"
    if 0x0010 in data and len(data[0x0010]) > 3:
        d = data[0x0010]
        first = d[3:3 + d[2]]
        if first:
            a, z = chr(first[0]), chr(first[-1])
            if a.isascii() and a.isalnum() and z.isascii() and z.isalnum():
                alpn = a + z
            else:
                h = first.hex()
                alpn = h[0] + h[-1]
    cs = [c for c in ciphers if not grease(c)]
    part_a = "t%s%s%02d%02d%s" % (VERSIONS.get(version, "00"), "d" if 0 in codes else "i", min(len(cs), 99), min(len(codes), 99), alpn)
    h12 = lambda s: hashlib.sha256(s.encode()).hexdigest()[:12]
    part_b = h12(",".join(sorted("%04x" % c for c in cs))) if cs else "000000000000"
    rest = sorted("%04x" % c for c in codes if c not in (0x0000, 0x0010))
    sigs = []
    if 0x000D in data:
        d = data[0x000D]
        sigs = [struct.unpack(">H", d[i:i + 2])[0] for i in range(2, 2 + struct.unpack(">H", d[:2])[0], 2)]
        sigs = ["%04x" % s for s in sigs if not grease(s)]
    text = ",".join(rest) + ("_" + ",".join(sigs) if sigs else "")
    part_c = h12(text) if rest else "000000000000"
    return "%s_%s_%s" % (part_a, part_b, part_c)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(ja4(base64.b64decode(arg)))
