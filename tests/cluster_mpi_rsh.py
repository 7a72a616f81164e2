#!/usr/bin/python3
"""cluster_mpi_rsh.py - the ssh of tests/e2e_cluster_mpi.sh's cluster of
network namespaces, for a user who cannot enter a namespace himself.

  cluster_mpi_rsh.py serve SOCKET PREFIX [--env NAME=VALUE]... ADDR=NODE...
  cluster_mpi_rsh.py agent SOCKET [-OPTION]... ADDR COMMAND...

serve (root): listens on the Unix socket SOCKET (anyone may connect) and
runs each command it is asked for as the user who asked (SO_PEERCRED:
uid, gid and that user's groups) on the node whose address it names: in
network namespace PREFIX-NODE, in a UTS namespace of its own whose host
name is PREFIX-NODE, with a login's environment (PATH, HOME, USER,
LOGNAME, SHELL) and the --env variables ("{node}" in a VALUE becomes
NODE), through /bin/sh -c as ssh does. The command's stdin, stdout and
stderr are the asker's own (passed with SCM_RIGHTS); its exit status goes
back to the asker when it ends (128+N for signal N); the asker gone (its
end of the connection closed), the command's process group is killed.
Runs until killed.

agent (the user, run by Open MPI's plm_rsh_agent or MPICH hydra's
-launcher-exec in place of ssh): options before ADDR (hydra's -x) are
ignored, COMMAND's words are joined with spaces as ssh joins them; exits
with the command's status, or 255 when it could not be run.
"""
import json
import os
import pwd
import signal
import socket
import struct
import subprocess
import sys
import threading

MAX_REQUEST = 1 << 20


def read_line(conn, first=b""):
    """The request line (bytes up to the newline, which is dropped)."""
    buf = first
    while b"\n" not in buf:
        if len(buf) > MAX_REQUEST:
            raise ValueError("request too long")
        more = conn.recv(65536)
        if not more:
            raise ValueError("connection closed before the request ended")
        buf += more
    return buf.split(b"\n", 1)[0]


def serve_one(conn, prefix, env_tmpl, nodes):
    fds = []
    try:
        pid, uid, gid = struct.unpack(
            "3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                  struct.calcsize("3i")))
        first, fds, _, _ = socket.recv_fds(conn, 65536, 3)
        if len(fds) != 3:
            raise ValueError("%d descriptors, not 3" % len(fds))
        req = json.loads(read_line(conn, first))
        node = nodes.get(req["host"])
        if node is None:
            os.write(fds[2], b"cluster_mpi_rsh: no node at %s\n"
                     % req["host"].encode())
            conn.sendall(b"255\n")
            return
        user = pwd.getpwuid(uid)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": user.pw_dir,
               "USER": user.pw_name, "LOGNAME": user.pw_name,
               "SHELL": "/bin/sh"}
        for name, value in env_tmpl:
            env[name] = value.replace("{node}", node)
        ns = "%s-%s" % (prefix, node)
        argv = ["ip", "netns", "exec", ns, "unshare", "--uts", "/bin/sh",
                "-c", 'hostname "$0" && exec "$@"', ns,
                "setpriv", "--reuid=%d" % uid, "--regid=%d" % gid,
                "--init-groups", "--", "env", "-i"]
        argv += ["%s=%s" % kv for kv in env.items()]
        argv += ["/bin/sh", "-c", req["command"]]
        proc = subprocess.Popen(argv, stdin=fds[0], stdout=fds[1],
                                stderr=fds[2], start_new_session=True,
                                cwd="/")
        for fd in fds:
            os.close(fd)
        fds = []

        def asker_gone():
            try:
                while conn.recv(4096):
                    pass
            except OSError:
                pass
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        threading.Thread(target=asker_gone, daemon=True).start()
        rc = proc.wait()
        conn.sendall(b"%d\n" % (128 - rc if rc < 0 else rc))
    except (OSError, ValueError, KeyError) as e:
        sys.stderr.write("cluster_mpi_rsh: %s\n" % e)
    finally:
        for fd in fds:
            os.close(fd)
        conn.close()


def serve(args):
    path, prefix = args[0], args[1]
    env_tmpl, nodes = [], {}
    rest = args[2:]
    while rest:
        a = rest.pop(0)
        if a == "--env":
            name, value = rest.pop(0).split("=", 1)
            env_tmpl.append((name, value))
        else:
            addr, node = a.split("=", 1)
            nodes[addr] = node
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    os.chmod(path, 0o666)
    srv.listen(64)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve_one, daemon=True,
                         args=(conn, prefix, env_tmpl, nodes)).start()


def agent(args):
    path = args[0]
    words = args[1:]
    while words and words[0].startswith("-"):
        words.pop(0)
    if len(words) < 2:
        sys.stderr.write("usage: cluster_mpi_rsh.py agent SOCKET "
                         "[-OPTION]... ADDR COMMAND...\n")
        return 255
    req = json.dumps({"host": words[0], "command": " ".join(words[1:])})
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        socket.send_fds(conn, [req.encode() + b"\n"], [0, 1, 2])
        return int(read_line(conn))
    except (OSError, ValueError) as e:
        sys.stderr.write("cluster_mpi_rsh: %s: %s\n" % (words[0], e))
        return 255


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "serve":
        serve(sys.argv[2:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "agent":
        sys.exit(agent(sys.argv[2:]))
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
