"""A small W3C WebDriver client over HTTP (requests) for Debian's chromium and chromium-driver: enough to open a
page, run a script in it and take a screenshot. No selenium or playwright: their browser downloads cannot be
reached here, and the protocol is a handful of JSON requests (https://www.w3.org/TR/webdriver2/)."""

from __future__ import annotations

import base64
import os
import shutil
import socket
import subprocess
import tempfile
import time

import requests

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
DRIVER = ("chromedriver", "chromium-driver")
DEADLINE_S = 60  # every request to the driver; starting the browser is the slow one


def find_browser() -> tuple[str | None, str | None]:
    """(browser, driver) executables, None where missing."""
    browser = next((shutil.which(name) for name in CHROMIUM if shutil.which(name)), None)
    driver = next((shutil.which(name) for name in DRIVER if shutil.which(name)), None)
    return browser, driver


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Browser:
    """One headless chromium session, driven through chromedriver on a loopback port."""

    def __init__(self, browser: str, driver: str, width: int = 1280, height: int = 900):
        self.port = _free_port()
        self.profile = tempfile.mkdtemp(prefix="stackresolve-chromium-")
        self.process = subprocess.Popen([driver, f"--port={self.port}", "--allowed-ips=127.0.0.1"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        self.session = None
        try:
            self._wait_ready()
            args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", f"--window-size={width},{height}", f"--user-data-dir={self.profile}"]
            answer = self._call("POST", "/session", {"capabilities": {"alwaysMatch": {
                "browserName": "chrome", "goog:chromeOptions": {"binary": browser, "args": args}}}})
            self.session = answer["sessionId"]
        except BaseException:
            self.close()
            raise

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{self.base}/status", timeout=2).json()["value"].get("ready"):
                    return
            except (requests.RequestException, ValueError):
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f"chromedriver exited with {self.process.returncode}")
            time.sleep(0.1)
        raise RuntimeError("chromedriver did not become ready within 20 s")

    def _call(self, method: str, path: str, body: dict | None = None):
        reply = requests.request(method, self.base + path, json=body, timeout=DEADLINE_S)
        value = reply.json().get("value")
        if reply.status_code != 200:
            raise RuntimeError(f"WebDriver {method} {path}: {reply.status_code} {value}")
        return value

    def _session(self, method: str, path: str, body: dict | None = None):
        return self._call(method, f"/session/{self.session}{path}", body)

    def open(self, url: str) -> None:
        self._session("POST", "/url", {"url": url})

    def script(self, source: str, *args):
        return self._session("POST", "/execute/sync", {"script": source, "args": list(args)})

    def wait_for(self, source: str, *args, timeout: float = 20):
        """Run `source` until it returns something truthy; that value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.script(source, *args)
            if value or time.monotonic() > deadline:
                return value
            time.sleep(0.05)

    def keys(self, element_css: str, text: str) -> None:
        found = self._session("POST", "/element", {"using": "css selector", "value": element_css})
        element = next(iter(found.values()))
        self._session("POST", f"/element/{element}/value", {"text": text})

    def screenshot(self) -> bytes:
        return base64.b64decode(self._session("GET", "/screenshot"))

    def close(self) -> None:
        try:
            if self.session:
                self._call("DELETE", f"/session/{self.session}")
        except (requests.RequestException, RuntimeError, ValueError):
            pass
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
            shutil.rmtree(self.profile, ignore_errors=True)
