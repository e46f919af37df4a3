"""A throwaway PostgreSQL server for tests and benchmarks, from Debian's ``postgresql`` package.

    with PostgresServer() as server:
        url = server.create_database("afz")  # postgresql+psycopg2://grader@/afz?host=<folder>
        ...                                  # with server.env() (PGPASSFILE) in the environment

The server is real and private: ``initdb`` into a temporary folder under /tmp, a Unix socket
in that folder and no TCP at all (``listen_addresses = ''``), password authentication
(scram-sha-256) for every connection. ``admin`` is its superuser; ``grader``, an ordinary
role, owns each database made by ``create_database``, as the guide tells an instructor to set
it up. The URLs carry no password: libpq finds it in the file named by ``PGPASSFILE``
(``env()``), as it would in an instructor's ``~/.pgpass``. Durability is traded for speed
(``fsync = off``): a test server never outlives its test.

Who runs it: ``initdb`` and ``postgres`` refuse to run as root. As root, both run as
Debian's ``postgres`` system user, which the package creates and which owns the folder
(``setpriv``, which execs the program: the server is this process's own child, so it is
reaped here and leaves no zombie, as it would when started by ``pg_ctl``); root still reaches
the socket. As anyone else, they run as that user. ``stop`` asks for a fast shutdown
(SIGINT), waits, SIGKILLs whatever is left of the server's processes, and removes the
folder.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from glob import glob
from pathlib import Path

import psutil

DEBIAN_BIN = "/usr/lib/postgresql/*/bin"
ADMIN = "admin"
GRADER = "grader"
SETTINGS = """
listen_addresses = ''
unix_socket_directories = '{socket_dir}'
fsync = off
synchronous_commit = off
full_page_writes = off
"""


class PostgresUnavailable(RuntimeError):
    """PostgreSQL's server programs are not installed here."""


