#!/usr/bin/env python3
"""Register-bank model of the nbody force kernel's hot loop, from its SASS.

Usage: cuobjdump -sass -fun <kernel> nbody.cubin > k.sass; python3 sass_banks.py k.sass

Why: the fp32 force kernel is issue-bound, and the issue cycles it loses track
register-file bank conflicts (results/h100-2026-11-21/nbody-tuning.txt, fifth
and sixth runs). The model follows the two-bank register file reverse-engineered
for recent NVIDIA cores (Huerta et al., "Analyzing Modern NVIDIA GPU cores",
2025): even and odd register numbers, one read per bank per cycle, so an
instruction that needs k reads from one bank takes k issue cycles. A source
operand is free when the operand-reuse cache holds it: an earlier instruction
read the same register in the same operand slot with the .reuse flag, and no
read in between replaced that slot's entry for that bank (ptxas sets .reuse
across intervening instructions that use the other bank, so the cache is kept
per slot and bank). Immediates, constants and uniform registers cost nothing.

The hot loop is the longest backward branch that contains no barrier. The loop
is walked twice so the cache state at its top is the steady state. Prints the
instruction count, the extra read cycles, the issue rate they allow, the mean
stall count of the control codes (cycles before the same warp issues again),
and the extra cycles by opcode (FFMA split into the d2 chain, whose
multiplicands are one register, and the rest).
"""
import collections
import re
import sys

LINE = re.compile(r"\s+/\*([0-9a-f]+)\*/\s+(.*?);\s*/\* (0x[0-9a-f]+) \*/")
CONTROL = re.compile(r"/\* (0x[0-9a-f]+) \*/")
BRANCH = re.compile(r"(?:@!?P\d\s+)?BRA\s+(0x[0-9a-f]+)")
REGISTER = re.compile(r"^-?\|?R(\d+)(\.reuse)?")


def read_sass(path):
    lines = open(path).read().splitlines()
    rows, i = [], 0
    while i < len(lines):
        m = LINE.match(lines[i])
        if m and i + 1 < len(lines) and CONTROL.search(lines[i + 1]):
            rows.append((int(m.group(1), 16), m.group(2).strip(), int(CONTROL.search(lines[i + 1]).group(1), 16)))
            i += 2
        else:
            i += 1
    return rows


def hot_loop(rows):
    barriers = [a for a, text, _ in rows if "BAR.SYNC" in text]
    best = (0, 0, 0)
    for a, text, _ in rows:
        m = BRANCH.match(text)
        if m:
            target = int(m.group(1), 16)
            if target < a and a - target > best[0] and not any(target <= b <= a for b in barriers):
                best = (a - target, target, a)
    return [(text, control) for a, text, control in rows if best[1] <= a <= best[2]]


def source_operands(text):
    body = re.sub(r"^@!?P\d\s+", "", text)
    opcode = body.split()[0]
    args = [x.strip() for x in body[len(opcode):].split(",")]
    sources = args if opcode.startswith(("ST", "BAR", "BRA", "ISETP")) else args[1:]
    found = []
    for slot, arg in enumerate(sources):
        m = REGISTER.match(arg)
        if m:
            found.append((slot, int(m.group(1)), bool(m.group(2))))
    kind = opcode
    if opcode == "FFMA":
        regs = [re.sub(r"[-|]|\.reuse", "", a) for a in sources[:2]]
        kind = "FFMA d2" if regs[0] == regs[1] else "FFMA other"
    return kind, found


def model(loop):
    cache, extra_by_kind, counts = {}, collections.Counter(), collections.Counter()
    for walk in range(2):
        extra_by_kind.clear()
        counts.clear()
        for text, _ in loop:
            kind, operands = source_operands(text)
            reads = {r for slot, r, _ in operands if cache.get((slot, r % 2)) != r}
            per_bank = [sum(1 for r in reads if r % 2 == bank) for bank in (0, 1)]
            extra_by_kind[kind] += max(1, max(per_bank)) - 1
            counts[kind] += 1
            for slot, r, reuse in operands:
                if reuse:
                    cache[(slot, r % 2)] = r
                else:
                    cache.pop((slot, r % 2), None)
    return extra_by_kind, counts


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: sass_banks.py KERNEL.sass (cuobjdump -sass of one kernel)")
    loop = hot_loop(read_sass(sys.argv[1]))
    if not loop:
        sys.exit(f"sass_banks.py: no loop without a barrier found in {sys.argv[1]}")
    extra, counts = model(loop)
    total = sum(extra.values())
    stall = sum((control >> 41) & 0xF for _, control in loop) / len(loop)
    print(f"{len(loop)} instructions, {total} extra read cycles, issue <= {len(loop) / (len(loop) + total):.3f}, "
          f"mean stall count {stall:.3f}")
    for kind, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {kind:14} {n:5} instructions, {extra[kind]:4} extra cycles")


if __name__ == "__main__":
    main()
