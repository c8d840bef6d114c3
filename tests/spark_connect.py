"""A Spark Connect server for the tests, started the way docs/engines.md ("Against a cluster")
tells a site to start one for a trial: pyspark's own sbin/start-connect-server.sh (Spark 4 ships
the Connect server's jar in pyspark/jars), a Hive-compatible metastore (Derby) and its warehouse in
a directory of its own, listening on 127.0.0.1 only. `--wait` keeps it in the foreground, in a
process group of its own that `stop` ends; its console and its log4j file stay in its directory,
and are copied to test-artifacts/spark-connect/ when a test that used it failed."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from local_servers import free_port

from flows import RUNTIME_ROOT


def spark_home() -> Path:
    """pyspark's own files (imported here, not at the top: the quick tier collects test_spark.py in
    a venv without the Spark extras)."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "spark-connect"
# the settings docs/engines.md says the server side needs (the client sets what Spark lets a session set)
SERVER_SETTINGS = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.timestampType": "TIMESTAMP_NTZ",
    "spark.sql.ansi.enabled": "false",
    "spark.sql.parser.escapedStringLiterals": "true",
}


class ConnectServer:
    """One Spark Connect server on 127.0.0.1 (`url`), its files under `home`. `start` returns at once
    (the JVM starts while the caller works); `wait_ready` waits for its port."""

    def __init__(self, home: Path, master: str, settings: dict[str, str], java_options: str = "") -> None:
        self.home, self.port = home, free_port()
        self.url = f"sc://127.0.0.1:{self.port}"
        self.console, self.log = home / "connect-server.out", home / "spark.log"
        self.process: subprocess.Popen | None = None
        logging = (
            f"-Dlog4j2.configurationFile={RUNTIME_ROOT / 'spark_conf' / 'log4j2.properties'} "
            f"-Dcluster_reliability.spark_log={self.log} -Dderby.system.home={home}"
        )
        conf = {
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.connect.grpc.port.maxRetries": "0",  # this port or none: the client names it
            "spark.driver.bindAddress": "127.0.0.1",  # the driver's own ports too: loopback only
            "spark.driver.host": "127.0.0.1",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.catalogImplementation": "hive",
            "spark.sql.warehouse.dir": str(home / "spark-warehouse"),
            "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={home / 'metastore_db'};create=true",
            "spark.driver.extraJavaOptions": f"{logging} {java_options}".strip(),
            **SERVER_SETTINGS,
            **settings,
        }
        self.command = [str(spark_home() / "sbin" / "start-connect-server.sh"), "--wait", "--master", master]
        for key, value in conf.items():
            self.command += ["--conf", f"{key}={value}"]

    def start(self) -> ConnectServer:
        self.home.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "SPARK_HOME": str(spark_home()),
            "SPARK_LOG_DIR": str(self.home),  # spark-daemon.sh's files: here, not in the installed package
            "SPARK_PID_DIR": str(self.home),
            "SPARK_LOCAL_IP": "127.0.0.1",
        }
        with open(self.console, "wb") as console:
            self.process = subprocess.Popen(
                self.command, env=env, stdout=console, stderr=subprocess.STDOUT, start_new_session=True
            )
        return self

    def wait_ready(self, timeout: float = 300) -> str:
        """The server's URL once its port accepts connections; an AssertionError with its console's
        last lines if it exits or does not listen within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the Spark Connect server exited ({self.process.returncode}): {self.tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self.url
            except OSError:
                time.sleep(0.5)
        raise AssertionError(f"the Spark Connect server did not listen in {timeout:g} s: {self.tail()}")

    def tail(self, lines: int = 30) -> str:
        text = self.console.read_text(errors="replace") if self.console.exists() else ""
        return "\n".join(text.splitlines()[-lines:]) + f"\n(logs: {self.console}, {self.log})"

    def pids(self) -> list[int]:
        """The live processes of the server's process group (the script and its JVM; zombies not)."""
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:  # gone meanwhile
                continue
            state, _, group = stat[stat.rindex(")") + 2 :].split()[:3]
            if int(group) == self.process.pid and state != "Z":
                found.append(int(pid))
        return found

    def listening(self) -> set[tuple[int, str]]:
        """(port, address) of every TCP socket the server's processes listen on (their socket
        inodes found in /proc/net/tcp and tcp6); an IPv4-mapped IPv6 address as its IPv4 form."""
        inodes = set()
        for pid in self.pids():
            try:
                links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
            except OSError:  # gone meanwhile
                continue
            inodes |= {link[8:-1] for link in links if link.startswith("socket:[")}
        found = set()
        for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
            for row in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
                fields = row.split()
                if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                    address, port = fields[1].split(":")
                    raw = b"".join(bytes.fromhex(address[i : i + 8])[::-1] for i in range(0, len(address), 8))
                    found.add((int(port, 16), socket.inet_ntop(family, raw).removeprefix("::ffff:")))
        return found

    def stop(self, keep_logs: bool = False) -> None:
        """End the server's process group (SIGTERM, then SIGKILL after 60 s: the JVM's shutdown
        hooks close the metastore); with `keep_logs`, its console and log4j file go to
        test-artifacts/spark-connect/."""
        if self.process is not None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                if not self.pids():
                    break
                try:
                    os.killpg(self.process.pid, sig)
                except ProcessLookupError:
                    break
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and self.pids():
                    time.sleep(0.2)
                    self.process.poll()  # reap the script as soon as it exits
            self.process.wait()
        if keep_logs:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            for path in (self.console, self.log):
                if path.exists():
                    shutil.copy2(path, ARTIFACTS / path.name)
