"""Seccomp filters for the grading sandbox: the system calls a notebook never needs fail.

Two filters, stacked (the kernel applies both, and the stricter answer wins):

- ``program``: loaded by bubblewrap (``--seccomp FD``) just before it runs the kernel, for every
  process of the sandbox. Denied with ``EPERM``: new namespaces (``unshare``, ``setns``,
  ``clone`` with any ``CLONE_NEW*`` flag; so no user namespace, where a process would be root
  with every capability), ``mount`` and the new mount API, ``ptrace`` and
  ``process_vm_readv``/``writev``, ``pidfd_getfd``, ``kcmp``, ``bpf``, ``perf_event_open``, the
  kernel keyring, kernel modules, ``kexec``, ``userfaultfd``, ``io_uring`` and the older
  asynchronous I/O calls, ``fanotify``, ``chroot``/``pivot_root``, file handles
  (``open_by_handle_at``), the clocks' setters, the kernel log (``syslog``), quotas, I/O ports
  and the LDT, ``vhangup``, ``memfd_secret``, ``personality`` other than asking for it, and the
  x32 ABI. ``clone3`` answers ``ENOSYS`` (its flags sit in memory that a filter cannot read),
  and the C library then uses ``clone``, whose flags it can.
- ``process_program``: installed by the kernel's own start-up code (``kernel_start_code``),
  after its interpreter has started and before any of the notebook runs: no process of its
  own (``fork``, ``vfork``, ``clone`` without ``CLONE_THREAD``, ``execve``, ``execveat``);
  threads are allowed. A shell command, ``subprocess``, ``os.system`` or ``multiprocessing``
  then fails in its own cell, and no code runs where the grader's reading of the notebook
  cannot see it.

The programs are classic BPF, written here without libseccomp; they are built for Linux on
x86-64, and elsewhere they are ``None`` (the kernel runs without them).
"""

from __future__ import annotations

import errno
import platform
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
X32_BIT = 0x40000000
# x86-64 system call numbers
DENIED = {
    "syslog": 103,
    "ptrace": 101,
    "uselib": 134,
    "vhangup": 153,
    "modify_ldt": 154,
    "pivot_root": 155,
    "_sysctl": 156,
    "adjtimex": 159,
    "chroot": 161,
    "acct": 163,
    "settimeofday": 164,
    "mount": 165,
    "umount2": 166,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "sethostname": 170,
    "setdomainname": 171,
    "iopl": 172,
    "ioperm": 173,
    "init_module": 175,
    "delete_module": 176,
    "quotactl": 179,
    "nfsservctl": 180,
    "io_setup": 206,
    "io_destroy": 207,
    "io_getevents": 208,
    "io_submit": 209,
    "io_cancel": 210,
    "lookup_dcookie": 212,
    "clock_settime": 227,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "unshare": 272,
    "perf_event_open": 298,
    "fanotify_init": 300,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
    "clock_adjtime": 305,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "kcmp": 312,
    "finit_module": 313,
    "kexec_file_load": 320,
    "bpf": 321,
    "userfaultfd": 323,
    "io_pgetevents": 333,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "pidfd_getfd": 438,
    "quotactl_fd": 443,
    "mount_setattr": 442,
    "memfd_secret": 447,
}
CLONE, CLONE3, PERSONALITY = 56, 435, 135
# personality(2) only to ask for the current one, or to set the plain Linux one
PERSONALITY_ALLOWED = (0xFFFFFFFF, 0)
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
CLONE_NEW_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000
CLONE_NEW_FLAGS |= 0x20000000 | 0x40000000
CLONE_THREAD = 0x00010000
PROCESS_CALLS = {"fork": 57, "vfork": 58, "execve": 59, "execveat": 322}

# classic BPF
LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
RET_K = 0x06  # BPF_RET | BPF_K
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_KILL_PROCESS = 0x80000000
DENY = SECCOMP_RET_ERRNO | errno.EPERM
NO_SUCH_CALL = SECCOMP_RET_ERRNO | errno.ENOSYS
# struct seccomp_data: nr (u32), arch (u32), instruction_pointer (u64), args[6] (u64)
OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0_LOW = 0, 4, 16


