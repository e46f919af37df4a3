"""A seccomp filter for the grading sandbox: the system calls a notebook never needs fail.

bubblewrap loads it (``--seccomp FD``) just before it runs the kernel. Denied with ``EPERM``:
new namespaces (``unshare``, ``setns``, ``clone`` with any ``CLONE_NEW*`` flag; so no user
namespace, where a process would be root with every capability), ``mount`` and the new mount
API, ``ptrace`` and ``process_vm_readv``/``writev``, ``bpf``, ``perf_event_open``, the kernel
keyring, kernel modules, ``kexec``, ``userfaultfd``, ``chroot``/``pivot_root``, file handles
(``open_by_handle_at``) and the x32 ABI. ``clone3`` answers ``ENOSYS`` (its flags sit in memory
that a filter cannot read), and the C library then uses ``clone``, whose flags it can.

The program is classic BPF, written here without libseccomp; it is built for x86-64, and on
another architecture :func:`program` returns ``None`` (the sandbox runs without the filter).
"""

from __future__ import annotations

import errno
import platform
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
X32_BIT = 0x40000000
# x86-64 system call numbers
DENIED = {
    "ptrace": 101,
    "acct": 163,
    "pivot_root": 155,
    "chroot": 161,
    "mount": 165,
    "umount2": 166,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "init_module": 175,
    "delete_module": 176,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "unshare": 272,
    "perf_event_open": 298,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "finit_module": 313,
    "kexec_file_load": 320,
    "bpf": 321,
    "userfaultfd": 323,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
}
CLONE, CLONE3 = 56, 435
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
CLONE_NEW_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000
CLONE_NEW_FLAGS |= 0x20000000 | 0x40000000

# classic BPF
LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
RET_K = 0x06  # BPF_RET | BPF_K
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_KILL_PROCESS = 0x80000000
# struct seccomp_data: nr (u32), arch (u32), instruction_pointer (u64), args[6] (u64)
OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0_LOW = 0, 4, 16


def _op(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def program() -> bytes | None:
    """The filter as bytes for ``bwrap --seccomp``, or ``None`` off x86-64."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    deny = SECCOMP_RET_ERRNO | errno.EPERM
    ops = [
        _op(LD_W_ABS, 0, 0, OFFSET_ARCH),
        _op(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        _op(RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),  # another ABI (i386): nothing of ours
        _op(LD_W_ABS, 0, 0, OFFSET_NR),
        _op(JGE_K, 0, 1, X32_BIT),
        _op(RET_K, 0, 0, deny),  # the x32 ABI
    ]
    for nr in sorted(DENIED.values()):
        ops += [_op(JEQ_K, 0, 1, nr), _op(RET_K, 0, 0, deny)]
    ops += [_op(JEQ_K, 0, 1, CLONE3), _op(RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.ENOSYS)]
    ops += [
        _op(JEQ_K, 0, 3, CLONE),
        _op(LD_W_ABS, 0, 0, OFFSET_ARG0_LOW),  # clone's flags (the low 32 bits)
        _op(JSET_K, 0, 1, CLONE_NEW_FLAGS),
        _op(RET_K, 0, 0, deny),
        _op(RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ]
    return b"".join(ops)
