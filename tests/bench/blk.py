#!/usr/bin/env python3
"""virtio-blk benchmark: Mini-OS drives sequential 1 MiB requests (32 in
flight) and 4 KiB random reads (32 in flight) on a file-backed disk opened
with O_DIRECT, under lodge-hyp and under QEMU's virtio-blk-pci on the same
file, in the same run; fio gives the host's own figures for the same
pattern on the same file: the same O_DIRECT, request size and depth, and
for random reads the same span (the whole disk) and the same number of
requests.  The three run in turn, ROUNDS times, so the outer disk's moods
fall on all of them alike; the table gives each one's median, and the
range.

lodge-hyp runs with --hugepages: QEMU madvises its guest RAM for
transparent huge pages by default, and a 1 MiB buffer on 4 KiB pages is
256 segments, over this host's virtio disk's 254, so every request is
split and the block layer cannot merge neighbours (lodge-hyp without it:
2.0-2.7 GiB/s sequential read here, with it 3.8-5.2, QEMU 3.6-4.8, in
the same runs).  fio's buffers are plain malloc'd 4 KiB pages."""
import json
import os
import re
import subprocess
import sys
import tempfile

SEQ_MIB = int(os.environ.get("BLK_SEQ_MIB", "1024"))
RAND_MIB = int(os.environ.get("BLK_RAND_MIB", "64"))
ROUNDS = int(os.environ.get("BLK_ROUNDS", "3"))
CMDS = ("blk-bench vda read %d 1024 32; blk-bench vda write %d 1024 32; "
        "blk-bench vda randread %d 4 32; poweroff" % (SEQ_MIB, SEQ_MIB, RAND_MIB))


def guest_run(argv):
    out = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=900).stdout
    res = {}
    for kind, mibs, iops in re.findall(rb"blk-bench: (\w+) \d+ MiB in \d+ ms: (\d+) MiB/s, (\d+) IOPS", out):
        res[kind.decode()] = (int(mibs), int(iops))
    if len(res) != 3:
        raise RuntimeError("guest did not report: %r" % out[-500:])
    return res


def fio(path, rw, bs, io_mib):
    # The span is the whole file, as Mini-OS's: --size is the region fio
    # works in, --io_size how much it moves there.  Random offsets may
    # repeat, as Mini-OS's do (--norandommap).
    out = subprocess.run(["fio", "--name=b", "--filename=" + path, "--direct=1", "--ioengine=io_uring",
                          "--rw=" + rw, "--bs=" + bs, "--iodepth=32", "--size=%d" % os.path.getsize(path),
                          "--io_size=%dM" % io_mib, "--norandommap", "--randrepeat=0",
                          "--output-format=json"], capture_output=True, check=True, timeout=900).stdout
    job = json.loads(out)["jobs"][0]
    part = job["read"] if "read" in rw else job["write"]
    return int(part["bw_bytes"] / (1 << 20)), int(part["iops"])


def main():
    hyp, minios = sys.argv[1], sys.argv[2]
    d = tempfile.mkdtemp(prefix="lodge-bench-blk.", dir=os.environ.get("BENCH_DIR", "/var/tmp"))
    img = os.path.join(d, "disk.img")
    # Really allocated blocks, so reads go to the disk and not to a hole.
    subprocess.run(["dd", "if=/dev/zero", "of=" + img, "bs=1M", "count=%d" % (SEQ_MIB + 64),
                    "oflag=direct", "status=none"], check=True)
    runs = {"host": [], "lodge": [], "qemu": []}
    try:
        for _ in range(ROUNDS):
            runs["host"].append({"read": fio(img, "read", "1M", SEQ_MIB), "write": fio(img, "write", "1M", SEQ_MIB),
                                 "randread": fio(img, "randread", "4k", RAND_MIB)})
            runs["lodge"].append(guest_run([hyp, "--hugepages", "--kernel", minios, "--memory", "256", "--disk", img + ",direct",
                                            "--cmdline", 'run="%s"' % CMDS]))
            runs["qemu"].append(guest_run(["qemu-system-x86_64", "-accel", "kvm", "-M", "pc",
                                           "-cpu", "host,-arch-capabilities", "-m", "256", "-nographic",
                                           "-nodefaults", "-serial", "stdio", "-no-reboot", "-drive",
                                           "file=%s,if=none,id=d0,format=raw,cache=none,aio=io_uring" % img,
                                           "-device", "virtio-blk-pci,drive=d0,disable-legacy=on",
                                           "-kernel", minios, "-append", 'run="%s"' % CMDS]))
    finally:
        os.unlink(img)
        os.rmdir(d)

    def median(who, kind, idx):
        vals = sorted(r[kind][idx] for r in runs[who])
        return vals[len(vals) // 2]

    host, lodge, qemu = ({k: (median(w, k, 0), median(w, k, 1)) for k in ("read", "write", "randread")}
                         for w in ("host", "lodge", "qemu"))
    print("virtio-blk, Mini-OS on a file-backed disk with O_DIRECT (sequential %d MiB in 1 MiB "
          "requests, 32 in flight; random 4 KiB reads over the whole disk, %d MiB of them, 32 in flight); "
          "host = fio, same file, same pattern; lodge-hyp --hugepages, as QEMU's RAM; median of %d rounds\n" % (SEQ_MIB, RAND_MIB, ROUNDS))
    print("| pattern | host fio | lodge-hyp | QEMU virtio-blk-pci | lodge / host | lodge / QEMU |")
    print("|---|---|---|---|---|---|")
    for kind, unit, idx in (("read", "MiB/s", 0), ("write", "MiB/s", 0), ("randread", "IOPS", 1)):
        h, l, q = host[kind][idx], lodge[kind][idx], qemu[kind][idx]
        print("| %s | %d %s | %d %s | %d %s | %.2f | %.2f |" % (
            "sequential " + kind if kind != "randread" else "random 4 KiB read",
            h, unit, l, unit, q, unit, l / h if h else 0, l / q if q else 0))
    seq_ok = all(lodge[k][0] >= 0.9 * host[k][0] for k in ("read", "write"))
    rand_ok = lodge["randread"][1] >= qemu["randread"][1]
    print("\nTargets: sequential within 10%% of the host: %s; random-read IOPS at least QEMU's: %s" % (
        "met" if seq_ok else "NOT met", "met" if rand_ok else "NOT met"))
    print("\nRanges over the rounds (min-max):")
    for kind, idx in (("read", 0), ("write", 0), ("randread", 1)):
        print("- %s: %s" % (kind, "; ".join("%s %d-%d" % (w, min(r[kind][idx] for r in runs[w]),
                                                         max(r[kind][idx] for r in runs[w]))
                                          for w in ("host", "lodge", "qemu"))))


if __name__ == "__main__":
    main()