def _op(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def _x86_64() -> bool:
    """Linux on x86-64: the system call numbers above are its own."""
    return platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64")


def _arch_check() -> list[bytes]:
    """Another ABI (i386) is killed, the x32 ABI denied; then the call's number is loaded."""
    return [
        _op(LD_W_ABS, 0, 0, OFFSET_ARCH),
        _op(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        _op(RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
        _op(LD_W_ABS, 0, 0, OFFSET_NR),
        _op(JGE_K, 0, 1, X32_BIT),
        _op(RET_K, 0, 0, DENY),
    ]


def _deny(numbers: list[int], answer: int = DENY) -> list[bytes]:
    ops = []
    for nr in numbers:
        ops += [_op(JEQ_K, 0, 1, nr), _op(RET_K, 0, 0, answer)]
    return ops


def program() -> bytes | None:
    """The sandbox's filter as bytes for ``bwrap --seccomp``, or ``None`` off x86-64."""
    if not _x86_64():
        return None
    ops = _arch_check() + _deny(sorted(DENIED.values())) + _deny([CLONE3], NO_SUCH_CALL)
    allowed = PERSONALITY_ALLOWED
    ops += [
        _op(JEQ_K, 0, 4, PERSONALITY),
        _op(LD_W_ABS, 0, 0, OFFSET_ARG0_LOW),
        _op(JEQ_K, 2, 0, allowed[0]),
        _op(JEQ_K, 1, 0, allowed[1]),
        _op(RET_K, 0, 0, DENY),
        # (the jumps above land on the clone check, which reloads the number first)
        _op(LD_W_ABS, 0, 0, OFFSET_NR),
        _op(JEQ_K, 0, 3, CLONE),
        _op(LD_W_ABS, 0, 0, OFFSET_ARG0_LOW),  # clone's flags (the low 32 bits)
        _op(JSET_K, 0, 1, CLONE_NEW_FLAGS),
        _op(RET_K, 0, 0, DENY),
        _op(RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ]
    return b"".join(ops)


def process_program() -> bytes | None:
    """The kernel's own filter: no new process, threads allowed; ``None`` off x86-64."""
    if not _x86_64():
        return None
    ops = _arch_check() + _deny(sorted(PROCESS_CALLS.values())) + _deny([CLONE3], NO_SUCH_CALL)
    ops += [
        _op(JEQ_K, 0, 3, CLONE),
        _op(LD_W_ABS, 0, 0, OFFSET_ARG0_LOW),
        _op(JSET_K, 1, 0, CLONE_THREAD),
        _op(RET_K, 0, 0, DENY),
        _op(RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ]
    return b"".join(ops)


NO_PROCESS = (
    "a grading kernel cannot start a process (a shell command, subprocess, os.system, "
    "multiprocessing); threads work. Run such code in your own Jupyter, not in a graded cell"
)
# The grading kernel's command is ``python -c KERNEL_START ARGS``: the filter is installed before
# ipykernel is imported, so every thread the kernel starts inherits it, and nothing of the
# notebook runs without it. The functions that would start a process raise an error that says
# why (``os.system`` would only return a status); the filter is what denies it.
KERNEL_START = """\
import ctypes, errno, os, sys
program = bytes.fromhex({program!r})
if program:
    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    code = ctypes.create_string_buffer(program, len(program))
    filter_ = Program(len(program) // 8, ctypes.addressof(code))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(filter_), 0, 0):
        sys.exit("afz-grader kernel: the process filter could not be installed (errno %d)"
                 % ctypes.get_errno())
def refuse(*args, **kwargs):
    raise PermissionError(errno.EPERM, {message!r})
for name in ("system", "fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve"):
    if hasattr(os, name):
        setattr(os, name, refuse)
import _posixsubprocess
_posixsubprocess.fork_exec = refuse
{then}"""
# The notebook's folder on the path where a learner's own Jupyter has it (IPython's init_path,
# which PYTHONSAFEPATH turns off): before site-packages, after the course's packages (on
# PYTHONPATH), so a module the notebook writes imports as it did for the learner and none
# hides checks or helpers.
LAUNCH_IPYKERNEL = """\
sys.path.insert(next((i for i, p in enumerate(sys.path)
                      if os.path.basename(p) in ("site-packages", "dist-packages")),
                     len(sys.path)), "")
from ipykernel import kernelapp
kernelapp.launch_new_instance()
"""


def kernel_start_code(then: str = LAUNCH_IPYKERNEL) -> str:
    """The grading kernel's start-up code (``python -c``): the process filter, then ``then``
    (ipykernel, as ``python -m ipykernel_launcher`` starts it)."""
    program = process_program() or b""
    return KERNEL_START.format(program=program.hex(), message=NO_PROCESS, then=then)
