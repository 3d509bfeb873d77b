"""The sandbox's seccomp filter: no kernel keyrings, and no switching off perf counters.

The kernel's keyrings are not a file, a process or a socket, and no namespace bubblewrap
makes covers them: a process inherits its session keyring across every ``bwrap``, and the
user keyring of its uid (``_uid.N``, and ``_uid_ses.N``) grants that uid read, write and
link by serial number, from any user namespace that maps the same uid. A build or a run
could read the keys of the runner's user, or leave a key there that a later job (another
pull request's) reads: state that outlives the job. Joining a fresh session keyring
closes the first path only.

So the sandbox has no keyrings at all: this filter makes ``add_key``, ``request_key`` and
``keyctl`` fail with ``ENOSYS`` (as on a kernel built without them; Docker's default
profile refuses the same three), for the machine's own system calls and its compatible
ABIs (x32 and i386 on x86_64, 32-bit ARM on aarch64). ``/proc/keys`` and
``/proc/key-users``, which list the keys a process may view, are masked by the sandbox's
mounts. Every other system call is allowed: the filter is a handful of comparisons of the
call's number, whose answer the kernel caches per call (Linux 5.11 and later). What costs
is having a filter at all: every system call goes through the kernel's seccomp path, about
40 ns more on the 2-core VM (getppid 190 ns, 229 ns with this filter, 236 ns with one
that allows everything: ``benchmarks/sandbox_cost.py``). That is inside the timed region,
in both arms alike; /bin/true's few dozen calls do not show in its 0.7 ms.

The same filter refuses ``prctl(PR_TASK_PERF_EVENTS_DISABLE)`` (and its ``ENABLE``):
with it a process switches off the perf counters it opened itself. The counter that
counts a run (``benchbot.sandbox.counting``) is the fork server's, inherited, so the call
does not reach it today; refused all the same, so that no future way of opening the
counter (in the process that becomes the run) lets a run be counted for only what it
let through. Its other options pass; the comparison reads the option's low word, which is
all the kernel reads of it.

``program`` is the classic BPF that ``bwrap --seccomp FD`` reads from a descriptor.
"""

from __future__ import annotations

import errno
import struct
from collections.abc import Mapping, Sequence

# <linux/audit.h>: the ``arch`` field of ``struct seccomp_data``.
AUDIT_ARCHES: Mapping[str, int] = {
    "x86_64": 0xC000003E, "i386": 0x40000003, "aarch64": 0xC00000B7, "arm": 0x40000028,
    "riscv64": 0xC00000F3, "ppc64le": 0xC0000015, "s390x": 0x80000016,
}  # fmt: skip
_X32 = 0x40000000  # __X32_SYSCALL_BIT: x32 calls arrive as x86_64 with this bit set
# add_key, request_key, keyctl: each ABI's numbers (arch/*/syscall*.tbl, asm-generic).
KEYRING_CALLS: Mapping[str, tuple[int, ...]] = {
    "x86_64": (248, 249, 250, _X32 | 248, _X32 | 249, _X32 | 250),
    "i386": (286, 287, 288),
    "aarch64": (217, 218, 219),
    "arm": (309, 310, 311),
    "riscv64": (217, 218, 219),
    "ppc64le": (269, 270, 271),
    "s390x": (278, 279, 280),
}

# prctl: each ABI's number, and where the low word of its first argument (the option,
# which the kernel reads as an int) lies in ``struct seccomp_data`` (args at 16; s390x is
# big-endian).
PRCTL_CALLS: Mapping[str, tuple[int, ...]] = {
    "x86_64": (157, _X32 | 157), "i386": (172,), "aarch64": (167,), "arm": (172,),
    "riscv64": (167,), "ppc64le": (171,), "s390x": (172,),
}  # fmt: skip
_OPTION_AT = {"s390x": 20}  # else 16
# The prctl options that switch off (and on) every perf counter attached to the caller
# (<linux/prctl.h>): refused, so that no process of a run can stop the worker's counter
# over its own work (docs/security.md, "Counts"). They fail with EINVAL, as an option the
# kernel does not know does.
PR_TASK_PERF_EVENTS_DISABLE, PR_TASK_PERF_EVENTS_ENABLE = 31, 32
PRCTL_REFUSED = (PR_TASK_PERF_EVENTS_DISABLE, PR_TASK_PERF_EVENTS_ENABLE)

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_RET_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_RET_ERRNO = 0x00050000  # SECCOMP_RET_ERRNO | errno
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data

# An instruction before its jumps are resolved: (code, jump-if-true label, jump-if-false
# label, k); a label None falls through.
_Line = tuple[int, str | None, str | None, int]


def program(calls: Mapping[str, Sequence[int]] = KEYRING_CALLS,
            prctls: Mapping[str, Sequence[int]] = PRCTL_CALLS,
            options: Sequence[int] = PRCTL_REFUSED) -> bytes:
    """The filter as ``struct sock_filter`` entries: for each ABI in ``calls``, its listed
    system calls fail with ENOSYS, and its ``prctls`` with an option in ``options`` fail
    with EINVAL; everything else (and every other ABI) is allowed."""
    arches = [a for a in calls if a in AUDIT_ARCHES]
    lines: list[_Line] = [(_LD_W_ABS, None, None, _ARCH)]
    labels: dict[str, int] = {}
    lines += [(_JEQ_K, f"arch {a}", None, AUDIT_ARCHES[a]) for a in arches]
    lines.append((_RET_K, None, None, _RET_ALLOW))
    blocks: list[tuple[str, list[_Line]]] = []
    for arch in arches:
        block: list[_Line] = [(_LD_W_ABS, None, None, _NR)]
        block += [(_JEQ_K, "enosys", None, nr) for nr in calls[arch]]
        block += [(_JEQ_K, f"prctl {arch}", None, nr) for nr in prctls.get(arch, ())]
        block.append((_RET_K, None, None, _RET_ALLOW))
        blocks.append((f"arch {arch}", block))
        if prctls.get(arch):
            option: list[_Line] = [(_LD_W_ABS, None, None, _OPTION_AT.get(arch, 16))]
            option += [(_JEQ_K, "einval", None, value) for value in options]
            option.append((_RET_K, None, None, _RET_ALLOW))
            blocks.append((f"prctl {arch}", option))
    blocks.append(("enosys", [(_RET_K, None, None, _RET_ERRNO | errno.ENOSYS)]))
    blocks.append(("einval", [(_RET_K, None, None, _RET_ERRNO | errno.EINVAL)]))
    for label, block in blocks:
        labels[label] = len(lines)
        lines += block
    out = []
    for at, (code, true, false, k) in enumerate(lines):
        # BPF's jumps count from the instruction after the jump, forwards only.
        jt = labels[true] - at - 1 if true else 0
        jf = labels[false] - at - 1 if false else 0
        if not (0 <= jt <= 255 and 0 <= jf <= 255):  # pragma: no cover - a far larger table
            raise ValueError("the filter's jumps do not fit in 8 bits")
        out.append(struct.pack("=HBBI", code, jt, jf, k))
    return b"".join(out)
