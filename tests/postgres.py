"""A real PostgreSQL server for the tests, started from Debian's `postgresql` binaries.

`PostgresServer.start()` runs `initdb` into a fresh temporary directory and `pg_ctl`
on a free loopback port (TCP only, password authentication, fsync off: a test server
never needs to survive a power cut). `tests/conftest.py` holds one per test session
(one per xdist worker); each test that wants a database gets one of its own
(`new_database`), so tests never see each other's rows.

initdb and postgres refuse to run as root: as root (CI's containers) the server's
files and processes belong to an unprivileged user (`nobody`), through `runuser`.

The binaries are found through `$ANOMAN_PG_BIN`, `pg_config --bindir`,
/usr/lib/postgresql/*/bin (Debian keeps them off PATH), then PATH.

A test session killed before its teardown (a timeout, Ctrl+C twice) leaves its server
running: each server's directory names the test process that owns it (`owner.pid`),
and `sweep_orphans` stops and removes those whose owner is gone.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

INSTALL_HINT = ("install Debian's `postgresql` package (`apt-get install postgresql`) or "
                "set ANOMAN_PG_BIN to the directory holding initdb and pg_ctl")
SUPERUSER = "anoman"
PASSWORD = "pg-test-secret-7c1f"
"""The superuser's password: tests check that it never appears in any output."""
_RUN_AS = "nobody"
_PREFIX = "anoman-pg-"


def find_bindir() -> Path | None:
    """The directory holding initdb, pg_ctl and postgres, or None."""
    candidates: list[str] = []
    if os.environ.get("ANOMAN_PG_BIN"):
        candidates.append(os.environ["ANOMAN_PG_BIN"])
    pg_config = shutil.which("pg_config")
    if pg_config:
        # (Debian's pg_config may come from libpq-dev alone, naming a bindir without
        # initdb: checked below like every other candidate.)
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            candidates.append(subprocess.run([pg_config, "--bindir"], capture_output=True,
                                             text=True, timeout=10).stdout.strip())
    # The newest major version first.
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                         key=lambda p: int(Path(p).parent.name)
                         if Path(p).parent.name.isdigit() else 0, reverse=True)
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(str(Path(initdb).parent))
    for candidate in candidates:
        path = Path(candidate)
        if all((path / name).is_file() for name in ("initdb", "pg_ctl", "postgres")):
            return path
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class PostgresServer:
    """One PostgreSQL cluster in a temporary directory, on 127.0.0.1:`port`."""

    bindir: Path
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix=_PREFIX)))
    port: int = 0
    _as_root: bool = field(default=os.geteuid() == 0)

    @property
    def datadir(self) -> Path:
        return self.root / "data"

    @property
    def logfile(self) -> Path:
        return self.root / "server.log"

    def _run(self, *args: str, check: bool = True,
             timeout: float = 120) -> subprocess.CompletedProcess[str]:
        command = [str(a) for a in args]
        if self._as_root:
            command = ["runuser", "-u", _RUN_AS, "--", *command]
        # A clean locale and no PG* variables of the developer's shell.
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.update(LC_ALL="C", LANG="C")
        result = subprocess.run(command, capture_output=True, text=True, env=env,
                                timeout=timeout, cwd=self.root)
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited with {result.returncode}:\n"
                               f"{result.stdout}{result.stderr}{self._log_tail()}")
        return result

    def _log_tail(self) -> str:
        try:
            return "\n--- server log ---\n" + "\n".join(
                self.logfile.read_text(errors="replace").splitlines()[-30:])
        except OSError:
            return ""

    def init(self) -> None:
        (self.root / "owner.pid").write_text(str(os.getpid()))
        if self._as_root:
            user = pwd.getpwnam(_RUN_AS)
            os.chown(self.root, user.pw_uid, user.pw_gid)
        pwfile = self.root / "pwfile"
        pwfile.write_text(PASSWORD + "\n")
        if self._as_root:
            os.chown(pwfile, pwd.getpwnam(_RUN_AS).pw_uid, -1)
        pwfile.chmod(0o600)
        self._run(self.bindir / "initdb", "-D", self.datadir, "-U", SUPERUSER,
                  "--pwfile", pwfile, "--auth=scram-sha-256", "-E", "UTF8",
                  "--locale=C", "--no-sync")
        pwfile.unlink()

    def start(self) -> None:
        """Start the server (again, after `stop`, on the same port) and wait until it
        accepts connections (`pg_ctl -w`)."""
        if not self.datadir.exists():
            self.init()
        attempts = 1 if self.port else 5
        for _ in range(attempts):
            port = self.port or _free_port()
            options = (f"-h 127.0.0.1 -p {port} -k {self.root} -F "
                       "-c synchronous_commit=off -c full_page_writes=off "
                       "-c max_connections=200")
            result = self._run(self.bindir / "pg_ctl", "-D", self.datadir, "-l",
                               self.logfile, "-w", "-t", "60", "-o", options, "start",
                               check=False)
            if result.returncode == 0:
                self.port = port
                return
            if "could not bind" not in self._log_tail():
                break  # not a port another process took first: say why
        raise RuntimeError(f"pg_ctl start failed:\n{result.stdout}{result.stderr}"
                           f"{self._log_tail()}")

    def stop(self, mode: str = "fast") -> None:
        self._run(self.bindir / "pg_ctl", "-D", self.datadir, "-m", mode, "-w", "stop",
                  check=False)

    def running(self) -> bool:
        return self._run(self.bindir / "pg_ctl", "-D", self.datadir, "status",
                         check=False).returncode == 0

    def destroy(self) -> None:
        if self.datadir.exists():
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres", *, password: str | None = PASSWORD,
            user: str = SUPERUSER) -> str:
        auth = user if password is None else f"{user}:{password}"
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{database}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run one statement with psql (as a client, not through the code under test)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["PGPASSWORD"] = PASSWORD
        result = subprocess.run(
            [str(self.bindir / "psql") if (self.bindir / "psql").exists() else "psql",
             "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
             "-p", str(self.port), "-U", SUPERUSER, "-d", database, "-c", sql],
            capture_output=True, text=True, env=env, timeout=60)
        if result.returncode != 0:
            raise RuntimeError(f"psql: {result.stderr.strip()}")
        return result.stdout.strip()

    def new_database(self) -> str:
        """A fresh, empty database; returns its URL (with the password)."""
        name = "t_" + uuid.uuid4().hex[:16]
        self.psql(f"CREATE DATABASE {name}")
        return self.url(name)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_orphans(bindir: Path) -> list[Path]:
    """Stop and remove the servers of test sessions that ended without their teardown
    (their owner process is gone); returns their directories. A live session's server
    is never touched."""
    swept = []
    for root in Path(tempfile.gettempdir()).glob(_PREFIX + "*"):
        try:
            owner = int((root / "owner.pid").read_text())
        except (OSError, ValueError):
            continue  # not one of ours, or still being made
        if _alive(owner):
            continue
        PostgresServer(bindir, root=root).destroy()
        swept.append(root)
    return swept
