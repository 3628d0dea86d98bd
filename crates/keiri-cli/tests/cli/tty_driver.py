"""Drives a command on a pseudo-terminal, expect-style, for `tests/cli/generate_tty.rs`.

Usage: tty_driver.py SCRIPT_JSON -- COMMAND...
SCRIPT_JSON is a list of [wait_for, send]: wait until `wait_for` has appeared in the output
(after the previous match), then type `send`. After the script, the output is read until the
command exits; the whole transcript (escape sequences removed) is printed, then
`EXIT <code>`. Each wait gives up after 60 s, and so does the wait for the command to exit
(it is killed), so a hung prompt fails the test instead of hanging it.
"""
import json, os, pty, re, select, sys, time

script = json.loads(sys.argv[1])
argv = sys.argv[sys.argv.index("--") + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)

out = b""
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def pump(deadline):
    global out
    r, _, _ = select.select([fd], [], [], max(0.0, min(0.2, deadline - time.time())))
    if not r:
        return True
    try:
        data = os.read(fd, 65536)
    except OSError:
        return False
    if not data:
        return False
    out += data
    return True


seen = 0
for wait_for, send in script:
    deadline = time.time() + 60
    needle = wait_for.encode()
    while True:
        clean = ANSI.sub(b"", out)
        at = clean.find(needle, seen)
        if at >= 0:
            seen = at + len(needle)
            break
        if time.time() > deadline or not pump(deadline):
            print(ANSI.sub(b"", out).decode(errors="replace"))
            print(f"TIMEOUT waiting for {wait_for!r}")
            sys.exit(3)
    os.write(fd, send.encode())

deadline = time.time() + 60
while time.time() < deadline and pump(deadline):
    pass
done, status = os.waitpid(pid, os.WNOHANG)
grace = time.time() + 10  # the output may close a moment before the process exits
while done == 0 and time.time() < grace:
    time.sleep(0.05)
    done, status = os.waitpid(pid, os.WNOHANG)
if done == 0:
    # Still running after the script and a minute more (a question nobody answers): kill it
    # rather than wait for ever, and fail.
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    print(ANSI.sub(b"", out).decode(errors="replace"))
    print("TIMEOUT waiting for the command to exit")
    sys.exit(3)
print(ANSI.sub(b"", out).decode(errors="replace"))
print(f"EXIT {os.waitstatus_to_exitcode(status)}")
