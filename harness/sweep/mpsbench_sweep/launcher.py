"""How an MPI job (and the per-node MPS guardians) is started: mpirun, srun or a template.

The environment the ranks need (CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY,
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, CUDA_MPS_PINNED_DEVICE_MEM_LIMIT) is set in the launcher's own environment;
srun exports it to every task, Open MPI needs `-x VAR` for ranks on other
nodes, so the built-in mpirun command adds one per variable that is set.
A template (`--launcher 'mpiexec -n {np} --bind-to none'`) is split like a
shell command line, its {np}, {np_per_node} and {nodes} are filled in, and the
mpsbench command line is appended; it gets the same environment (add -x flags
yourself for remote Open MPI ranks).
"""
import os
import shlex
import shutil
import string
import subprocess

from .text import quoted

# What a user's shell sets up for a program (a virtual environment, conda, environment modules, CUDA), which
# the ranks of a farmed MPI application get from a plain `mpirun` on this node and which Open MPI forwards to
# other nodes only with -x (mpirun --app-launcher: harness/sweep/README.md).
USER_ENV_VARS = ("PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE",
                 "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "MODULEPATH", "LOADEDMODULES", "_LMFILES_",
                 "MODULESHOME", "CUDA_HOME", "CUDA_PATH", "OMP_NUM_THREADS")
MPS_VARS = ("CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
            "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT")
# mpsbench's own jobs: rank r of every job on core r. Open MPI binds more than two ranks to the whole socket
# by default, and at one rank per GPU that left each job's one timed process on whichever vCPU the scheduler
# gave it, for the job's life: on a shared host's vCPUs, of unequal and changing speed, the modes' figures
# then differed by which vCPU each process got, not by the mode (H200 host, 2026-11-29: A/A gains within 3 %
# in 21 and 15 of 28 cells unbound, 22, 24, 28 and 25 bound; docs/measurement.md, Turns). overload-allowed:
# a node with fewer cores than hardware threads still takes one rank per hardware thread. A user's own
# program (--app) keeps the binding its --app-bind asks for.
BIND_TO = "core:overload-allowed"
PLACEHOLDERS = {"np", "np_per_node", "nodes"}
SAMPLE = {"np": 16, "np_per_node": 8, "nodes": 2}  # what a template is filled with once, to check it


class LauncherError(Exception):
    """A launcher that cannot work here (exit status 2)."""


def in_slurm():
    return bool(os.environ.get("SLURM_JOB_ID"))


def _is_root():
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _open_mpi(mpirun):
    try:
        out = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Open MPI" in out or "OpenRTE" in out


def _fields(template):
    """(name, format spec, conversion) of every placeholder of the template's tokens; ValueError for a
    template that does not parse (a lone brace, unbalanced quotes)."""
    return [(name, spec, conversion) for token in shlex.split(template)
            for _, name, spec, conversion in string.Formatter().parse(token) if name is not None]