def server_bin() -> Path:
    """The folder of ``initdb``, ``pg_ctl`` and ``postgres``: Debian's newest version, else
    the one on PATH."""
    found = sorted(glob(f"{DEBIAN_BIN}/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).resolve().parent
    raise PostgresUnavailable(
        "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb, no initdb on PATH); "
        "install it with `make postgres-deps` (as root: apt-get install -y postgresql)"
    )


def _as_root() -> bool:
    return os.geteuid() == 0


class PostgresServer:
    """One PostgreSQL server in a temporary folder; ``start`` it (or use ``with``), ``stop`` it."""

    def __init__(self) -> None:
        self.bin = server_bin()
        self.folder = Path()
        self.server: subprocess.Popen[bytes] | None = None
        self.grader_password = secrets.token_hex(12)
        self._admin_password = secrets.token_hex(12)

    # ----------------------------------------------------------------------------------
    # start and stop
    # ----------------------------------------------------------------------------------
    def _command(self, program: str, *args: str) -> list[str]:
        """A server program's command line, as the user that owns the server."""
        cmd = [str(self.bin / program), *args]
        if _as_root():
            return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", *cmd]
        return cmd

    def start(self, timeout: float = 60) -> PostgresServer:
        """initdb, settings, the server started and ready, and the ``grader`` role."""
        # Under /tmp, not pytest's tmp_path: a socket path must stay under 108 bytes, and the
        # postgres user must be able to enter the folder (pytest's are root's alone).
        self.folder = Path(tempfile.mkdtemp(prefix="afz-pg-"))
        pwfile = self.folder / "admin_password"
        pwfile.write_text(self._admin_password + "\n")
        if _as_root():
            shutil.chown(self.folder, "postgres", "postgres")
            shutil.chown(pwfile, "postgres", "postgres")
        try:
            init = self._command(
                "initdb",
                f"--pgdata={self.data}",
                f"--username={ADMIN}",
                f"--pwfile={pwfile}",
                "--auth=scram-sha-256",
                "--encoding=UTF8",
                "--no-locale",
                "--no-sync",
            )
            done = subprocess.run(init, cwd=self.folder, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(init)} failed:\n{done.stdout}{done.stderr}")
            pwfile.unlink()
            with (self.data / "postgresql.conf").open("a") as conf:
                conf.write(SETTINGS.format(socket_dir=self.folder))
            with (self.folder / "server.log").open("ab") as log:
                self.server = subprocess.Popen(
                    self._command("postgres", "-D", str(self.data)),
                    cwd=self.folder,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            self._wait_ready(timeout)
            self.admin_sql(f"CREATE ROLE {GRADER} LOGIN PASSWORD '{self.grader_password}'")
            self._write_pgpass()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self, timeout: float) -> None:
        import psycopg2

        deadline = time.monotonic() + timeout
        while True:
            if self.server is not None and self.server.poll() is not None:
                raise RuntimeError(f"postgres exited at start:\n{self.log()}")
            try:
                self.admin_sql("SELECT 1")
                return
            except psycopg2.OperationalError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"postgres not ready after {timeout} s:\n{self.log()}"
                    ) from None
                time.sleep(0.05)

    def log(self) -> str:
        """The end of the server's log."""
        path = self.folder / "server.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def stop(self) -> None:
        """Fast shutdown (SIGINT: clients disconnected, then a clean stop), then SIGKILL to
        whatever is left of the server; the folder removed."""
        if self.server is not None:
            left = self.processes()
            if self.server.poll() is None:
                self.server.send_signal(signal.SIGINT)
                try:
                    self.server.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.server.kill()
                    self.server.wait()
            for proc in left:  # children outliving the postmaster (none, normally)
                try:
                    proc.kill()
                except psutil.NoSuchProcess:
                    pass
            psutil.wait_procs(left, timeout=10)
        if self.folder.name:
            shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = Path()

    def processes(self) -> list[psutil.Process]:
        """The server's processes still alive: the postmaster and its children."""
        if self.server is None or self.server.poll() is not None:
            return []
        try:
            main = psutil.Process(self.server.pid)
            return [main, *main.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----------------------------------------------------------------------------------
    # databases and URLs
    # ----------------------------------------------------------------------------------
    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def socket_dir(self) -> Path:
        return self.folder

    @property
    def socket(self) -> Path:
        """The server's Unix socket (the default port's name)."""
        return self.folder / ".s.PGSQL.5432"

    def url(self, database: str, password: str | None = None, user: str = GRADER) -> str:
        """The SQLAlchemy URL of ``database`` over the Unix socket (psycopg2; a password
        only if given, else libpq reads it from ``PGPASSFILE``)."""
        secret = f":{password}" if password else ""
        return f"postgresql+psycopg2://{user}{secret}@/{database}?host={self.socket_dir}"

    def env(self) -> dict[str, str]:
        """What a process needs in its environment to log in as ``grader`` with ``url``."""
        return {"PGPASSFILE": str(self.folder / "pgpass")}

    def _write_pgpass(self) -> None:
        path = self.folder / "pgpass"
        path.write_text(f"*:*:*:{GRADER}:{self.grader_password}\n")
        path.chmod(0o600)  # libpq ignores a password file that others may read

    def admin_sql(self, statement: str, database: str = "postgres") -> list[tuple]:
        """Run one statement as the superuser (outside a transaction); its rows, if any."""
        import psycopg2

        conn = psycopg2.connect(
            host=str(self.socket_dir), dbname=database, user=ADMIN, password=self._admin_password
        )
        try:
            conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute(statement)
                return cur.fetchall() if cur.description else []
        finally:
            conn.close()

    def create_database(self, name: str) -> str:
        """A new database owned by ``grader`` (so nbgrader may create its tables); its URL."""
        self.admin_sql(f"CREATE DATABASE {name} OWNER {GRADER}")
        return self.url(name)

    def tables(self, database: str) -> set[str]:
        """The tables of ``database`` (nbgrader's, once a gradebook was opened there)."""
        rows = self.admin_sql(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'", database
        )
        return {r[0] for r in rows}
