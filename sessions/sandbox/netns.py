"""One loopback network for the commands of a session that runs background jobs.

Without ``[sandbox] network = true`` every confined command gets a network namespace of its own (``--unshare-net``):
only a loopback, and nobody else's. A dev server started as a background job would then listen on a loopback that no
later command can reach. Once a session starts its first job, an *anchor* holds one network namespace (``unshare
--net``, its loopback up, then ``sleep infinity``, dying with Reasonix), and every later confined command of that
session, jobs and ordinary ``bash`` calls alike, joins it with ``nsenter`` instead of making its own. The anchor
lives until the session closes, not until its last job ends: a command that holds the prefix would otherwise find
no namespace to enter (``nsenter: cannot open /proc/PID/ns/net``). It is still
only a loopback: no route out, no host socket. A session that never starts a job never makes one, so nothing changes
for it. Where the anchor cannot be made (no ``nsenter``, the kernel refuses), commands keep their own networks and
:attr:`SharedNetwork.problem` says why.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys

from sessions.sandbox.reaper import armed

START_TIMEOUT_S = 5.0
_LOOPBACK_UP = (
    "import fcntl, os, socket, struct\n"
    "s = socket.socket()\n"
    "fcntl.ioctl(s, 0x8914, struct.pack('16sH', b'lo', 0x1 | 0x40))\n"  # SIOCSIFFLAGS: IFF_UP | IFF_RUNNING
    "print('up', flush=True)\n"
    "os.execvp('sleep', ['sleep', 'infinity'])\n"
)


class SharedNetwork:
    """The anchor of one session's loopback network; :meth:`join` is the argv prefix that enters it."""

    def __init__(self) -> None:
        self._popen: subprocess.Popen[bytes] | None = None
        self._child: int | None = None
        self.problem: str | None = None

    @property
    def running(self) -> bool:
        return self._popen is not None and self._popen.poll() is None

    def join(self) -> tuple[str, ...] | None:
        """The prefix (``nsenter …``) that runs a command in the shared network, starting the anchor on first use;
        None when there is none (then the command keeps a network of its own)."""
        if self.problem is not None:
            return None
        if not self.running:
            self._start()
        if self._child is None:
            return None
        nsenter = shutil.which("nsenter")
        assert nsenter is not None  # checked by _start
        target = ("--target", str(self._child))
        if os.geteuid() == 0:
            return (nsenter, *target, "--net", "--")
        # Unprivileged, the network belongs to the anchor's user namespace: enter that first, keeping our identity.
        return (nsenter, *target, "--user", "--net", "--preserve-credentials", "--")

    def _start(self) -> None:
        unshare = shutil.which("unshare")
        if shutil.which("nsenter") is None or unshare is None:
            self.problem = "nsenter or unshare is not installed (util-linux)"
            return
        # A network namespace of its own (with a user namespace of its own when unprivileged, mapping us to
        # ourselves), its loopback brought up, then `sleep` holds it. bubblewrap is not used for the anchor: an
        # unprivileged bubblewrap moves its child into a nested user namespace that cannot enter the network.
        argv = [unshare, "--net", *([] if os.geteuid() == 0 else ["--map-current-user", "--keep-caps"]), "--"]
        argv += [sys.executable, "-I", "-S", "-c", _LOOPBACK_UP]
        try:
            # On the trio thread, like every confined command (spawn.py): the death signal follows this thread.
            start = armed(argv)
            self._popen = subprocess.Popen(
                start.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=start.preexec_fn,
            )
        except OSError as exc:
            self.problem = f"the network anchor cannot start: {exc.strerror or exc}"
            return
        stdout = self._popen.stdout
        assert stdout is not None
        ready, _, _ = select.select([stdout], [], [], START_TIMEOUT_S)
        if not ready or stdout.readline().strip() != b"up":
            self.close()
            self.problem = "the network anchor did not start (the kernel refused a network namespace)"
            return
        self._child = self._popen.pid

    def close(self) -> None:
        """Stop the anchor (its namespace goes when the last command in it ends)."""
        popen, self._popen, self._child = self._popen, None, None
        if popen is None:
            return
        # Only while the anchor is not reaped (``running`` polls, and reaps an anchor that ended): its pid, and so
        # its group's id, is then still its own and can name no other process's group.
        if popen.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(popen.pid, signal.SIGKILL)
        # No test can make the marked case: the wait runs out only for a process that outlives SIGKILL by
        # START_TIMEOUT_S (stuck in uninterruptible I/O).
        with contextlib.suppress(subprocess.TimeoutExpired):  # pragma: no mutate (see above)
            popen.wait(timeout=START_TIMEOUT_S)  # pragma: no mutate (see above)
        if popen.stdout is not None:
            popen.stdout.close()
