#!/usr/bin/env python3
"""A hostile writer of Lodge saved-state streams, for the tests: it takes a
real save file apart (src/common/stream.h: a 16-byte magic, then sections
of a 40-byte header, a payload and a CRC-32 of both), changes what it is
told to, and writes every section back with a valid CRC, so that what it
forges reaches the parsers behind the checksums, as an attacker's would.

    stream-forge.py forge IN OUT [edits...]
        --config-sub OLD NEW   replace text in the HEAD's config (repeatable)
        --config-file FILE     replace the HEAD's whole config
        --dup-head             a second HEAD section after the first
        --dev-first            move the first DEV section before the RAM sections
        --dup-page             repeat the first RAM section (each page twice)
        --trailing TEXT        append bytes after the END section
    stream-forge.py send (--unix PATH | --tcp HOST:PORT) [--secret FILE] FILE
        act as `lodge migrate`'s sender: authenticate, send FILE, print what
        the receiver answered (its "ok" or "error ..." line)
    stream-forge.py stall (--unix PATH | --tcp HOST:PORT) [--secret FILE] [--after auth|nothing]
        connect and then send nothing more (after authenticating, or at
        all); wait until the receiver closes, print how it ended
"""
import argparse
import hashlib
import hmac
import os
import socket
import struct
import sys
import zlib

MAGIC_LEN = 16
HDR = struct.Struct("<II24sQ")          # type, version, name, payload length


def fourcc(s):
    return struct.unpack("<I", s.encode())[0]


HEAD, RAM, DEV, END = fourcc("HEAD"), fourcc("RAM "), fourcc("DEV "), fourcc("END ")


def parse(data):
    magic, off, sections = data[:MAGIC_LEN], MAGIC_LEN, []
    while off < len(data):
        typ, ver, name, plen = HDR.unpack_from(data, off)
        payload = data[off + HDR.size:off + HDR.size + plen]
        sections.append([typ, ver, name, payload])
        off += HDR.size + plen + 4
    return magic, sections


def build(magic, sections):
    out = bytearray(magic)
    for typ, ver, name, payload in sections:
        hdr = HDR.pack(typ, ver, name, len(payload))
        out += hdr + payload + struct.pack("<I", zlib.crc32(hdr + payload) & 0xffffffff)
    return bytes(out)


def forge(a):
    with open(a.infile, "rb") as f:
        magic, sections = parse(f.read())
    head = sections[0]
    text = head[3].decode()
    at = text.index("\nconfig\n") + len("\nconfig\n")
    config = text[at:]
    for old, new in a.config_sub or []:
        if old not in config:
            sys.exit("stream-forge: %r is not in the config" % old)
        config = config.replace(old, new)
    if a.config_file:
        with open(a.config_file) as f:
            config = f.read()
    head[3] = (text[:at] + config).encode()
    if a.dup_head:
        sections.insert(1, list(head))
    if a.dev_first:
        dev = next(i for i, s in enumerate(sections) if s[0] == DEV)
        ram = next(i for i, s in enumerate(sections) if s[0] == RAM)
        sections.insert(ram, sections.pop(dev))
    if a.dup_page:
        ram = next(i for i, s in enumerate(sections) if s[0] == RAM)
        sections.insert(ram + 1, list(sections[ram]))
    data = build(magic, sections)
    if a.trailing:
        data += a.trailing.encode()
    with open(a.outfile, "wb") as f:
        f.write(data)


def connect(a):
    if a.unix:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(a.unix)
    else:
        host, port = a.tcp.rsplit(":", 1)
        s = socket.create_connection((host, int(port)))
    return s


def read_line(s):
    line = b""
    while not line.endswith(b"\n"):
        c = s.recv(1)
        if not c:
            break
        line += c
    return line.decode(errors="replace").rstrip("\n")


def authenticate(s, secret_file):
    greeting = read_line(s)
    if not greeting.startswith("LODGE-MIGRATE 1 nonce "):
        return greeting
    nonce = greeting.split()[-1]
    if nonce == "-":
        s.sendall(b"auth - nonce -\n")
    else:
        with open(secret_file, "rb") as f:
            key = f.read().rstrip(b"\r\n")
        mac = hmac.new(key, b"sender" + bytes.fromhex(nonce), hashlib.sha256).hexdigest()
        s.sendall(("auth %s nonce %s\n" % (mac, os.urandom(32).hex())).encode())
    return read_line(s)


def send(a):
    s = connect(a)
    answer = authenticate(s, a.secret)
    if not answer.startswith("ok"):
        print("auth: " + answer)
        return
    with open(a.file, "rb") as f:
        data = f.read()
    try:
        s.sendall(data)
    except OSError as e:
        print("send: %s" % e)
    print(read_line(s) or "closed")


def stall(a):
    s = connect(a)
    if a.after == "auth":
        answer = authenticate(s, a.secret)
        print("auth: " + answer, flush=True)
    else:
        print("connected", flush=True)
    s.settimeout(600)
    rest = b""
    while True:                 # everything the receiver says until it closes
        try:
            got = s.recv(4096)
        except OSError:
            break
        if not got:
            break
        rest += got
    last = rest.decode(errors="replace").strip().split("\n")[-1] if rest else ""
    print("closed by the receiver" + (": " + last if last else ""))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("forge")
    f.add_argument("infile")
    f.add_argument("outfile")
    f.add_argument("--config-sub", nargs=2, action="append")
    f.add_argument("--config-file")
    f.add_argument("--dup-head", action="store_true")
    f.add_argument("--dev-first", action="store_true")
    f.add_argument("--dup-page", action="store_true")
    f.add_argument("--trailing")
    for name in ("send", "stall"):
        c = sub.add_parser(name)
        g = c.add_mutually_exclusive_group(required=True)
        g.add_argument("--unix")
        g.add_argument("--tcp")
        c.add_argument("--secret")
        if name == "send":
            c.add_argument("file")
        else:
            c.add_argument("--after", choices=("auth", "nothing"), default="nothing")
    a = p.parse_args()
    {"forge": forge, "send": send, "stall": stall}[a.cmd](a)


if __name__ == "__main__":
    main()
