"""The sandbox's seccomp filter, run by a small interpreter of the classic BPF it is
made of: the keyring calls of every ABI listed fail with ENOSYS, a prctl that switches
perf counters off or on fails with EINVAL, every other call (and every other ABI) is
allowed. (The slow tier checks it in bubblewrap:
tests/security/test_keyrings.py and test_enumeration.py.)"""

from __future__ import annotations

import errno
import struct

from benchbot.sandbox import seccomp

ALLOW, ENOSYS, EINVAL = 0x7FFF0000, 0x00050000 | errno.ENOSYS, 0x00050000 | errno.EINVAL


def run(program: bytes, arch: int, nr: int, option: int = 0, *, big_endian: bool = False) -> int:
    """What the filter returns for a call ``nr`` of ABI ``arch`` whose first argument is
    ``option`` (the instructions the filter uses: load a word, jump if equal, return)."""
    code = [struct.unpack("=HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    low, high = option & 0xFFFFFFFF, option >> 32
    data = {0: nr, 4: arch, 16: high if big_endian else low, 20: low if big_endian else high}
    acc, pc = 0, 0
    while True:
        op, jt, jf, k = code[pc]
        if op == 0x20:
            acc = data[k]
        elif op == 0x15:
            pc += jt if acc == k else jf
        elif op == 0x06:
            return k
        else:
            raise AssertionError(f"instruction {op:#x} at {pc}")
        pc += 1


def test_every_abi_s_keyring_calls_fail_and_nothing_else_does() -> None:
    program = seccomp.program()
    assert len(program) % 8 == 0 and len(program) // 8 < 4096  # BPF_MAXINSNS
    for name, arch in seccomp.AUDIT_ARCHES.items():
        denied = set(seccomp.KEYRING_CALLS[name])
        prctls = set(seccomp.PRCTL_CALLS[name])
        for nr in range(0, 1024):
            if nr in prctls:
                continue  # its options: the next test
            assert run(program, arch, nr) == (ENOSYS if nr in denied else ALLOW), (name, nr)
            assert run(program, arch, nr | 0x40000000) == (
                ENOSYS if nr | 0x40000000 in denied else ALLOW), (name, "x32", nr)


def test_x86_64_denies_x32_and_i386_as_well() -> None:
    program = seccomp.program()
    x86_64, i386 = seccomp.AUDIT_ARCHES["x86_64"], seccomp.AUDIT_ARCHES["i386"]
    assert [run(program, x86_64, nr) for nr in (248, 249, 250)] == [ENOSYS] * 3
    assert [run(program, x86_64, 0x40000000 | nr) for nr in (248, 249, 250)] == [ENOSYS] * 3
    assert [run(program, i386, nr) for nr in (286, 287, 288)] == [ENOSYS] * 3
    assert run(program, i386, 250) == ALLOW  # i386's 250 is fadvise64, not keyctl


def test_an_abi_not_listed_is_left_alone() -> None:
    assert run(seccomp.program(), 0xDEADBEEF, 250) == ALLOW


def test_every_abi_s_prctl_refuses_switching_perf_counters_and_nothing_else() -> None:
    program = seccomp.program()
    for name, arch in seccomp.AUDIT_ARCHES.items():
        big = name == "s390x"
        for nr in seccomp.PRCTL_CALLS[name]:
            for option in range(0, 80):
                # The kernel reads the option as an int: a high word changes nothing.
                for value in (option, option | 1 << 32, option | 0xFFFFFFFF << 32):
                    want = EINVAL if option in (31, 32) else ALLOW
                    assert run(program, arch, nr, value, big_endian=big) == want, (
                        name, nr, hex(value))
        # The same numbers on another call, and prctl's number on another ABI: allowed.
        assert run(program, arch, 1, 31, big_endian=big) == ALLOW
    assert run(program, seccomp.AUDIT_ARCHES["x86_64"], 172, 31) == ALLOW  # i386's prctl
