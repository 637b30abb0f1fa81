"""What else on this node changes an MPS measurement: other users' MPS processes, and containers.

Other users. The MPS control daemon runs one server per user at a time: when a
client of another user than the running server's asks for a server, the daemon
tells that server to exit once its clients are done and makes the new client
wait until then. Two users' MPS jobs therefore take turns, silently, and a job's
timings would include the wait. Before any job the sweep looks for
- MPS servers and control daemons running under another UID: /proc/PID/status
  (Uid, Name, State) and /proc/PID/cmdline of every process. `Name` is cut to
  15 characters ("nvidia-cuda-mps" for the daemon and the server alike), so the
  command line tells them apart where it is readable; with hidepid or in a
  container that does not see the host's processes nothing is found;
- servers that a reachable control daemon lists (`get_server_list`) and their
  clients (`get_client_list PID`) whose UID (from /proc) is not ours.
MPSBENCH_PROC_ROOT replaces /proc for this check (the tests plant processes
there). Only the effective UID is compared (the daemon checks the client's
credentials on its socket).

Containers. MPS works in a container only when the ranks reach the daemon's
pipe directory (CUDA_MPS_PIPE_DIRECTORY, mounted into every container), share
the IPC namespace with the server (--ipc=host) and run under the server's UID;
from inside, the host's daemon and servers are invisible to the checks above.
container_hint() says whether this looks like a container and what to check.
"""
import os
import pwd

from ..inputs import is_decimal
from .. import procs
from .mps_daemon import control, mps_kind

PROC_ROOT_VAR = "MPSBENCH_PROC_ROOT"
MPS_COMM = "nvidia-cuda-mps"  # /proc/PID/status Name: both programs' names cut to 15 characters
CONTAINER_CGROUP_WORDS = ("docker", "kubepods", "containerd", "libpod", "lxc", "crio", "podman")


def proc_root():
    return os.environ.get(PROC_ROOT_VAR) or "/proc"


def _read(root, pid, name):
    try:
        with open(os.path.join(root, str(pid), name), "rb") as f:
            return f.read()
    except OSError:
        return None


def status(root, pid):
    """{'name', 'uid' (effective), 'state'} from ROOT/PID/status, None when unreadable."""
    data = _read(root, pid, "status")
    if data is None:
        return None
    fields = {}
    for line in data.decode(errors="replace").splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    try:
        uids = fields["Uid"].split()
        uid = int(uids[1] if len(uids) > 1 else uids[0])
    except (KeyError, IndexError, ValueError):
        return None
    return {"name": fields.get("Name", ""), "uid": uid, "state": fields.get("State", "?")[:1]}


def user_name(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except (KeyError, OverflowError):
        return None


def mps_processes(root=None):
    """[{pid, kind (daemon, server, or 'daemon or server' when only the cut name is known), uid}] of live MPS
    daemons and servers that ROOT (default: /proc or MPSBENCH_PROC_ROOT) shows."""
    root = root or proc_root()
    try:
        names = os.listdir(root)
    except OSError:
        return []
    found = []
    for name in sorted((n for n in names if n.isdigit()), key=int):
        st = status(root, name)
        if st is None or st["state"] in ("Z", "X"):
            continue
        raw = _read(root, name, "cmdline")
        argv = [a.decode(errors="replace") for a in raw.split(b"\0") if a] if raw else []
        kind = mps_kind(argv) if argv else ("daemon or server" if st["name"] == MPS_COMM else None)
        env = _read(root, name, "environ")
        if kind is not None and not procs.of_another_test(procs.environ_bytes_of(env) if env else None):
            found.append({"pid": int(name), "kind": kind, "uid": st["uid"]})
    return found


def _pids(text):
    return [int(w) for w in text.split() if is_decimal(w)]


def other_mps_users(control_path=None, pipe_dirs=(), root=None, uid=None):
    """What runs MPS here under another effective UID than uid (default: ours): a list of
    {what, pid, uid, user, source[, server_pid]}; what: daemon, server, 'daemon or server', or client (of a
    server that a daemon at one of pipe_dirs lists)."""
    root = root or proc_root()
    uid = os.geteuid() if uid is None else uid
    found, seen = [], set()

    def add(what, pid, owner, source, **extra):
        if owner is None or owner == uid or (what, pid) in seen:
            return
        seen.add((what, pid))
        found.append({"what": what, "pid": pid, "uid": owner, "user": user_name(owner), "source": source, **extra})

    for p in mps_processes(root):
        add(p["kind"], p["pid"], p["uid"], "/proc")
    if control_path:
        for pipe in dict.fromkeys(d for d in pipe_dirs if d):
            rc, out = control(control_path, "get_server_list", pipe, timeout=5.0)
            if rc != 0:
                continue
            for server in _pids(out):
                st = status(root, server)
                add("server", server, st and st["uid"], f"get_server_list at {pipe}")
                rc, out = control(control_path, f"get_client_list {server}", pipe, timeout=5.0)
                for client in _pids(out) if rc == 0 else []:
                    st = status(root, client)
                    add("client", client, st and st["uid"], f"get_client_list {server} at {pipe}",
                        server_pid=server)
    return found


def describe_others(found):
    def one(f):
        who = f"uid {f['uid']}" + (f" ({f['user']})" if f.get("user") else "")
        if f["what"] == "client":
            return f"a client of MPS server pid {f['server_pid']}, pid {f['pid']}, {who}"
        return f"MPS {f['what']} pid {f['pid']}, {who}"
    return "; ".join(one(f) for f in found)


OTHER_USERS_EFFECT = ("the MPS control daemon makes a client of a different user wait until the other user's server "
                      "has no clients left, which silently serialises the two users' jobs, so the timings would "
                      "include that wait")


def container_hint(root="/", proc=None):
    """Why this looks like a container (a short reason), or None: /.dockerenv, /run/.containerenv, the
    `container` variable (podman, systemd-nspawn) or a container runtime in /proc/1/cgroup."""
    for marker in (".dockerenv", os.path.join("run", ".containerenv")):
        if os.path.exists(os.path.join(root, marker)):
            return "/" + marker
    if os.environ.get("container"):
        return f"container={os.environ['container']}"
    data = _read(proc or proc_root(), 1, "cgroup")
    text = data.decode(errors="replace") if data else ""
    for word in CONTAINER_CGROUP_WORDS:
        if word in text:
            return f"/proc/1/cgroup names {word}"
    return None


def container_line(reason):
    return (f"note: this looks like a container ({reason}): MPS needs the daemon's CUDA_MPS_PIPE_DIRECTORY mounted "
            "into every container of the job, --ipc=host and the same UID as the MPS server; the sweep's own daemon "
            "runs here, and a daemon or server outside this container is invisible to its checks "
            "(harness/sweep/README.md, MPS in containers)")
