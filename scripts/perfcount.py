"""Hardware counters of the calling thread (perf_event_open through ctypes),
for benchmarks that need a cost measure immune to noisy neighbours:
instructions retired do not depend on what else the machine runs, wall time
does. Linux x86_64 only; `open_counters()` returns None where the machine
has no PMU (many VMs) or perf_event_paranoid forbids it.

    c = open_counters()          # in the thread to measure
    before = c.read(); ...; after = c.read()
    {k: after[k] - before[k] for k in after}
"""
import ctypes
import os
import struct

SYS_PERF_EVENT_OPEN = 298  # x86_64
PERF_TYPE_HARDWARE = 0
HW = {"cycles": 0, "instructions": 1}
EXCLUDE_USER, EXCLUDE_KERNEL, EXCLUDE_HV = 1 << 4, 1 << 5, 1 << 6
ATTR_SIZE = 64  # PERF_ATTR_SIZE_VER0: every kernel takes it


def attr(config, flags):
    """A perf_event_attr (VER0) counting hardware event config."""
    return struct.pack("IIQQQQQIIQ", PERF_TYPE_HARDWARE, ATTR_SIZE, config, 0, 0, 0, flags, 0, 0, 0)


class Counters:
    def __init__(self, fds):
        self.fds = fds

    def read(self):
        return {name: struct.unpack("Q", os.read(fd, 8))[0] for name, fd in self.fds.items()}

    def close(self):
        for fd in self.fds.values():
            os.close(fd)


def open_counters():
    """Counters for the calling thread: user and kernel instructions and
    cycles, or the user-mode ones alone when kernel counting is refused;
    None without a PMU."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def one(config, flags):
        buf = ctypes.create_string_buffer(attr(config, flags | EXCLUDE_HV), ATTR_SIZE)
        fd = libc.syscall(SYS_PERF_EVENT_OPEN, buf, 0, -1, -1, 0)  # this thread, any CPU, no group
        return fd if fd >= 0 else None

    fds = {}
    for name, config in HW.items():
        fd = one(config, EXCLUDE_KERNEL)
        if fd is None:
            for f in fds.values():
                os.close(f)
            return None
        fds[name + "_user"] = fd
        fd = one(config, EXCLUDE_USER)
        if fd is not None:
            fds[name + "_kernel"] = fd
    return Counters(fds)