class Launcher:
    def __init__(self, spec="auto", node_spec="auto"):
        """spec: auto (srun inside a Slurm allocation, else mpirun), mpirun, srun or a template."""
        if spec == "auto":
            spec = "srun" if in_slurm() else "mpirun"
        self.spec = spec
        self.node_spec = node_spec
        self.kind = spec if spec in ("mpirun", "srun") else "template"
        self.program = None
        self.open_mpi = False
        if self.kind == "mpirun":
            self.program = shutil.which("mpirun") or shutil.which("mpiexec")
            if self.program is None:
                raise LauncherError("--launcher mpirun: neither mpirun nor mpiexec is on PATH")
            self.open_mpi = _open_mpi(self.program)
        elif self.kind == "srun":
            self.program = shutil.which("srun")
            if self.program is None:
                raise LauncherError("--launcher srun: srun is not on PATH")
            if not in_slurm():
                raise LauncherError("--launcher srun: not inside a Slurm allocation (SLURM_JOB_ID is unset)")
        else:
            self._check_template("--launcher", spec, {"np", "np_per_node"})
        if node_spec != "auto":
            self._check_template("--node-launcher", node_spec, {"nodes"})

    @staticmethod
    def _check_template(flag, template, needs_one_of):
        """Refuses, before anything starts, a template that would fail or give the wrong command when filled:
        it is filled once here with SAMPLE, as job_command and node_command fill it later."""
        try:
            tokens = shlex.split(template)
            fields = _fields(template)
        except ValueError as e:
            raise LauncherError(f"{flag}: cannot parse {quoted(template)}: {e}") from None
        if not tokens:
            raise LauncherError(f"{flag}: empty command")
        names = {name for name, _, _ in fields}
        unknown = names - PLACEHOLDERS
        if unknown:
            raise LauncherError(f"{flag}: unknown placeholder(s) {', '.join('{%s}' % n for n in sorted(unknown))} "
                                f"(known: {{np}}, {{np_per_node}}, {{nodes}})")
        # A format spec or conversion changes the number the launcher gets ({np:x} is hex, {np:.5} fails).
        styled = [(name, spec, conversion) for name, spec, conversion in fields if spec or conversion]
        if styled:
            name, spec, conversion = styled[0]
            shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            raise LauncherError(f"{flag}: {quoted(shown)} in {quoted(template)}: a placeholder takes no format "
                                f"spec or conversion; write {{{name}}}")
        if not names & needs_one_of:
            raise LauncherError(f"{flag}: {quoted(template)} has none of "
                                f"{', '.join('{%s}' % n for n in sorted(needs_one_of))}, so the number of "
                                "processes would not follow the sweep")
        try:
            Launcher._fill(template, **SAMPLE)
        except (ValueError, KeyError, IndexError, AttributeError, TypeError) as e:
            raise LauncherError(f"{flag}: {quoted(template)} cannot be filled in: {e}") from None
        if shutil.which(tokens[0]) is None:
            raise LauncherError(f"{flag}: {quoted(tokens[0])} is not an executable program")

    @staticmethod
    def _fill(template, **values):
        return [token.format(**values) for token in shlex.split(template)]

    def describe(self):
        return self.spec if self.kind == "template" else f"{self.kind} ({self.program})"

    def job_command(self, program_argv, np, nodes, env, export=(), user_env=False):
        """Full command line for np ranks over nodes nodes running program_argv; `export`: more variables of
        env that remote Open MPI ranks need (srun exports everything). user_env (a user's own MPI program):
        the ranks get the user's environment as a plain `mpirun` typed in the user's shell gives it: mpirun
        by the name PATH finds (Open MPI run by its absolute path acts as --prefix and puts its own bin/
        first on the ranks' PATH, so `python3` would no longer be a virtual environment's) and, for other
        nodes, -x for each of USER_ENV_VARS that is set."""
        npn = -(-np // nodes)
        if self.kind == "template":
            return self._fill(self.spec, np=np, np_per_node=npn, nodes=nodes) + program_argv
        if self.kind == "srun":
            return [self.program, f"--nodes={nodes}", f"--ntasks={np}", f"--ntasks-per-node={npn}",
                    "--kill-on-bad-exit=1", "--export=ALL"] + program_argv
        cmd = [self.program]
        if user_env:
            name = os.path.basename(self.program)
            found = shutil.which(name, path=env.get("PATH", os.defpath))
            if found and os.path.realpath(found) == os.path.realpath(self.program):
                cmd = [name]
            elif self.open_mpi:
                cmd.append("--noprefix")
            export = tuple(export) + (USER_ENV_VARS if self.open_mpi else ())
        if self.open_mpi:
            if _is_root():
                cmd.append("--allow-run-as-root")
            if npn > (os.cpu_count() or 1):
                cmd.append("--oversubscribe")
        cmd += ["-np", str(np)]
        if self.open_mpi:
            if nodes > 1:
                cmd += ["--map-by", f"ppr:{npn}:node"]
            if not user_env and npn <= (os.cpu_count() or 1):
                cmd += ["--bind-to", BIND_TO]
            for var in MPS_VARS + tuple(export):
                if var in env:
                    cmd += ["-x", var]
        return cmd + program_argv

    def runs_here(self, nodes):
        """Whether node_command runs its helper directly on this node (no launcher in between)."""
        return nodes == 1 and self.node_spec == "auto" and self.kind != "srun"

    def node_command(self, helper_argv, nodes, pythonpath=True):
        """Command that runs helper_argv once on each of nodes nodes, its stdin reaching every copy
        (pythonpath: Open MPI exports PYTHONPATH, which a `python3 -m` helper needs to find our packages).

        srun is used even for one node: under salloc the sweep may run on a login node,
        and the daemon belongs on the node the ranks run on."""
        if self.runs_here(nodes):
            return helper_argv
        if self.node_spec != "auto":
            return self._fill(self.node_spec, nodes=nodes) + helper_argv
        if self.kind == "srun":
            # --overlap: the daemon step must not keep the job's CPUs and GPUs from the mpsbench steps;
            # it stays alive for the whole MPS phase because Slurm kills what a finished step leaves behind.
            return [self.program, f"--nodes={nodes}", f"--ntasks={nodes}", "--ntasks-per-node=1", "--overlap",
                    "--input=all", "--kill-on-bad-exit=0", "--export=ALL"] + helper_argv
        if self.kind == "mpirun" and self.open_mpi:
            cmd = [self.program] + (["--allow-run-as-root"] if _is_root() else [])
            return (cmd + ["-np", str(nodes), "--map-by", "ppr:1:node", "--stdin", "all"]
                    + (["-x", "PYTHONPATH"] if pythonpath else []) + helper_argv)
        raise LauncherError(f"--nodes {nodes} with MPS modes: pass --node-launcher TEMPLATE (with {{nodes}}) that runs "
                            "one copy of a command per node and gives every copy its standard input")

