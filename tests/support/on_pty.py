#!/usr/bin/env python3
"""Run a command with its standard error on a pseudo-terminal (200
columns) and its standard output in a file, for the progress line's
shell test:

  on_pty.py OUT ERR COMMAND...   OUT gets stdout, ERR what the terminal
                                 received (the pty turns "\\n" into
                                 "\\r\\n"); prints the wall seconds; exits
                                 with the command's status."""
import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import time

master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 200, 0, 0))
t0 = time.monotonic()
with open(sys.argv[1], "wb") as out:
    p = subprocess.Popen(sys.argv[3:], stdin=subprocess.DEVNULL, stdout=out, stderr=slave)
os.close(slave)
buf = b""
while True:
    try:
        d = os.read(master, 65536)
    except OSError:  # EIO: the last writer closed the terminal
        break
    if not d:
        break
    buf += d
rc = p.wait()
print("%.3f" % (time.monotonic() - t0))
with open(sys.argv[2], "wb") as f:
    f.write(buf)
sys.exit(rc)
