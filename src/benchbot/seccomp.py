"""The sandbox's seccomp filter: no kernel keyrings.

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

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_RET_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_RET_ERRNO = 0x00050000  # SECCOMP_RET_ERRNO | errno
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data


def program(calls: Mapping[str, Sequence[int]] = KEYRING_CALLS) -> bytes:
    """The filter as ``struct sock_filter`` entries: for each ABI in ``calls``, its listed
    system calls fail with ENOSYS; everything else (and every other ABI) is allowed."""
    arches = [a for a in calls if a in AUDIT_ARCHES]
    # The layout: the arch test, one jump per ABI; "allow"; then per ABI its block of
    # number tests, each ending in "allow"; "deny" last. Offsets are counted from the
    # instruction after the jump (BPF's rule).
    blocks = [len(calls[a]) + 2 for a in arches]  # load, one test each, allow
    head = 1 + len(arches) + 1  # load arch, the jumps, allow
    deny = head + sum(blocks)
    out = [(_LD_W_ABS, 0, 0, _ARCH)]
    start = head
    for i, arch in enumerate(arches):
        out.append((_JEQ_K, start - (1 + i) - 1, 0, AUDIT_ARCHES[arch]))
        start += blocks[i]
    out.append((_RET_K, 0, 0, _RET_ALLOW))
    for arch in arches:
        out.append((_LD_W_ABS, 0, 0, _NR))
        for nr in calls[arch]:
            out.append((_JEQ_K, deny - len(out) - 1, 0, nr))
        out.append((_RET_K, 0, 0, _RET_ALLOW))
    out.append((_RET_K, 0, 0, _RET_ERRNO | errno.ENOSYS))
    if any(jt > 255 for _, jt, _, _ in out):  # pragma: no cover - a table far larger than ours
        raise ValueError("the filter's jumps do not fit in 8 bits")
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in out)
